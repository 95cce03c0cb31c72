/* test_table.c -- the per-stage peak table: cells, comparisons, supplements, renderers, real traces */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyze/table.h"
#include "../../common/util.h"
#include "../../traces/trace.h"
#include "fixtures.h"

#define GiB (1ULL << 30)

/*
 * A hand-built run: setup, then stages[0..] entered at t = 10, 20, ...; one
 * sample in the middle of each window with footprint peaks_gib[i] GiB (setup
 * is index 0; -1 means entered with no sample there, -2 not entered: the run
 * ends before that stage). `how`: 'c' completed,
 * 'g' stopped by the guard, 's' killed by signal 9, 'x' exit code 1.
 */
static void mkrun(struct table_run *r, const char *mode, bool supplement, const char *const *stages,
		  const double *peaks_gib, char how)
{
	struct trace tr;
	memset(&tr, 0, sizeof(tr));
	tr.path = "hand.jsonl";
	tr.has_start = true;
	tr.start.mode = (char *)mode;
	tr.start.format = (char *)TRACE_FORMAT;
	size_t n = 0;
	while (stages[n] && peaks_gib[n + 1] > -2)
		n++;
	tr.samples = xcalloc(n + 1, sizeof(*tr.samples));
	tr.events = xcalloc(n + 1, sizeof(*tr.events));
	for (size_t i = 0; i <= n; i++) { /* window i: setup (0) or stages[i - 1] */
		if (i < n) {
			struct trace_event *ev = &tr.events[tr.nevents++];
			ev->t = 10.0 * (double)(i + 1);
			ev->kind = EV_STAGE;
			ev->stage = (char *)stages[i];
			ev->ndim = -1;
		}
		if (peaks_gib[i] >= 0) {
			struct trace_sample *s = &tr.samples[tr.nsamples++];
			s->t = 10.0 * (double)i + 5;
			s->fields = SF_FOOTPRINT;
			s->footprint = (uint64_t)(peaks_gib[i] * (double)GiB);
		}
	}
	tr.has_end = true;
	if (how == 'g')
		tr.end.stopped_by = STOPPED_GUARD;
	else if (how == 's') {
		tr.end.stopped_by = STOPPED_SIGNAL;
		tr.end.signal = 9;
	} else if (how == 'x') {
		tr.end.has_exit = true;
		tr.end.exit_code = 1;
	}
	memset(r, 0, sizeof(*r));
	r->supplement = supplement;
	cr_assert_eq(analysis_run(&tr, NULL, &r->a), 0);
	free(tr.samples);
	free(tr.events);
}

static const char *const S3[] = { "shape", "texture", "decode", NULL };

static char *cell(const struct table *t, size_t s, size_t m)
{
	/* the markdown row, cut to the m-th cell */
	struct strbuf sb = STRBUF_INIT;
	table_render_md(t, &sb);
	const char *row = strstr(sb.buf, t->stages[s]);
	char line[512];
	for (;;) { /* the row starting "| stage |" */
		cr_assert_not_null(row);
		if (row[-2] == '|' && row[-1] == ' ' && row[strlen(t->stages[s])] == ' ')
			break;
		row = strstr(row + 1, t->stages[s]);
	}
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(row, "\n"), row);
	char *p = line;
	for (size_t k = 0; k <= m; k++)
		p = strchr(p, '|') + 2;
	p[strcspn(p, "|") - 1] = '\0';
	char *res = xstrdup(p);
	strbuf_release(&sb);
	return res;
}

static void release_runs(struct table_run *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		analysis_release(&r[i].a);
}

#define ASSERT_CELL(t, s, m, want)                                                       \
	do {                                                                             \
		char *_c = cell((t), (s), (m));                                          \
		cr_assert_str_eq(_c, (want), "stage %s mode %zu", (t)->stages[(s)], (size_t)(m)); \
		free(_c);                                                                \
	} while (0)

Test(table, cells_in_the_published_form)
{
	struct table_run r[4];
	/* eager stopped by the guard in texture at 44.2 GiB; staged twice, completing */
	mkrun(&r[0], "eager", false, S3, (const double[]){ 20.4, 26.6, 44.2, -2 }, 'g');
	mkrun(&r[1], "staged", false, S3, (const double[]){ 2.9, 11.4, 30.1, 17.9 }, 'c');
	mkrun(&r[2], "staged", false, S3, (const double[]){ 2.92, 11.5, 30.12, 18.4 }, 'c');
	/* a mode whose only run entered decode but had no sample there */
	mkrun(&r[3], "lazy", false, S3, (const double[]){ 1, 2, 3, -1 }, 'c');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 4, NULL, 0), 0);
	cr_assert_eq(t.nmodes, 3);
	cr_assert_str_eq(t.modes[0].name, "eager");
	cr_assert_str_eq(t.modes[1].name, "staged");
	cr_assert_eq(t.nstages, 4);
	ASSERT_CELL(&t, 0, 0, "20.4 GB");
	ASSERT_CELL(&t, 0, 1, "2.9 GB");            /* 2.9 and 2.92 round equal */
	ASSERT_CELL(&t, 1, 1, "11.4 to 11.5 GB");
	ASSERT_CELL(&t, 2, 0, "stopped by the guard at 44.2 GB");
	ASSERT_CELL(&t, 2, 1, "30.1 GB");
	ASSERT_CELL(&t, 3, 0, "not reached");
	ASSERT_CELL(&t, 3, 1, "17.9 to 18.4 GB");
	ASSERT_CELL(&t, 3, 2, "no sample");
	table_release(&t);
	release_runs(r, 4);
}

