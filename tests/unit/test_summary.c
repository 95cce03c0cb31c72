/* test_summary.c -- trace_read_summary(): the analysis of a trace read with
 * only its extreme samples equals the analysis of the whole trace */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "traces/trace.h"
#include "fixtures.h"
#include "testutil.h"

void analysis_write_json(struct jsonw *w, const struct analysis *a);

static char *analysed(const struct trace *tr)
{
	struct analysis a = ANALYSIS_INIT;
	cr_assert_eq(analysis_run(tr, NULL, &a), 0);
	struct strbuf sb = STRBUF_INIT;
	struct jsonw w = JSONW_INIT(&sb);
	analysis_write_json(&w, &a);
	analysis_release(&a);
	return strbuf_detach(&sb);
}

/* Both reads of path give the same analysis; returns whether it was a summary. */
static bool same_analysis(const char *path)
{
	struct trace full, sum;
	int rf = trace_read(path, &full);
	int rs = trace_read_summary(path, &sum);
	cr_assert_eq(rf, rs, "%s", path);
	bool summary = sum.summary;
	if (rf == 0) {
		char *a = analysed(&full), *b = analysed(&sum);
		size_t d = 0;
		while (a[d] && a[d] == b[d])
			d++;
		size_t from = d > 200 ? d - 200 : 0;
		cr_assert_str_eq(b, a, "%s: summary (%zu of %zu samples kept) against full, from "
				 "byte %zu:\nfull: %.300s\nsummary: %.300s", path, sum.nsamples,
				 full.nsamples, d, a + from, b + from);
		if (summary)
			cr_assert_leq(sum.nsamples, full.nsamples);
		free(a);
		free(b);
	}
	trace_release(&full);
	trace_release(&sum);
	return summary;
}

Test(summary, every_fixture_trace_analyses_the_same)
{
	static const char *const rel[] = {
		"stageload/2026-10-06-qwen-image/eager-1.trace.jsonl",
		"stageload/2026-10-06-qwen-image/staged-1.trace.jsonl",
		"stageload/2026-10-06-qwen-image/staged-2.trace.jsonl",
		"stageload/2026-10-06-qwen-image/first-attempt/eager-1.trace.jsonl",
		"stageload/2026-10-08-qwen-image-offload/offload-1.trace.jsonl",
		"stageload/2026-10-05/showcase/moss_native.trace.jsonl",
	};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *p = xasprintf("%s/%s", fixtures_dir(), rel[i]);
		same_analysis(p);
		free(p);
	}
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A run with stages, releases (some late), peaks with and without `from`,
 * loads, samples with every field or some, ties and samples at exactly an
 * event's t; `late` seconds of reordering (samples written late). */
static void write_run(const char *path, double late, int nstages)
{
	struct trace_writer *w = trace_writer_open(path);
	struct trace_start st = { .utc = "x", .mode = "staged" };
	cr_assert_eq(trace_writer_start(w, &st), 0);
	double t = 0;
	struct trace_sample pend[64];
	size_t npend = 0;
	for (int k = 0; k < nstages; k++) {
		struct trace_event ev = TRACE_EVENT_INIT;
		ev.kind = EV_STAGE;
		ev.t = t;
		char name[16];
		snprintf(name, sizeof(name), k == 0 ? "setup" : "s%d", k % 4);
		ev.stage = name;
		trace_writer_event(w, &ev);
		double stage_t = t;
		int nrel = (int)(rnd() % 3);
		for (int r = 0; r < nrel; r++) {
			struct trace_event rel = TRACE_EVENT_INIT;
			rel.kind = EV_RELEASE;
			rel.t = t + 0.05 * (r + 1) + (double)(rnd() % 3); /* up to seconds later */
			rel.stage = name;
			rel.has_nbytes = true;
			rel.nbytes = 1000;
			trace_writer_event(w, &rel);
		}
		int n = 50 + (int)(rnd() % 400);
		for (int i = 0; i < n; i++) {
			struct trace_sample s = { .t = t };
			if (i == 0 || rnd() % 50 == 0)
				s.t = stage_t; /* exactly at the stage event */
			unsigned f = (unsigned)rnd();
			s.fields = (f & 7) ? SF_FOOTPRINT : 0;
			if (f & 8)
				s.fields |= SF_RSS;
			if (f & 16)
				s.fields |= SF_SWAP_USED;
			if (f & 32)
				s.fields |= SF_LEVEL;
			if ((f & 64) && !(f & 7))
				s.fields |= SF_DEVMEM; /* the probe's readings: samples of their own */
			if (f & 128)
				s.fields |= SF_GPU;
			s.devmem = 3000 + rnd() % 40;
			s.gpu = 4000 + rnd() % 40;
			s.footprint = 1000 + rnd() % 20; /* ties */
			s.rss = 2000 + rnd() % 30;
			s.swap_used = rnd() % 5;
			s.level = (double)(rnd() % 7);
			pend[npend++] = s;
			if (npend == 64 || (late == 0) || rnd() % 4 == 0) { /* written late, reversed */
				for (size_t j = npend; j-- > 0;)
					trace_writer_sample(w, &pend[j]);
				npend = 0;
			}
			t += 0.01 + (late > 0 ? 0 : 0.0001 * (double)(rnd() % 3));
		}
		struct trace_event pk = TRACE_EVENT_INIT;
		pk.kind = EV_PEAK;
		pk.t = t;
		pk.stage = name;
		pk.metric = (char *)(rnd() % 2 ? "rss" : "footprint");
		pk.has_bytes = true;
		pk.bytes = 2100;
		pk.has_from = rnd() % 3 != 0;
		pk.from = rnd() % 2 ? stage_t : stage_t + 0.123;
		trace_writer_event(w, &pk);
	}
	for (size_t j = npend; j-- > 0;)
		trace_writer_sample(w, &pend[j]);
	struct trace_end end = { .has_exit = true };
	trace_writer_end(w, &end);
	cr_assert_eq(trace_writer_close(w), 0);
}

