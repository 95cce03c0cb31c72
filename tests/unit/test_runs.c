/* test_runs.c -- runs.json: stageload's form, stagebench's keys, errors */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "traces/runs.h"
#include "fixtures.h"
#include "testutil.h"

static char *tmpdir(void)
{
	return test_tmpdir("runs");
}

#define rm_rf test_rm_rf

/* runs_read with stderr captured into *msg. */
static int read_capturing(const char *path, struct run_list *runs, char **msg)
{
	struct stderr_capture c;
	stderr_capture_begin(&c);
	int rc = runs_read(path, runs);
	*msg = stderr_capture_end(&c);
	return rc;
}

Test(runs, reads_stageloads_runs_json)
{
	char *path = xasprintf("%s/stageload/2026-10-06-qwen-image/runs.json", fixtures_dir());
	struct run_list runs = RUN_LIST_INIT;
	cr_assert_eq(runs_read(path, &runs), 0);
	cr_assert_eq(runs.n, 3);
	cr_assert_str_eq(runs.items[0].mode, "eager");
	cr_assert_eq(runs.items[0].run, 1);
	cr_assert(runs.items[0].has_exit);
	cr_assert_eq(runs.items[0].exit, 3);
	cr_assert_str_eq(runs.items[2].mode, "staged");
	cr_assert_eq(runs.items[2].run, 2);
	cr_assert_eq(runs.items[2].exit, 0);
	cr_assert_null(runs.items[1].trace);
	cr_assert_eq(runs.items[1].stopped_by, STOPPED_NONE);
	cr_assert_eq(runs.items[1].signal, 0);

	const struct run_entry *e = runs_find(&runs, "eager-1.trace.jsonl");
	cr_assert_eq(e, &runs.items[0]);
	cr_assert_eq(runs_find(&runs, "staged-2.trace.jsonl.zst"), &runs.items[2]);
	cr_assert_null(runs_find(&runs, "staged-3.trace.jsonl"));
	cr_assert_null(runs_find(&runs, "eager-1.trace"));
	runs_release(&runs);
	free(path);
}

Test(runs, write_then_read_keeps_every_key)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/runs.json", dir);
	struct run_entry items[] = {
		{ .mode = "eager", .run = 1, .has_exit = true, .exit = 3,
		  .trace = "eager-1.trace.jsonl.zst", .stopped_by = STOPPED_GUARD, .signal = 15 },
		{ .mode = "staged \"q\"", .run = 1, .has_exit = false },
		{ .mode = "staged", .run = 2, .has_exit = true, .exit = 137,
		  .stopped_by = STOPPED_SIGNAL, .signal = 9 },
		{ .mode = "eager", .run = 2, .has_exit = false, .stopped_by = STOPPED_LOST,
		  .why = "the task left no result" },
	};
	struct run_list out = { items, 4, 4 };
	cr_assert_eq(runs_write(path, &out), 0);

	size_t len;
	char *text;
	cr_assert_eq(read_file(path, &text, &len), 0);
	cr_assert(str_starts_with(text, "[\n  {\"mode\": \"eager\", \"run\": 1, \"exit\": 3, "
				       "\"trace\": \"eager-1.trace.jsonl.zst\", \"stopped_by\": "
				       "\"guard\", \"signal\": 15},\n"), "%s", text);
	free(text);

	struct run_list in = RUN_LIST_INIT;
	cr_assert_eq(runs_read(path, &in), 0);
	cr_assert_eq(in.n, 4);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_str_eq(in.items[i].mode, items[i].mode);
		cr_assert_eq(in.items[i].run, items[i].run);
		cr_assert_eq(in.items[i].has_exit, items[i].has_exit);
		cr_assert_eq(in.items[i].exit, items[i].exit);
		cr_assert_eq(in.items[i].signal, items[i].signal);
		if (items[i].trace)
			cr_assert_str_eq(in.items[i].trace, items[i].trace);
		else
			cr_assert_null(in.items[i].trace);
		cr_assert_eq(in.items[i].stopped_by, items[i].stopped_by);
		if (items[i].why)
			cr_assert_str_eq(in.items[i].why, items[i].why);
		else
			cr_assert_null(in.items[i].why);
	}
	/* an entry that names its trace is found by that name only */
	cr_assert_eq(runs_find(&in, "eager-1.trace.jsonl.zst"), &in.items[0]);
	cr_assert_null(runs_find(&in, "eager-1.trace.jsonl"));
	cr_assert_eq(runs_find(&in, "staged-2.trace.jsonl.zst"), &in.items[2]);
	runs_release(&in);
	runs_release(&in); /* released twice: harmless */
	runs_release(NULL);

	/* an empty list is an empty array */
	struct run_list none = RUN_LIST_INIT;
	cr_assert_eq(runs_write(path, &none), 0);
	cr_assert_eq(runs_read(path, &in), 0);
	cr_assert_eq(in.n, 0);
	runs_release(&in);
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(runs, missing_file_is_an_empty_list)
{
	struct run_list runs = RUN_LIST_INIT;
	cr_assert_eq(runs_read("/nonexistent/dir/runs.json", &runs), 1);
	cr_assert_eq(runs.n, 0);
	cr_assert_null(runs.items);
	runs_release(&runs);
}