Test(table, completed_and_stopped_runs_share_a_cell)
{
	struct table_run r[3];
	mkrun(&r[0], "staged", false, S3, (const double[]){ 1, 2, 3, 4 }, 'c');
	mkrun(&r[1], "staged", false, S3, (const double[]){ 1, 2, 3.5, 5.25 }, 'c');
	mkrun(&r[2], "staged", false, S3, (const double[]){ 1, 2, 7.0, -2 }, 's');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	ASSERT_CELL(&t, 2, 0, "3.0 to 3.5 GB; 1 run killed by signal 9 at 7.0 GB");
	ASSERT_CELL(&t, 3, 0, "4.0 to 5.2 GB");
	table_release(&t);
	release_runs(r, 3);
}

Test(table, stage_entered_twice_is_one_row_with_the_larger_peak)
{
	static const char *const ABA[] = { "a", "b", "a", NULL };
	struct table_run r[2];
	/* setup, a, b, a: the larger peak of a in its second window, then in its first */
	mkrun(&r[0], "staged", false, ABA, (const double[]){ 1, 3, 2, 5 }, 'c');
	mkrun(&r[1], "staged", false, ABA, (const double[]){ 1, 6, 2, 4 }, 'c');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	cr_assert_eq(t.nstages, 3, "setup, a, b: one row for a");
	cr_assert_str_eq(t.stages[1], "a");
	cr_assert_str_eq(t.stages[2], "b");
	ASSERT_CELL(&t, 1, 0, "5.0 to 6.0 GB");
	ASSERT_CELL(&t, 2, 0, "2.0 GB");
	table_release(&t);
	release_runs(r, 2);
}

Test(table, supplement_fills_only_stages_no_main_run_entered)
{
	static const char *const S2[] = { "shape", NULL };
	struct table_run r[3];
	mkrun(&r[0], "eager", false, S2, (const double[]){ 20, 26, -2 }, 'g');
	mkrun(&r[1], "staged", false, S3, (const double[]){ 3, 11, 30, 18 }, 'c');
	/* a full eager attempt: its setup and shape must not replace the main run's */
	mkrun(&r[2], "eager", true, S3, (const double[]){ 21, 27, 44.2, -2 }, 'g');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	cr_assert_eq(t.nmodes, 2, "a supplement adds no column");
	ASSERT_CELL(&t, 0, 0, "20.0 GB");
	ASSERT_CELL(&t, 1, 0, "stopped by the guard at 26.0 GB");
	ASSERT_CELL(&t, 2, 0, "stopped by the guard at 44.2 GB (supplement)");
	ASSERT_CELL(&t, 3, 0, "not reached");
	cr_assert_eq(t.modes[0].nruns, 1, "the summary counts main runs only");
	table_release(&t);
	release_runs(r, 3);
}

Test(table, stages_option_picks_and_orders_rows)
{
	struct table_run r[1];
	mkrun(&r[0], "staged", false, S3, (const double[]){ 1, 2, 3, 4 }, 'c');
	const char *const rows[] = { "decode", "shape", "export" };
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 1, rows, 3), 0);
	cr_assert_eq(t.nstages, 3);
	ASSERT_CELL(&t, 0, 0, "4.0 GB");
	ASSERT_CELL(&t, 1, 0, "2.0 GB");
	ASSERT_CELL(&t, 2, 0, "not reached");
	table_release(&t);
	release_runs(r, 1);
}

static char *render(const struct table *t, void (*fn)(const struct table *, struct strbuf *))
{
	struct strbuf sb = STRBUF_INIT;
	fn(t, &sb);
	return strbuf_detach(&sb);
}

Test(table, second_mode_is_compared_with_the_first_honestly)
{
	struct table_run r[3];
	mkrun(&r[0], "eager", false, S3, (const double[]){ 20, 26, 44, 17.8 }, 'c');
	mkrun(&r[1], "staged", false, S3, (const double[]){ 3, 11, 30, 18.0 }, 'c');
	mkrun(&r[2], "eager", false, S3, (const double[]){ 20, 26.5, 44, 17.7 }, 'c');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	cr_assert_eq(t.ncomparisons, 1);
	cr_assert_eq(t.comparisons[0].nstages, 4);
	char *md = render(&t, table_render_md);
	/* setup 17, shape 15 and 15.5, texture 14 GiB less; decode 0.2 and 0.3 GiB more (under
	 * 1 GB a difference reads in MB: common/units.h) */
	cr_assert_not_null(strstr(md, "In the stages both modes ran, staged used 14.0 to 17.0 GB less than "
				      "eager in setup, shape, texture; staged used 205 to 307 MB more than "
				      "eager in decode.\n"), "%s", md);
	free(md);
	table_release(&t);
	release_runs(r, 3);

	mkrun(&r[0], "eager", false, S3, (const double[]){ 20, 26, 44, 17.8 }, 'g');
	mkrun(&r[1], "staged", false, S3, (const double[]){ 3, 11, 30, 18.0 }, 'c');
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	md = render(&t, table_render_md);
	/* decode was not completed by eager: only setup, shape, texture count */
	cr_assert_not_null(strstr(md, "In every stage both modes ran, staged used 14.0 to 17.0 GB less "
				      "than eager.\n"), "%s", md);
	free(md);
	table_release(&t);
	release_runs(r, 2);
}