Test(summary, generated_runs_analyse_the_same, .timeout = 120)
{
	char *dir = test_tmpdir("summary");
	int summaries = 0, fallbacks = 0;
	for (int round = 0; round < 150; round++) {
		char *p = xasprintf("%s/r%d.trace.jsonl%s", dir, round, round % 2 ? ".zst" : "");
		write_run(p, round % 3 == 0 ? 0 : 0.5, 3 + round % 5);
		if (same_analysis(p))
			summaries++;
		else
			fallbacks++;
		free(p);
	}
	cr_assert_gt(summaries, 100, "most generated runs are read as summaries (%d, %d fell back)",
		     summaries, fallbacks);
	test_rm_rf(dir);
	free(dir);
}

Test(summary, a_long_trace_keeps_few_samples)
{
	char *dir = test_tmpdir("summary");
	char *p = xasprintf("%s/long.trace.jsonl.zst", dir);
	struct trace_writer *w = trace_writer_open(p);
	struct trace_start st = { .utc = "x" };
	trace_writer_start(w, &st);
	for (int i = 0; i < 100000; i++) {
		if (i % 25000 == 0) {
			struct trace_event ev = TRACE_EVENT_INIT;
			ev.kind = EV_STAGE;
			ev.t = i * 0.01;
			ev.stage = "s";
			trace_writer_event(w, &ev);
		}
		struct trace_sample s = { .t = i * 0.01, .fields = SF_FOOTPRINT | SF_RSS,
					  .footprint = 1000 + (uint64_t)(i % 977), .rss = 5 };
		trace_writer_sample(w, &s);
	}
	trace_writer_close(w);
	struct trace tr;
	cr_assert_eq(trace_read_summary(p, &tr), 0);
	cr_assert(tr.summary);
	cr_assert_lt(tr.nsamples, 100, "%zu samples kept of 100000", tr.nsamples);
	trace_release(&tr);
	same_analysis(p);
	free(p);
	test_rm_rf(dir);
	free(dir);
}

/* Stages without releases: a segment's smallest footprint is never read (only
 * a window's lowest footprint in the 2 s after its releases is), nor its
 * first sample when its footprint and rss are no larger than the stage
 * before's largest and a later one has the same swap_used: of each stage's
 * samples only the largest and the last are kept; with a release in each
 * stage, the smallest too. */
static size_t kept_of_stages(const char *p, bool releases)
{
	static const uint64_t fp[10] = { 500, 600, 700, 900, 300, 100, 200, 300, 350, 400 };
	struct trace_writer *w = trace_writer_open(p);
	struct trace_start st = { .utc = "x" };
	trace_writer_start(w, &st);
	for (int k = 0; k < 1000; k++) {
		struct trace_event ev = TRACE_EVENT_INIT;
		ev.kind = EV_STAGE;
		ev.t = k * 10.0;
		ev.stage = "s";
		trace_writer_event(w, &ev);
		if (releases) {
			struct trace_event rel = TRACE_EVENT_INIT;
			rel.kind = EV_RELEASE;
			rel.t = k * 10.0 + 0.25;
			rel.stage = "s";
			trace_writer_event(w, &rel);
		}
		for (int i = 0; i < 10; i++) {
			struct trace_sample s = { .t = k * 10.0 + i * 0.5,
						  .fields = SF_FOOTPRINT | SF_RSS | SF_SWAP_USED,
						  .footprint = fp[i], .rss = fp[i] + 30, .swap_used = 7 };
			trace_writer_sample(w, &s);
		}
	}
	trace_writer_close(w);
	struct trace tr;
	cr_assert_eq(trace_read_summary(p, &tr), 0);
	cr_assert(tr.summary);
	size_t n = tr.nsamples;
	trace_release(&tr);
	same_analysis(p);
	return n;
}

