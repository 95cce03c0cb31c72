/* test_campaign.c -- a distributed compare's campaign: plan.json, entries checked against
 * their names, the running marker */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/util.h"
#include "platform/platform.h"
#include "runner/compare/campaign.h"
#include "traces/runs.h"
#include "testutil.h"

static char *const plan[] = { "p-1", "q-1", "p-2", "q-2" };
static char *const args[] = { "pipeline=demo (bytes 10, fnv1a 0123456789abcdef)", "seed=7",
			      "set size=tiny", NULL };

static int quiet(int (*fn)(const char *, char *const *, size_t, char *const *, char **),
		 const char *out, size_t n, char **id, char **msg)
{
	struct stderr_capture c;
	stderr_capture_begin(&c);
	int rc = fn(out, plan, n, args, id);
	*msg = stderr_capture_end(&c);
	return rc;
}

Test(campaign, start_then_load_then_refuse)
{
	char *dir = test_tmpdir("campaign"), *id = NULL, *id2 = NULL, *msg = NULL;
	cr_assert_eq(campaign_start(dir, plan, 4, args, &id), 0);
	cr_assert_eq(strlen(id), 16);
	cr_assert_eq(campaign_load(dir, plan, 4, args, &id2), 0);
	cr_assert_str_eq(id, id2);
	free(id2);
	/* a second start into the same directory: refused, naming the campaign */
	cr_assert_eq(quiet(campaign_start, dir, 4, &id2, &msg), SB_EXIT_USAGE);
	cr_assert_null(id2);
	cr_assert(strstr(msg, id), "%s", msg);
	free(msg);
	/* another plan: refused */
	cr_assert_eq(quiet(campaign_load, dir, 2, &id2, &msg), SB_EXIT_USAGE);
	cr_assert(strstr(msg, "not the same comparison"), "%s", msg);
	free(msg);
	test_rm_rf(dir);
	free(dir);
	free(id);
}

Test(campaign, a_task_with_other_arguments_is_refused_naming_both_lists)
{
	char *dir = test_tmpdir("campaign"), *id = NULL, *id2 = NULL, *msg = NULL;
	cr_assert_eq(campaign_start(dir, plan, 4, args, &id), 0);
	static char *const seed8[] = { "pipeline=demo (bytes 10, fnv1a 0123456789abcdef)", "seed=8",
				       "set size=tiny", NULL };
	static char *const fewer[] = { "pipeline=demo (bytes 10, fnv1a 0123456789abcdef)", "seed=7",
				       NULL };
	char *const *other[] = { seed8, fewer };
	for (size_t k = 0; k < 2; k++) {
		struct stderr_capture c;
		stderr_capture_begin(&c);
		int rc = campaign_load(dir, plan, 4, other[k], &id2);
		msg = stderr_capture_end(&c);
		cr_assert_eq(rc, SB_EXIT_USAGE, "%s", msg);
		cr_assert_null(id2);
		cr_assert(strstr(msg, "planned:   pipeline=demo (bytes 10, fnv1a 0123456789abcdef), "
				      "seed=7, set size=tiny\n"), "%s", msg);
		cr_assert(strstr(msg, k ? "this task: pipeline=demo (bytes 10, fnv1a "
					  "0123456789abcdef), seed=7\n"
					: "this task: pipeline=demo (bytes 10, fnv1a "
					  "0123456789abcdef), seed=8, set size=tiny\n"), "%s", msg);
		free(msg);
	}
	/* a merge (no arguments to check) takes the campaign */
	cr_assert_eq(campaign_load(dir, plan, 4, NULL, &id2), 0);
	cr_assert_str_eq(id, id2);
	free(id2);
	/* a plan.json without arguments (an earlier stagebench): taken, with a warning */
	char *path = xasprintf("%s/plan.json", dir);
	char *old = xasprintf("{\"campaign\": \"%s\", \"runs\": [\"p-1\", \"q-1\", \"p-2\", "
			      "\"q-2\"]}\n", id);
	cr_assert_eq(write_file(path, old, strlen(old)), 0);
	cr_assert_eq(quiet(campaign_load, dir, 4, &id2, &msg), 0);
	cr_assert(strstr(msg, "names no arguments"), "%s", msg);
	free(msg);
	free(id2);
	free(old);
	free(path);
	test_rm_rf(dir);
	free(dir);
	free(id);
}