Test(table, what_a_staged_run_could_not_stage_is_said_under_the_comparison)
{
	struct table_run r[3];
	mkrun(&r[0], "eager", false, S3, (const double[]){ 20, 26, 44, 17.8 }, 'c');
	mkrun(&r[1], "staged", false, S3, (const double[]){ 3, 11, 30, 18.0 }, 'c');
	mkrun(&r[2], "staged", false, S3, (const double[]){ 3, 11, 30, 18.0 }, 'c');
	const char *note = "not staged: text_encoder (21.7 MB): used while the script sets itself "
			   "up (.modules()), so built then and kept resident; forced by lib:walk at "
			   "lib.py:3";
	for (size_t i = 1; i < 3; i++) { /* both staged runs say it: once in the table */
		r[i].a.staging_notes = xcalloc(2, sizeof(char *));
		r[i].a.staging_notes[0] = xstrdup(note);
		r[i].a.nstaging_notes = 1;
	}
	r[2].a.staging_notes[1] = xstrdup("plan does not match: none of its 2 model(s) was made");
	r[2].a.nstaging_notes = 2;
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	int v = sb_verbosity;
	sb_verbosity = 0;
	char *md = render(&t, table_render_md);
	cr_expect_not_null(strstr(md, "more than eager in decode.\n"
				      "Not staged in staged: text_encoder (21.7 MB): used while the "
				      "script sets itself up (.modules()), so built then and kept "
				      "resident.\n"
				      "The plan does not match in staged: none of its 2 model(s) was "
				      "made.\n\n"), "%s", md);
	cr_expect_null(strstr(md, "forced by"), "%s", md);
	cr_expect_null(strstr(strstr(md, "Not staged") + 1, "Not staged"), "said once: %s", md);
	free(md);
	sb_verbosity = 1; /* -v: the call that forced it too */
	md = render(&t, table_render_md);
	cr_expect_not_null(strstr(md, "kept resident; forced by lib:walk at lib.py:3.\n"), "%s", md);
	free(md);
	sb_verbosity = v;
	table_release(&t);
	release_runs(r, 3);
}

Test(table, a_stage_with_no_sample_in_any_run_is_said_under_the_table)
{
	struct table_run r[4];
	/* texture: no sample in either eager run; decode: in one of them */
	mkrun(&r[0], "eager", false, S3, (const double[]){ 20, 26, -1, -1 }, 'c');
	mkrun(&r[1], "eager", false, S3, (const double[]){ 20, 26, -1, 17 }, 'c');
	mkrun(&r[2], "staged", false, S3, (const double[]){ 3, 11, 30, 18 }, 'c');
	mkrun(&r[3], "staged", false, S3, (const double[]){ 3, 11, 30, 18 }, 'c');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 4, NULL, 0), 0);
	ASSERT_CELL(&t, 2, 0, "no sample");
	ASSERT_CELL(&t, 3, 0, "17.0 GB");
	char *md = render(&t, table_render_md);
	cr_expect_not_null(strstr(md, "\nNo sample in texture (eager): it ended, after at most 10.0 s, "
				      "before a sample was taken in it (the recorder samples as soon as "
				      "it reads that a stage started; that sample is in a later stage's "
				      "row).\n"), "%s", md);
	cr_expect_null(strstr(md, "No sample in decode"), "%s", md);
	cr_expect_null(strstr(md, "(staged): "), "%s", md);
	free(md);
	table_release(&t);
	release_runs(r, 4);
	/* every stage sampled: no such line */
	mkrun(&r[0], "eager", false, S3, (const double[]){ 20, 26, 44, 17 }, 'c');
	cr_assert_eq(table_build(&t, r, 1, NULL, 0), 0);
	md = render(&t, table_render_md);
	cr_expect_null(strstr(md, "No sample"), "%s", md);
	free(md);
	table_release(&t);
	release_runs(r, 1);
}

Test(table, csv_and_json_carry_unrounded_bytes)
{
	struct table_run r[2];
	mkrun(&r[0], "eager", false, S3, (const double[]){ 20, 26, 44, 17.75 }, 'g');
	mkrun(&r[1], "staged", false, S3, (const double[]){ 3, 11, 30, 18.0 }, 'c');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	char *csv = render(&t, table_render_csv);
	cr_assert_not_null(strstr(csv, "decode,eager,guard,,1,1,false,19058917376,19058917376\n"), "%s", csv);
	cr_assert_not_null(strstr(csv, "staged,eager,setup,18253611008,18253611008\n"), "%s", csv);
	char *json = render(&t, table_render_json);
	cr_assert_not_null(strstr(json, "\"peak_min_bytes\": 19058917376"), "%s", json);
	cr_assert_not_null(strstr(json, "\"how\": \"guard\""), "%s", json);
	free(csv);
	free(json);
	table_release(&t);
	release_runs(r, 2);
}