Test(summary, the_smallest_footprint_is_kept_only_after_releases)
{
	char *dir = test_tmpdir("summary");
	char *p = xasprintf("%s/stages.trace.jsonl.zst", dir);
	size_t plain = kept_of_stages(p, false);
	cr_assert_leq(plain, 2 * 1000 + 1, "%zu samples kept of 10000 in 1000 stages", plain);
	size_t released = kept_of_stages(p, true);
	cr_assert_geq(released, plain + 1000, "%zu samples kept with releases, %zu without",
		      released, plain);
	free(p);
	test_rm_rf(dir);
	free(dir);
}

/* The events read share one copy of each name: 1000 stage events, one string. */
Test(summary, events_share_their_names)
{
	char *dir = test_tmpdir("summary");
	char *p = xasprintf("%s/names.trace.jsonl", dir);
	struct trace_writer *w = trace_writer_open(p);
	struct trace_start st = { .utc = "x" };
	trace_writer_start(w, &st);
	for (int k = 0; k < 1000; k++) {
		struct trace_event ev = TRACE_EVENT_INIT;
		ev.kind = EV_LOAD;
		ev.t = k;
		ev.stage = (char *)(k % 2 ? "denoise" : "encode");
		ev.name = "unet";
		trace_writer_event(w, &ev);
	}
	trace_writer_close(w);
	struct trace full, sum;
	cr_assert_eq(trace_read(p, &full), 0);
	cr_assert_eq(trace_read_summary(p, &sum), 0);
	struct trace *trs[2] = { &full, &sum };
	for (int i = 0; i < 2; i++) {
		struct trace *tr = trs[i];
		cr_assert_eq(tr->nevents, 1000);
		for (size_t k = 2; k < tr->nevents; k++) {
			cr_assert_eq(tr->events[k].stage, tr->events[k % 2].stage);
			cr_assert_eq(tr->events[k].name, tr->events[0].name);
			cr_assert_eq(tr->events[k].kind_name, tr->events[0].kind_name);
		}
		cr_assert_str_eq(tr->events[1].stage, "denoise");
		cr_assert_str_eq(tr->events[0].name, "unet");
	}
	trace_release(&full);
	trace_release(&sum);
	same_analysis(p);
	free(p);
	test_rm_rf(dir);
	free(dir);
}

/*
 * The memory a run of many short stages costs per stage (BENCHMARKS.md item
 * 9: `plot` of 100,000 stage events): what the summary keeps of the trace
 * (a stage event as a 24-byte brief, two samples a window: its largest and
 * its last footprint) and the analysis's window. A plain stage event kept as
 * a whole struct trace_event (256 bytes), or more samples a window, fails it.
 */
Test(summary, bytes_kept_per_stage)
{
	enum { NSTAGES = 2000, PER = 12 };
	char *dir = test_tmpdir("summary");
	char *p = xasprintf("%s/stages.trace.jsonl", dir);
	struct trace_writer *w = trace_writer_open(p);
	struct trace_start st = { .utc = "x", .mode = "staged" };
	cr_assert_eq(trace_writer_start(w, &st), 0);
	uint64_t fp = 300u << 20;
	for (int i = 0; i < NSTAGES * PER; i++) {
		double t = (i + 1) * 0.01;
		if (i % PER == 0) {
			struct trace_event ev = TRACE_EVENT_INIT;
			char name[16];
			snprintf(name, sizeof(name), "s%d", (i / PER) % 50);
			ev.kind = EV_STAGE;
			ev.t = t;
			ev.stage = name;
			cr_assert_eq(trace_writer_event(w, &ev), 0);
		}
		fp += (rnd() % (8u << 20)) - (4u << 20);
		struct trace_sample s = { .t = t, .fields = SF_FOOTPRINT | SF_RSS | SF_SWAP_USED | SF_PROCS,
					  .footprint = fp, .rss = fp + (30u << 20), .procs = 1 };
		cr_assert_eq(trace_writer_sample(w, &s), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace tr;
	cr_assert_eq(trace_read_summary(p, &tr), 0);
	cr_assert(tr.summary);
	struct analysis a = ANALYSIS_INIT;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.nwindows, NSTAGES + 1); /* and setup's */
	cr_assert_eq(trace_nevents(&tr), NSTAGES);
	cr_assert_leq(tr.nsamples, 2 * (size_t)NSTAGES, "%zu samples kept for %d windows",
		      tr.nsamples, NSTAGES);
	size_t kept = tr.nbriefs * sizeof(*tr.briefs) + tr.nevents * sizeof(*tr.events) +
		      tr.nsamples * sizeof(*tr.samples) + a.nwindows * sizeof(*a.windows);
	/* 24 (brief) + 2 * 104 (samples) + 152 (window) = 384: a sample's mapped and
	 * majflt, a window's mapped peak and major faults */
	cr_assert_leq(kept / NSTAGES, 384, "%zu bytes a stage: %zu briefs, %zu whole events, "
		      "%zu samples, %zu windows", kept / NSTAGES, tr.nbriefs, tr.nevents,
		      tr.nsamples, a.nwindows);
	analysis_release(&a);
	trace_release(&tr);
	free(p);
	test_rm_rf(dir);
	free(dir);
}