Test(campaign, results_without_a_plan_refuse_a_start)
{
	char *dir = test_tmpdir("campaign"), *id = NULL, *msg = NULL;
	char *runs = xasprintf("%s/runs.json", dir);
	cr_assert_eq(write_file(runs, "[]\n", 3), 0);
	cr_assert_eq(quiet(campaign_start, dir, 4, &id, &msg), SB_EXIT_USAGE);
	cr_assert(strstr(msg, "earlier comparison (runs.json)"), "%s", msg);
	free(msg);
	unlink(runs);
	cr_assert_eq(quiet(campaign_load, dir, 4, &id, &msg), SB_EXIT_USAGE);
	cr_assert(strstr(msg, "holds no plan.json"), "%s", msg);
	free(msg);
	test_rm_rf(dir);
	free(runs);
	free(dir);
}

Test(campaign, entry_checked_against_its_name)
{
	struct strbuf why = STRBUF_INIT;
	struct run_entry e = { .mode = "p", .run = 2, .trace = "p-2.trace.jsonl.zst",
			       .campaign = "c1" };
	cr_assert(campaign_entry_ok(&e, "p", 2, "p-2.trace.jsonl.zst", "c1", &why));
	cr_assert(!campaign_entry_ok(&e, "q", 2, "q-2.trace.jsonl.zst", "c1", &why));
	cr_assert(strstr(why.buf, "mode 'p' run 2"), "%s", why.buf);
	strbuf_reset(&why);
	cr_assert(!campaign_entry_ok(&e, "p", 2, "p-2.trace.jsonl.zst", "c2", &why));
	cr_assert(strstr(why.buf, "campaign c1"), "%s", why.buf);
	strbuf_reset(&why);
	e.trace = "p-3.trace.jsonl.zst";
	cr_assert(!campaign_entry_ok(&e, "p", 2, "p-2.trace.jsonl.zst", "c1", &why));
	strbuf_reset(&why);
	e.trace = NULL;
	e.stopped_by = STOPPED_LOST;
	cr_assert(!campaign_entry_ok(&e, "p", 2, "p-2.trace.jsonl.zst", "c1", &why));
	cr_assert(strstr(why.buf, "only a merge writes"), "%s", why.buf);
	strbuf_reset(&why);
	e.stopped_by = STOPPED_NONE;
	e.campaign = NULL;
	cr_assert(!campaign_entry_ok(&e, "p", 2, "p-2.trace.jsonl.zst", "c1", &why));
	strbuf_release(&why);
}

Test(campaign, marker_of_a_live_process_is_still_recording)
{
	char *dir = test_tmpdir("campaign"), *runsd = xasprintf("%s/runs.d", dir);
	char *trace = xasprintf("%s/p-1.trace.jsonl.zst", dir);
	cr_assert_eq(mkdir_p(runsd), 0);
	cr_assert_eq(write_file(trace, "x", 1), 0);
	struct strbuf why = STRBUF_INIT;
	cr_assert(!campaign_still_recording(dir, "p-1", "c1", trace, &why));
	cr_assert_eq(campaign_mark_running(dir, "p-1", "c1"), 0);
	cr_assert(campaign_still_recording(dir, "p-1", "c1", trace, &why)); /* we live */
	cr_assert(strstr(why.buf, "still recording"), "%s", why.buf);
	strbuf_reset(&why);
	cr_assert(!campaign_still_recording(dir, "p-1", "c2", trace, &why)); /* not ours */
	campaign_unmark_running(dir, "p-1");
	cr_assert(!campaign_still_recording(dir, "p-1", "c1", trace, &why));
	strbuf_release(&why);
	test_rm_rf(dir);
	free(runsd);
	free(trace);
	free(dir);
}

/* A marker written by hand for run p-1 of campaign c1 on this host: pid, and
 * the rest of its JSON (start, boot, pidns) as given. */
static void hand_marker(const char *dir, long pid, const char *rest)
{
	char host[256] = "?";
	gethostname(host, sizeof(host) - 1);
	char *path = xasprintf("%s/runs.d/p-1.running", dir);
	char *text = xasprintf("{\"campaign\": \"c1\", \"host\": \"%s\", \"pid\": %ld%s}\n", host,
			       pid, rest);
	cr_assert_eq(write_file(path, text, strlen(text)), 0);
	free(text);
	free(path);
}