Test(table, gb_range_rounds_to_one_decimal)
{
	struct strbuf sb = STRBUF_INIT;
	table_gb_range(12230000000ULL, 12240000000ULL, &sb); /* 11.390 and 11.399 GiB */
	cr_assert_str_eq(sb.buf, "11.4 GB");
	strbuf_reset(&sb);
	table_gb_range(12230000000ULL, 12400000000ULL, &sb); /* 11.39 and 11.55 */
	cr_assert_str_eq(sb.buf, "11.4 to 11.5 GB", "%s", sb.buf);
	strbuf_release(&sb);
}

/* ---- the real stageload traces ------------------------------------------ */

/*
 * Expected figures computed by hand with a python3 one-off over the JSON lines
 * (window rule; see test_analysis.c), in bytes, then / 2^30, one decimal:
 *   setup   eager 33716635400 = 31.40; staged 2228356776, 2228340392 = 2.08
 *   encode  eager 33762150320 = 31.44; staged 20405372728, 20405815168 = 19.00
 *   denoise eager 34914224096 = 32.52; staged 17398728576 = 16.20, 19990071168 = 18.62
 *   decode  eager stopped (runs.json exit 3) 46785513056 = 43.57;
 *           staged 15473166232 = 14.41, 15494170616 = 14.43 (windows from the
 *           releases at 122.091 and 92.396; from the stage events they would be 16.2)
 * Differences eager - staged: smallest encode 33762150320 - 20405815168 =
 * 13356335152 = 12.44; largest setup 33716635400 - 2228340392 = 31488295008 = 29.33.
 * Loads: 2 per staged run, 31764498032 = 29.58; 7.346 + 5.251 = 12.597 s and
 * 7.639 + 5.35 = 12.989 s. Swap rise eager 8556838912 = 7.97. Wall: the last
 * records, 118.411, 124.276 and 94.261 s.
 */
Test(table, qwen_image_runs_give_the_window_rule_table)
{
	static const char *const files[] = { "eager-1", "staged-1", "staged-2" };
	struct table_run r[3];
	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < 3; i++) {
		char *p = xasprintf("%s/stageload/2026-10-06-qwen-image/%s.trace.jsonl", fixtures_dir(), files[i]);
		cr_assert_eq(analysis_open(p, &r[i].a), 0, "%s", p);
		free(p);
	}
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	char *md = render(&t, table_render_md);
	const char *want =
		"Footprint reader: unknown (every run). The trace names no reader this version "
		"knows (traces older than the reader mark name none).\n\n"
		"| stage | eager, peak footprint | staged, peak footprint |\n"
		"|---|---|---|\n"
		"| setup | 31.4 GB | 2.1 GB |\n"
		"| encode | 31.4 GB | 19.0 GB |\n"
		"| denoise | 32.5 GB | 16.2 to 18.6 GB |\n"
		"| decode | stopped by the guard at 43.6 GB | 14.4 GB |\n"
		"\n"
		"In every stage both modes ran, staged used 12.4 to 29.3 GB less than eager.\n"
		"\n"
		"staged: 2 loads read 29.6 GB in 12.6 to 13.0 s.\n"
		"\n"
		"System swap rise per stage (the largest within one of its windows; footprint does not "
		"count swapped pages):\n"
		"\n"
		"| stage | eager, swap rise | staged, swap rise |\n"
		"|---|---|---|\n"
		"| setup | 5.3 GB | 0.0 GB |\n"
		"| encode | 0.0 GB | 0.0 GB |\n"
		"| denoise | 0.0 GB | 0.0 GB |\n"
		"| decode | 7.4 GB | 0.0 GB |\n"
		"\n"
		"| mode | runs | ran to | peak footprint | swap rise | time | of which loading |\n"
		"|---|---|---|---|---|---|---|\n"
		"| eager | 1 | decode (stopped by the guard) | 43.6 GB | 8.0 GB | 118.4 s | not reported |\n"
		"| staged | 2 | decode (completed) | 19.0 GB | 0.0 GB | 94.3 to 124.3 s | 12.6 to 13.0 s |\n";
	cr_assert_str_eq(md, want);
	const struct table_cell *c = table_cell(&t, 3, 1);
	cr_assert_eq(c->min_bytes, 15473166232ULL);
	cr_assert_eq(c->max_bytes, 15494170616ULL);
	cr_assert_eq(t.comparisons[0].nstages, 3, "decode was not completed by eager");
	free(md);
	table_release(&t);
	release_runs(r, 3);
}

/*
 * The published offload run (issue: a footprint-only comparison calls it a fit):
 * offload's footprint stayed 12.9 to 30.5 GB under eager's, but its swap grew
 * 9.6 GB against eager's 8.0 GB, 3.5 GB of it in denoise where eager's did not
 * grow, and the guard stopped it in decode. Staged swapped less than eager:
 * its line stays as published.
 */