Test(runs, malformed_files_are_errors_naming_the_file)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "[{\"mode\":\"eager\",\"run\":1,}]", "runs.json:1: malformed JSON" },
		{ "{\"mode\":\"eager\"}", "runs.json: not a JSON array of runs" },
		{ "[{\"run\":1}]", "runs.json: entry 1 has no \"mode\" string" },
		{ "[{\"mode\":\"a\",\"run\":1},{\"mode\":\"b\",\"run\":0}]",
		  "runs.json: entry 2 (mode 'b') has no positive \"run\" number" },
		{ "[{\"mode\":\"a\",\"run\":\"1\"}]", "has no positive \"run\" number" },
		{ "[{\"mode\":\"a\",\"run\":1,\"exit\":\"3\"}]", "entry 1: \"exit\" is not an integer" },
		{ "[{\"mode\":\"a\",\"run\":1,\"trace\":5}]", "entry 1: \"trace\" is not a string" },
		{ "[7]", "entry 1 is not a JSON object" },
		{ "", "runs.json:1: malformed JSON" },
	};
	char *dir = tmpdir();
	char *path = xasprintf("%s/runs.json", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(write_file(path, cases[i].text, strlen(cases[i].text)), 0);
		struct run_list runs = RUN_LIST_INIT;
		char *msg;
		cr_assert_eq(read_capturing(path, &runs, &msg), -1, "case %zu accepted", i);
		cr_assert_not_null(strstr(msg, cases[i].want), "case %zu: %s", i, msg);
		cr_assert_not_null(strstr(msg, path), "case %zu does not name the file: %s", i, msg);
		cr_assert_eq(runs.n, 0);
		cr_assert_null(runs.items);
		free(msg);
		runs_release(&runs);
	}
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(runs, campaign_and_running_round_trip)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/runs.json", dir);
	struct run_entry items[] = {
		{ .mode = "p", .run = 1, .has_exit = true, .exit = 0, .campaign = "0123abcd" },
		{ .mode = "q", .run = 1, .stopped_by = STOPPED_RUNNING, .why = "still recording",
		  .campaign = "0123abcd" },
	};
	struct run_list out = { items, 2, 2 };
	cr_assert_eq(runs_write(path, &out), 0);
	struct run_list in = RUN_LIST_INIT;
	cr_assert_eq(runs_read(path, &in), 0);
	cr_assert_eq(in.n, 2);
	cr_assert_str_eq(in.items[0].campaign, "0123abcd");
	cr_assert_eq(in.items[1].stopped_by, STOPPED_RUNNING);
	struct run_entry copy;
	runs_entry_copy(&copy, &in.items[1]);
	cr_assert_str_eq(copy.campaign, "0123abcd");
	cr_assert_str_eq(copy.why, "still recording");
	cr_assert_neq(copy.why, in.items[1].why);
	runs_release(&in);
	cr_assert_str_eq(copy.mode, "q"); /* a copy of its own */
	struct run_list one = { xmalloc(sizeof(copy)), 1, 1 };
	one.items[0] = copy;
	runs_release(&one);
	rm_rf(dir);
	free(path);
	free(dir);
}
