/* test_campaign.c -- a distributed compare's campaign: plan.json, entries checked against
 * their names, the running marker */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "runner/compare/campaign.h"
#include "traces/runs.h"
#include "testutil.h"

static char *const plan[] = { "p-1", "q-1", "p-2", "q-2" };

static int quiet(int (*fn)(const char *, char *const *, size_t, char **), const char *out,
		 size_t n, char **id, char **msg)
{
	struct stderr_capture c;
	stderr_capture_begin(&c);
	int rc = fn(out, plan, n, id);
	*msg = stderr_capture_end(&c);
	return rc;
}

Test(campaign, start_then_load_then_refuse)
{
	char *dir = test_tmpdir("campaign"), *id = NULL, *id2 = NULL, *msg = NULL;
	cr_assert_eq(campaign_start(dir, plan, 4, &id), 0);
	cr_assert_eq(strlen(id), 16);
	cr_assert_eq(campaign_load(dir, plan, 4, &id2), 0);
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