Test(table, offload_that_swapped_more_is_never_said_to_use_less)
{
	static const char *const files[] = { "2026-10-06-qwen-image/eager-1",
		"2026-10-06-qwen-image/staged-1", "2026-10-06-qwen-image/staged-2",
		"2026-10-08-qwen-image-offload/offload-1" };
	struct table_run r[4];
	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < 4; i++) {
		char *p = xasprintf("%s/stageload/%s.trace.jsonl", fixtures_dir(), files[i]);
		cr_assert_eq(analysis_open(p, &r[i].a), 0, "%s", p);
		free(p);
	}
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 4, NULL, 0), 0);
	char *md = render(&t, table_render_md);
	cr_assert_not_null(strstr(md, "\nIn every stage both modes ran, staged used 12.4 to 29.3 GB "
				      "less than eager.\n"
				      "offload: footprint 12.9 to 30.5 GB below eager, but swap grew 9.6 GB "
				      "(eager 8.0 GB), more than eager's in denoise (3.5 GB against 0.0 GB), "
				      "and the guard stopped it in decode: it did not fit.\n"), "%s", md);
	cr_assert_null(strstr(md, "offload used"), "%s", md);
	cr_assert(t.comparisons[1].swap_worse);
	cr_assert(!t.comparisons[0].swap_worse);
	cr_assert(table_cell(&t, 2, 2)->swap_rose, "offload's denoise: swap rose 3.5 GB");
	cr_assert(!table_cell(&t, 2, 0)->swap_rose, "eager's denoise: no swap rise");
	free(md);
	table_release(&t);
	release_runs(r, 4);
}

/* Two samples per window: footprint fp[i] GiB, system swap rising by swap[i] GiB. */
static void mkrun_swap(struct table_run *r, const char *mode, const double *fp, const double *swap)
{
	static const char *const st[] = { "load", "work" };
	struct trace tr;
	memset(&tr, 0, sizeof(tr));
	tr.path = "hand.jsonl";
	tr.has_start = true;
	tr.start.mode = (char *)mode;
	tr.start.format = (char *)TRACE_FORMAT;
	tr.samples = xcalloc(6, sizeof(*tr.samples));
	tr.events = xcalloc(2, sizeof(*tr.events));
	uint64_t sw = 2 * GiB;
	for (size_t i = 0; i < 3; i++) {
		if (i) {
			struct trace_event *ev = &tr.events[tr.nevents++];
			ev->t = 10.0 * (double)i;
			ev->kind = EV_STAGE;
			ev->stage = (char *)st[i - 1];
			ev->ndim = -1;
		}
		for (int k = 0; k < 2; k++) {
			struct trace_sample *s = &tr.samples[tr.nsamples++];
			s->t = 10.0 * (double)i + 2 + 4 * k;
			s->fields = SF_FOOTPRINT | SF_SWAP_USED;
			s->footprint = (uint64_t)(fp[i] * (double)GiB);
			if (k)
				sw += (uint64_t)(swap[i] * (double)GiB);
			s->swap_used = sw;
		}
	}
	tr.has_end = true;
	memset(r, 0, sizeof(*r));
	cr_assert_eq(analysis_run(&tr, NULL, &r->a), 0);
	free(tr.samples);
	free(tr.events);
}

/* A synthetic pair: "lean" has the lower footprint in every stage, but in work its
 * swap rises 2 GB where "plain"'s does not: not "less"; it completed, by swapping. */
Test(table, a_lower_footprint_with_more_swap_is_not_less)
{
	struct table_run r[2];
	mkrun_swap(&r[0], "plain", (const double[]){ 1, 6, 8 }, (const double[]){ 0, 0, 0 });
	mkrun_swap(&r[1], "lean", (const double[]){ 0.5, 3, 4 }, (const double[]){ 0, 0, 2 });
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	char *md = render(&t, table_render_md);
	cr_assert_not_null(strstr(md, "\nlean: footprint 512 MB to 4.0 GB below plain, but swap grew "
				      "2.0 GB (plain 0.0 GB), more than plain's in work (2.0 GB against "
				      "0.0 GB): it fit only by swapping.\n"), "%s", md);
	cr_assert_null(strstr(md, "lean used"), "%s", md);
	cr_assert_not_null(strstr(md, "| work | 0.0 GB | 2.0 GB |\n"), "%s", md);
	free(md);
	table_release(&t);
	/* the same footprints without the swap: the plain sentence */
	release_runs(r, 2);
	mkrun_swap(&r[0], "plain", (const double[]){ 1, 6, 8 }, (const double[]){ 0, 0, 0 });
	mkrun_swap(&r[1], "lean", (const double[]){ 0.5, 3, 4 }, (const double[]){ 0, 0, 0 });
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	md = render(&t, table_render_md);
	cr_assert_not_null(strstr(md, "In every stage both modes ran, lean used 512 MB to 4.0 GB less "
				      "than plain.\n"), "%s", md);
	free(md);
	table_release(&t);
	release_runs(r, 2);
}

/* A run with stages a (at 10) and b (at 20), footprint 1 GiB, and the probe's
 * MPS driver memory read on a 0.5 s interval: a_mib in a, b_mib in b. */
static void mkrun_dev(struct table_run *r, const char *mode, int a_mib, int b_mib)
{
	char *text = xasprintf(
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"%s\",\"interval\":0.5}\n"
		"{\"type\":\"sample\",\"t\":1,\"footprint\":1073741824}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"a\",\"t\":10}\n"
		"{\"type\":\"event\",\"kind\":\"gpu\",\"stage\":\"a\",\"device\":\"mps\",\"metric\":\"mps_driver\",\"bytes\":1048576,\"t\":10.1}\n"
		"{\"type\":\"sample\",\"t\":15,\"footprint\":1073741824}\n"
		"{\"type\":\"sample\",\"t\":15.5,\"devmem\":%llu}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"b\",\"t\":20}\n"
		"{\"type\":\"sample\",\"t\":25,\"footprint\":1073741824}\n"
		"{\"type\":\"sample\",\"t\":25.5,\"devmem\":%llu}\n"
		"{\"type\":\"end\",\"exit\":0}\n", mode, (unsigned long long)a_mib << 20,
		(unsigned long long)b_mib << 20);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read_mem("dev.jsonl", text, strlen(text), &tr), 0);
	memset(r, 0, sizeof(*r));
	cr_assert_eq(analysis_run(&tr, NULL, &r->a), 0);
	trace_release(&tr);
	free(text);
}