/* A trace last written `age` seconds ago. */
static void trace_aged(const char *trace, int age)
{
	cr_assert_eq(write_file(trace, "x", 1), 0);
	struct timeval tv[2];
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= age;
	tv[1] = tv[0];
	cr_assert_eq(utimes(trace, tv), 0);
}

Test(campaign, a_dead_task_of_another_pid_namespace_is_not_taken_for_our_pid_1)
{
	char *dir = test_tmpdir("campaign"), *runsd = xasprintf("%s/runs.d", dir);
	char *trace = xasprintf("%s/p-1.trace.jsonl.zst", dir);
	cr_assert_eq(mkdir_p(runsd), 0);
	struct pl_identity me;
	pl_self_identity(&me);
	if (!me.pidns[0])
		cr_skip_test("no pid namespace to tell apart here");
	/* pid 1 of a container: our pid 1 lives, but it is not the task */
	char *rest = xasprintf(", \"start\": 1, \"boot\": \"%s\", \"pidns\": \"pid:[1]\"", me.boot);
	hand_marker(dir, 1, rest);
	struct strbuf why = STRBUF_INIT;
	trace_aged(trace, 60);
	cr_assert(!campaign_still_recording(dir, "p-1", "c1", trace, &why), "%s", why.buf);
	/* its trace written a moment ago: it may still record (judged as on another host) */
	trace_aged(trace, 0);
	cr_assert(campaign_still_recording(dir, "p-1", "c1", trace, &why));
	cr_assert(strstr(why.buf, "in another pid namespace"), "%s", why.buf);
	strbuf_release(&why);
	free(rest);
	test_rm_rf(dir);
	free(runsd);
	free(trace);
	free(dir);
}

Test(campaign, a_reused_pid_or_another_boot_is_not_the_task)
{
	char *dir = test_tmpdir("campaign"), *runsd = xasprintf("%s/runs.d", dir);
	char *trace = xasprintf("%s/p-1.trace.jsonl.zst", dir);
	cr_assert_eq(mkdir_p(runsd), 0);
	trace_aged(trace, 60);
	struct pl_identity me;
	pl_self_identity(&me);
	struct pl_proc self;
	cr_assert_eq(pl_proc_read(getpid(), &self), 0);
	struct strbuf why = STRBUF_INIT;
	/* our own pid, our start: alive; a marker the merge checks right */
	char *rest = xasprintf(", \"start\": %llu, \"boot\": \"%s\", \"pidns\": \"%s\"",
			       (unsigned long long)self.start, me.boot, me.pidns);
	hand_marker(dir, getpid(), rest);
	cr_assert(campaign_still_recording(dir, "p-1", "c1", trace, &why));
	free(rest);
	/* our pid, another start: the task's pid was given to us since */
	rest = xasprintf(", \"start\": %llu, \"boot\": \"%s\", \"pidns\": \"%s\"",
			 (unsigned long long)self.start + 1, me.boot, me.pidns);
	hand_marker(dir, getpid(), rest);
	cr_assert(!campaign_still_recording(dir, "p-1", "c1", trace, &why));
	free(rest);
	/* another boot of this host */
	if (!me.boot[0])
		cr_skip_test("no boot id here");
	rest = xasprintf(", \"start\": %llu, \"boot\": \"x%s\", \"pidns\": \"%s\"",
			 (unsigned long long)self.start, me.boot, me.pidns);
	hand_marker(dir, getpid(), rest);
	cr_assert(!campaign_still_recording(dir, "p-1", "c1", trace, &why));
	free(rest);
	/* the marker campaign_mark_running() writes names all three */
	cr_assert_eq(campaign_mark_running(dir, "p-1", "c1"), 0);
	char *path = xasprintf("%s/runs.d/p-1.running", dir), *text = NULL;
	size_t len;
	cr_assert_eq(read_file(path, &text, &len), 0);
	char *want[3] = {
		xasprintf("\"start\": %llu,", (unsigned long long)self.start),
		xasprintf("\"boot\": \"%s\",", me.boot),
		xasprintf("\"pidns\": \"%s\"\n", me.pidns),
	};
	for (size_t i = 0; i < 3; i++) {
		cr_assert(strstr(text, want[i]), "%s not in %s", want[i], text);
		free(want[i]);
	}
	free(text);
	free(path);
	strbuf_release(&why);
	test_rm_rf(dir);
	free(runsd);
	free(trace);
	free(dir);
}