Test(table, device_memory_gets_a_second_table_that_says_it_is_sampled)
{
	struct table_run r[3];
	mkrun_dev(&r[0], "eager", 300, 2048);
	mkrun_dev(&r[1], "staged", 200, 500);
	mkrun_dev(&r[2], "staged", 250, 520);
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	cr_assert(t.has_device);
	char *md = render(&t, table_render_md);
	cr_assert_not_null(strstr(md, "MPS driver memory per stage (the probe's reading from inside the "
				      "process; sampled every 0.5 s: a spike shorter than that can be "
				      "missed, record with a shorter --interval):"), "%s", md);
	cr_assert_not_null(strstr(md, "| stage | eager, device peak | staged, device peak |\n"), "%s", md);
	cr_assert_not_null(strstr(md, "| b | 2.0 GB | 500 to 520 MB |\n"), "%s", md);
	cr_assert_not_null(strstr(md, "| setup | n/a | n/a |\n"), "%s", md);
	char *csv = render(&t, table_render_csv);
	cr_assert_not_null(strstr(csv, "stage,mode,device,device_min_bytes,device_max_bytes,sampled\n"
				       ), "%s", csv);
	cr_assert_not_null(strstr(csv, "b,staged,MPS driver,524288000,545259520,true\n"), "%s", csv);
	char *json = render(&t, table_render_json);
	cr_assert_not_null(strstr(json, "\"device_min_bytes\": 524288000"), "%s", json);
	free(md);
	free(csv);
	free(json);
	table_release(&t);
	release_runs(r, 3);
}

Test(table, runs_without_a_device_render_as_before)
{
	struct table_run r[1];
	mkrun(&r[0], "eager", false, S3, (const double[]){ 20, 26, 44, 17.75 }, 'c');
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 1, NULL, 0), 0);
	cr_assert_not(t.has_device);
	char *md = render(&t, table_render_md), *csv = render(&t, table_render_csv);
	char *json = render(&t, table_render_json);
	cr_assert_null(strstr(md, "device"), "%s", md);
	cr_assert_null(strstr(csv, "device"), "%s", csv);
	cr_assert_null(strstr(json, "device"), "%s", json);
	free(md);
	free(csv);
	free(json);
	table_release(&t);
	release_runs(r, 1);
}

/* A run with stages encode (at 10) and denoise (at 20), footprint 460 MiB in
 * both, mapped model files enc_mib and den_mib, major faults faults_den in
 * denoise. */
static void mkrun_map(struct table_run *r, const char *mode, int enc_mib, int den_mib, int faults_den)
{
	char *text = xasprintf(
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"%s\"}\n"
		"{\"type\":\"sample\",\"t\":1,\"footprint\":482344960,\"mapped\":0,\"majflt\":0}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"encode\",\"t\":10}\n"
		"{\"type\":\"sample\",\"t\":15,\"footprint\":482344960,\"mapped\":%llu,\"majflt\":3}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"denoise\",\"t\":20}\n"
		"{\"type\":\"sample\",\"t\":25,\"footprint\":482344960,\"mapped\":%llu,\"majflt\":%d}\n"
		"{\"type\":\"end\",\"exit\":0}\n", mode, (unsigned long long)enc_mib << 20,
		(unsigned long long)den_mib << 20, 3 + faults_den);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read_mem("map.jsonl", text, strlen(text), &tr), 0);
	memset(r, 0, sizeof(*r));
	cr_assert_eq(analysis_run(&tr, NULL, &r->a), 0);
	trace_release(&tr);
	free(text);
}

Test(table, mapped_model_files_get_their_table_and_a_place_in_the_verdict)
{
	struct table_run r[4];
	mkrun_map(&r[0], "eager", 240, 480, 10);
	mkrun_map(&r[1], "eager", 242, 484, 12);
	mkrun_map(&r[2], "staged", 240, 250, 0);
	mkrun_map(&r[3], "staged", 241, 258, 0);
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 4, NULL, 0), 0);
	cr_assert(t.has_mapped && t.mapped_shown && t.any_majflt);
	char *md = render(&t, table_render_md);
	cr_assert_not_null(strstr(md, "| stage | eager, peak mapped | staged, peak mapped |\n"), "%s", md);
	cr_assert_not_null(strstr(md, "| denoise | 480 to 484 MB | 250 to 258 MB |\n"), "%s", md);
	cr_assert_not_null(strstr(md, "| encode | 240 to 242 MB | 240 to 241 MB |\n"), "%s", md);
	/* the footprint's verdict, then the mapped files' in the same sentence:
	 * denoise differs by 222 to 234 MiB in every pair, encode by no more than 2 */
	cr_assert_not_null(strstr(md, "; mapped model files: staged 222 to 234 MB less in denoise.\n"),
			   "%s", md);
	cr_assert_not_null(strstr(md, "| stage | eager, major faults | staged, major faults |\n"), "%s", md);
	cr_assert_not_null(strstr(md, "| denoise | 10 to 12 | 0 |\n"), "%s", md);
	char *csv = render(&t, table_render_csv);
	cr_assert_not_null(strstr(csv, "denoise,staged,262144000,270532608,0,0\n"), "%s", csv);
	char *json = render(&t, table_render_json);
	cr_assert_not_null(strstr(json, "\"mapped_min_bytes\": 262144000"), "%s", json);
	free(md);
	free(csv);
	free(json);
	table_release(&t);
	release_runs(r, 4);
}

/* A run that maps no model file (a few pages at most) reads as before. */
Test(table, runs_that_map_no_model_file_render_as_before)
{
	struct table_run r[2];
	mkrun_map(&r[0], "eager", 1, 2, 0);
	mkrun_map(&r[1], "staged", 1, 1, 0);
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	cr_assert(t.has_mapped);
	cr_assert_not(t.mapped_shown);
	char *md = render(&t, table_render_md);
	cr_assert_null(strstr(md, "mapped"), "%s", md);
	cr_assert_null(strstr(md, "major faults"), "%s", md);
	free(md);
	table_release(&t);
	release_runs(r, 2);
}

/* Three runs of one mode with these wall and loading times (run 1 first). */
static void timed_runs(struct table *t, struct table_run *r, const double *wall, const double *load,
		       size_t n)
{
	static const double p[] = { 1, 2, 2, 2 };
	for (size_t i = 0; i < n; i++) {
		mkrun(&r[i], "eager", false, S3, p, 'c');
		r[i].a.wall_s = wall[i];
		r[i].a.load_seconds = load[i];
		r[i].a.nloads = 3;
	}
	cr_assert_eq(table_build(t, r, n, NULL, 0), 0);
}

/* timed_runs' runs released (their loads counted, none held). */
static void release_timed(struct table *t, struct table_run *r, size_t n)
{
	table_release(t);
	for (size_t i = 0; i < n; i++)
		r[i].a.nloads = 0;
	release_runs(r, n);
}

Test(table, a_first_run_that_is_an_outlier_is_named_with_warmup_advice)
{
	/* the demo's numbers: eager run 1 loads in 1.5 s against 0.4 s (3.75 times, 1.1 s
	 * more: an outlier), wall 6.1 s against 4.55 s (1.34 times: not one) */
	static const double wall[] = { 6.1, 4.5, 4.6 }, load[] = { 1.5, 0.4, 0.4 };
	struct table_run r[3];
	struct table t = TABLE_INIT;
	timed_runs(&t, r, wall, load, 3);
	const struct table_mode *m = &t.modes[0];
	cr_assert(m->first_slow_load);
	cr_assert_not(m->first_slow_wall);
	cr_assert_float_eq(m->others_load, 0.4, 1e-9);
	cr_assert_float_eq(m->others_wall, 4.55, 1e-9);
	struct strbuf md = STRBUF_INIT, verdict = STRBUF_INIT;
	table_render_md(&t, &md);
	table_render_verdict(&t, &verdict);
	const char *want = "First run an outlier: eager run 1 loaded in 1.5 s against 0.4 s (the "
			   "median of its other runs). A first run often pays for a cold page cache, "
			   "files built or fetched, caches warmed; --warmup 1 runs each variant once "
			   "first, apart. The figures include it.\n";
	cr_assert_not_null(strstr(md.buf, want), "%s", md.buf);
	cr_assert_not_null(strstr(verdict.buf, want), "%s", verdict.buf);
	strbuf_release(&md);
	strbuf_release(&verdict);
	release_timed(&t, r, 3);
}

Test(table, first_run_rule_needs_the_ratio_and_the_margin)
{
	struct {
		double wall[2], load[2];
		bool slow_wall, slow_load;
	} cases[] = {
		{ { 2.0, 1.0 }, { 0.1, 0.1 }, false, false }, /* twice as long, but 1.0 s more */
		{ { 2.6, 1.5 }, { 0.1, 0.1 }, true, false },  /* 1.73 times and 1.1 s more */
		{ { 14.0, 10.0 }, { 0.1, 0.1 }, false, false }, /* 4 s more, 1.4 times */
		{ { 1.0, 1.0 }, { 0.6, 0.1 }, false, true },  /* loading 6 times, 0.5 s more: */
		{ { 1.0, 1.0 }, { 0.59, 0.1 }, false, false }, /* ... the margin is "more than" */
		{ { 1.0, 5.0 }, { 0.1, 2.0 }, false, false }, /* the first run the fastest */
	};
	cases[3].slow_load = 0.6 - 0.1 > 0.5; /* as doubles: 0.49999999999999994 */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct table_run r[2];
		struct table t = TABLE_INIT;
		timed_runs(&t, r, cases[i].wall, cases[i].load, 2);
		cr_assert_eq(t.modes[0].first_slow_wall, cases[i].slow_wall, "case %zu", i);
		cr_assert_eq(t.modes[0].first_slow_load, cases[i].slow_load, "case %zu", i);
		release_timed(&t, r, 2);
	}
}

Test(table, first_run_that_failed_or_alone_is_no_outlier)
{
	static const double p[] = { 1, 2, 2, 2 };
	struct table_run r[2];
	struct table t = TABLE_INIT;
	mkrun(&r[0], "eager", false, S3, p, 'x');
	mkrun(&r[1], "eager", false, S3, p, 'c');
	r[0].a.wall_s = 60;
	r[1].a.wall_s = 1;
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	cr_assert_not(t.modes[0].first_slow_wall);
	table_release(&t);
	cr_assert_eq(table_build(&t, r, 1, NULL, 0), 0);
	cr_assert_not(t.modes[0].first_slow_wall);
	table_release(&t);
	release_runs(r, 2);
}

/* ---- readers (table_readers.c) ------------------------------------------- */

static char *readers_line(const enum sb_reader *readers, const char *const *modes, size_t n,
			  bool *differ, char **verdict)
{
	static const double p[] = { 1, 2, 2, 2 };
	struct table_run r[4];
	for (size_t i = 0; i < n; i++) {
		mkrun(&r[i], modes[i], false, S3, p, 'c');
		r[i].a.reader = readers[i];
	}
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, n, NULL, 0), 0);
	*differ = t.readers_differ;
	char *md = render(&t, table_render_md);
	*verdict = render(&t, table_render_verdict);
	table_release(&t);
	release_runs(r, n);
	return md;
}

Test(table, the_reader_line_opens_the_table_and_the_verdict)
{
	static const char *const modes[] = { "eager", "staged", "eager", "staged" };
	static const enum sb_reader v1[] = { SB_READER_CGROUP_V1, SB_READER_CGROUP_V1,
					     SB_READER_CGROUP_V1, SB_READER_CGROUP_V1 };
	bool differ;
	char *verdict, *md = readers_line(v1, modes, 4, &differ, &verdict);
	cr_assert_not(differ);
	cr_assert(str_starts_with(md, "Footprint reader: cgroup v1 (every run).\n\n| stage |"), "%s", md);
	cr_assert(str_starts_with(verdict, "Footprint reader: cgroup v1 (every run).\n\n"), "%s",
		  verdict);
	cr_assert_null(strstr(md, "exact"), "%s", md);
	free(md);
	free(verdict);

	static const enum sb_reader pp[] = { SB_READER_PER_PROCESS, SB_READER_PER_PROCESS };
	md = readers_line(pp, modes, 2, &differ, &verdict);
	cr_assert_not(differ);
	const char *want = "Footprint reader: per-process (every run). The per-process reader adds up";
	cr_assert(str_starts_with(md, want), "%s", md);
	cr_assert(str_starts_with(verdict, want), "%s", verdict);
	cr_assert_eq(strchr(md, '\n'), strstr(md, "(docs/platforms.md).\n") + 20, "one line: %s", md);
	free(md);
	free(verdict);
}

Test(table, runs_read_by_different_readers_are_said_not_comparable)
{
	static const char *const modes[] = { "eager", "staged" };
	static const enum sb_reader mixed[] = { SB_READER_CGROUP_V1, SB_READER_PER_PROCESS };
	bool differ;
	char *verdict, *md = readers_line(mixed, modes, 2, &differ, &verdict);
	cr_assert(differ);
	const char *want = "Footprint reader: eager: cgroup v1; staged: per-process. The runs were "
			   "read by different readers: their figures are not comparable as they are. "
			   "The per-process reader";
	cr_assert(str_starts_with(md, want), "%s", md);
	cr_assert(str_starts_with(verdict, want), "%s", verdict);
	free(md);
	free(verdict);

	/* an old trace (unknown) beside a known reader: said, but not called a difference */
	static const enum sb_reader old[] = { SB_READER_UNKNOWN, SB_READER_MACOS };
	md = readers_line(old, modes, 2, &differ, &verdict);
	cr_assert_not(differ);
	cr_assert(str_starts_with(md, "Footprint reader: eager: unknown; staged: macOS. The trace "
				      "names no reader"), "%s", md);
	cr_assert_null(strstr(md, "not comparable"), "%s", md);
	free(md);
	free(verdict);

	/* one mode read both ways */
	static const char *const one[] = { "eager", "eager" };
	static const enum sb_reader both[] = { SB_READER_CGROUP_V2, SB_READER_PER_PROCESS };
	md = readers_line(both, one, 2, &differ, &verdict);
	cr_assert(differ);
	cr_assert(str_starts_with(md, "Footprint reader: eager: cgroup v2 and per-process. The runs "
				      "were read by different readers"), "%s", md);
	free(md);
	free(verdict);
}

Test(table, a_run_without_figures_has_no_say_in_the_reader_line)
{
	/* a run stopped before its command started (the guard's admission) has no reader
	 * mark and no sample: it changes nothing */
	static const double p[] = { 1, 2, 2, 2 };
	struct table_run r[3];
	static const char *const modes[] = { "eager", "staged", "staged" };
	for (size_t i = 0; i < 3; i++) {
		mkrun(&r[i], modes[i], false, S3, p, 'c');
		r[i].a.reader = i < 2 ? SB_READER_CGROUP_V1 : SB_READER_UNKNOWN;
	}
	r[2].a.has_footprint = false;
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	char *md = render(&t, table_render_md);
	cr_assert(str_starts_with(md, "Footprint reader: cgroup v1 (every run).\n\n"), "%s", md);
	free(md);
	table_release(&t);
	release_runs(r, 3);
}
