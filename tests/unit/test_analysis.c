/* test_analysis.c -- the per-run model: window rule, outcomes, loads, kernel peaks, real traces */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyze/analysis.h"
#include "../../common/util.h"
#include "../../traces/runs.h"
#include "../../traces/trace.h"
#include "fixtures.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

/* ---- hand-built traces (records already in t order, as the reader leaves them) ---- */

static void begin(struct trace *tr, const char *mode, bool stagebench)
{
	memset(tr, 0, sizeof(*tr));
	tr->path = "hand.jsonl";
	tr->has_start = true;
	tr->start.mode = (char *)mode;
	tr->start.format = stagebench ? (char *)TRACE_FORMAT : NULL;
}

static void sample(struct trace *tr, double t, uint64_t fp, uint64_t swap, double level)
{
	ALLOC_GROW(tr->samples, tr->nsamples + 1, tr->samples_alloc);
	struct trace_sample *s = &tr->samples[tr->nsamples++];
	memset(s, 0, sizeof(*s));
	s->t = t;
	s->fields = SF_FOOTPRINT | SF_SWAP_USED | SF_LEVEL;
	s->footprint = fp;
	s->swap_used = swap;
	s->level = level;
}

static struct trace_event *event(struct trace *tr, enum event_kind kind, double t, const char *stage,
				 const char *name, uint64_t nbytes, double seconds)
{
	ALLOC_GROW(tr->events, tr->nevents + 1, tr->events_alloc);
	struct trace_event *ev = &tr->events[tr->nevents++];
	memset(ev, 0, sizeof(*ev));
	ev->t = t;
	ev->kind = kind;
	ev->stage = (char *)stage;
	ev->name = (char *)name;
	ev->has_nbytes = nbytes != 0;
	ev->nbytes = nbytes;
	ev->has_seconds = seconds != 0;
	ev->seconds = seconds;
	ev->ndim = -1;
	return ev;
}

static void done(struct trace *tr)
{
	free(tr->samples);
	free(tr->events);
}

/*
 * A staged run: setup 0..10, stage "a" at 10 loads m1; stage "b" at 20
 * releases m1 at 21 and at 23 (two releases, done at 23), then loads m2.
 * Samples every second; footprint in MiB equals 100 * t except where set.
 */
static void staged_run(struct trace *tr)
{
	begin(tr, "staged", false);
	for (int i = 0; i <= 30; i++)
		sample(tr, i, (uint64_t)(100 * i) * MiB, 1 * GiB + (uint64_t)i * MiB, 80 - i);
	tr->samples[21].footprint = 9000 * MiB; /* between stage b's event and its releases */
	tr->samples[22].footprint = 8000 * MiB;
	tr->samples[24].footprint = 500 * MiB;  /* lowest within 2 s after releases at 23 */
	event(tr, EV_STAGE, 10, "a", NULL, 0, 0);
	event(tr, EV_LOAD, 12, "a", "m1", 2 * GiB, 1.5);
	event(tr, EV_STAGE, 20, "b", NULL, 0, 0);
	event(tr, EV_RELEASE, 21, "b", "m1", 1 * GiB, 0);
	event(tr, EV_RELEASE, 23, "b", "m1b", 1 * GiB, 0);
	event(tr, EV_LOAD, 25, "b", "m2", 3 * GiB, 2.5);
	tr->has_end = true;
}

Test(analysis, window_starts_when_the_stages_releases_complete)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.nstages, 3);
	cr_assert_str_eq(a.stages[0].name, "setup");
	cr_assert_str_eq(a.stages[2].name, "b");
	const struct stage_window *b = &a.windows[2];
	cr_assert_eq(b->stage_t, 20);
	cr_assert_eq(b->start_t, 23, "window of b starts at its last release, got %g", b->start_t);
	/* samples 23..30 (the last window keeps the last sample): 8 of them; the
	 * 9000 MiB and 8000 MiB samples at 21 and 22 belong to no window */
	cr_assert_eq(b->nsamples, 8);
	cr_assert_eq(a.stages[2].peak_footprint, 3000 * MiB);
	cr_assert_eq(a.peak_footprint, 9000 * MiB, "the overall peak still counts the gap");
	/* stage a: samples 10..19 (20 belongs to b's event, so to nothing) */
	cr_assert_eq(a.windows[1].nsamples, 10);
	cr_assert_eq(a.stages[1].peak_footprint, 1900 * MiB);
	/* setup: samples 0..9 */
	cr_assert_eq(a.windows[0].nsamples, 10);
	cr_assert_eq(a.stages[0].peak_footprint, 900 * MiB);
	cr_assert_str_eq(a.stages[a.ran_to].name, "b");
	analysis_release(&a);
	done(&tr);
}

Test(analysis, sample_on_a_boundary_belongs_to_the_next_window)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	begin(&tr, "eager", false);
	sample(&tr, 0, 1 * GiB, 0, 50);
	sample(&tr, 5, 7 * GiB, 0, 50);  /* exactly at stage x: x's, not setup's */
	sample(&tr, 6, 2 * GiB, 0, 50);
	sample(&tr, 9, 4 * GiB, 0, 50);  /* the last sample: x includes it */
	event(&tr, EV_STAGE, 5, "x", NULL, 0, 0);
	tr.has_end = true;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.stages[0].nsamples, 1);
	cr_assert_eq(a.stages[0].peak_footprint, 1 * GiB);
	cr_assert_eq(a.stages[1].nsamples, 3);
	cr_assert_eq(a.stages[1].peak_footprint, 7 * GiB);
	cr_assert(a.stages[1].completed, "a completed run completes its last stage");
	analysis_release(&a);
	done(&tr);
}

Test(analysis, explicit_setup_stage_merges_with_the_implicit_setup)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	begin(&tr, "staged", false);
	sample(&tr, 0, 3 * GiB, 0, 50);  /* before the explicit setup event */
	sample(&tr, 6, 1 * GiB, 0, 50);
	sample(&tr, 8, 2 * GiB, 0, 50);
	event(&tr, EV_STAGE, 5.328, "setup", NULL, 0, 0);
	event(&tr, EV_STAGE, 7, "work", NULL, 0, 0);
	tr.has_end = true;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.nstages, 2, "one setup row, not two");
	cr_assert_str_eq(a.stages[0].name, "setup");
	cr_assert_eq(a.stages[0].nsamples, 2);
	cr_assert_eq(a.stages[0].peak_footprint, 3 * GiB);
	cr_assert_float_eq(a.stages[0].seconds, 7.0, 1e-9);
	analysis_release(&a);
	done(&tr);
}

Test(analysis, stage_entered_without_a_sample_has_none)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	begin(&tr, "eager", false);
	sample(&tr, 0, 1 * GiB, 0, 50);
	sample(&tr, 1, 2 * GiB, 0, 50);
	event(&tr, EV_STAGE, 1.5, "late", NULL, 0, 0);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.outcome, RUN_GUARD, "a stageload trace without end was stopped");
	const struct stage_stats *s = analysis_stage(&a, "late");
	cr_assert_not_null(s);
	cr_assert_eq(s->nsamples, 0);
	cr_assert(s->ended_here && !s->completed);
	cr_assert(analysis_stage(&a, "setup")->completed);
	cr_assert_null(analysis_stage(&a, "never"));
	analysis_release(&a);
	done(&tr);
}

/*
 * Stages a (10..20), b (20..30), a again (30..40), one sample a second, end at
 * 40. Footprint 100 MiB everywhere except PEAK1 at t = 15 (a's first window)
 * and PEAK2 at t = 35 (its second); b holds 200 MiB at 25. A release of a at
 * 32 moves the second window's start past the 9 GiB sample at 31.
 */
static void reentered_run(struct trace *tr, uint64_t peak1, uint64_t peak2)
{
	begin(tr, "staged", true);
	for (int i = 0; i <= 40; i++)
		sample(tr, i, 100 * MiB, 0, 50);
	tr->samples[15].footprint = peak1;
	tr->samples[25].footprint = 200 * MiB;
	tr->samples[31].footprint = 9 * GiB;
	tr->samples[35].footprint = peak2;
	event(tr, EV_STAGE, 10, "a", NULL, 0, 0);
	event(tr, EV_STAGE, 20, "b", NULL, 0, 0);
	event(tr, EV_STAGE, 30, "a", NULL, 0, 0);
	event(tr, EV_RELEASE, 32, "a", "m", 1 * GiB, 0);
	tr->has_end = true;
}

Test(analysis, stage_entered_twice_is_one_row_with_the_larger_peak)
{
	/* the larger peak in the second window, then in the first */
	const uint64_t peaks[2][2] = { { 3 * GiB, 5 * GiB }, { 6 * GiB, 2 * GiB } };
	for (int k = 0; k < 2; k++) {
		struct trace tr;
		struct analysis a = ANALYSIS_INIT;
		reentered_run(&tr, peaks[k][0], peaks[k][1]);
		cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
		cr_assert_eq(a.nwindows, 4);
		cr_assert_eq(a.nstages, 3, "setup, a, b: one row for a");
		cr_assert_str_eq(a.stages[1].name, "a");
		cr_assert_str_eq(a.stages[2].name, "b");
		cr_assert_eq(a.windows[1].stage, 1);
		cr_assert_eq(a.windows[3].stage, 1);
		cr_assert_eq(a.windows[1].peak_footprint, peaks[k][0]);
		cr_assert_eq(a.windows[3].peak_footprint, peaks[k][1]);
		const struct stage_stats *s = analysis_stage(&a, "a");
		cr_assert_eq(s, &a.stages[1]);
		cr_assert_eq(s->nwindows, 2);
		/* 10..19 and 32..40 (the release at 32 leaves 30 and 31 out) */
		cr_assert_eq(s->nsamples, 10 + 9);
		cr_assert_eq(s->peak_footprint, peaks[k][0] > peaks[k][1] ? peaks[k][0] : peaks[k][1],
			     "case %d: %llu MiB", k, (unsigned long long)(s->peak_footprint / MiB));
		cr_assert_float_eq(s->seconds, 20.0, 1e-9, "10 s in each window");
		cr_assert(s->completed && !s->ended_here);
		cr_assert_eq(a.stages[2].peak_footprint, 200 * MiB, "b keeps its own peak");
		cr_assert_eq(a.stages[2].nwindows, 1);
		cr_assert_eq(a.ran_to, 1, "the run's last stage is a");
		cr_assert_eq(a.peak_footprint, 9 * GiB);
		analysis_release(&a);
		done(&tr);
	}
}

Test(analysis, a_run_stopped_on_purpose_reads_stopped_at_the_stage_as_asked)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	char buf[64];

	/* stageload's start.stop_at */
	begin(&tr, "eager", false);
	tr.start.stop_at = (char *)"texture";
	sample(&tr, 0, 1 * GiB, 0, 50);
	event(&tr, EV_STAGE, 1, "texture", NULL, 0, 0);
	tr.has_end = true;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "stopped at texture as asked");
	analysis_release(&a);
	/* stopped by the guard before it got there: the guard's stop, not the ask */
	tr.has_end = false;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "stopped by the guard");
	analysis_release(&a);
	done(&tr);

	/* the published eager runs' mark */
	begin(&tr, "eager", true);
	sample(&tr, 0, 1 * GiB, 0, 50);
	event(&tr, EV_STAGE, 1, "texture", NULL, 0, 0);
	event(&tr, EV_MARK, 2, "texture", NULL, 0, 0)->note = (char *)"stopped at texture";
	tr.has_end = true;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "stopped at texture as asked");
	analysis_release(&a);
	done(&tr);
}

Test(analysis, outcome_follows_runs_json_then_the_end_record)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	char buf[64];
	struct run_entry e = { .mode = "eager", .run = 1, .has_exit = true, .exit = 3 };

	begin(&tr, "eager", false);
	sample(&tr, 0, 1 * GiB, 0, 50);
	tr.has_end = true;
	cr_assert_eq(analysis_run(&tr, &e, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "stopped by the guard");
	analysis_release(&a);

	e.exit = 0;
	cr_assert_eq(analysis_run(&tr, &e, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "completed");
	analysis_release(&a);

	e.exit = 137; /* stageload's guard: 128 + signal */
	cr_assert_eq(analysis_run(&tr, &e, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "killed by signal 9");
	analysis_release(&a);

	/* stagebench traces: the end record decides; no end = the recorder died */
	done(&tr);
	begin(&tr, "eager", true);
	tr.has_end = false;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "recorder died (no end record)");
	analysis_release(&a);
	tr.has_end = true;
	tr.end.stopped_by = STOPPED_SIGNAL;
	tr.end.signal = 15;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "killed by signal 15");
	analysis_release(&a);
	tr.end.stopped_by = STOPPED_NONE;
	tr.end.signal = 0;
	tr.end.has_exit = true;
	tr.end.exit_code = 2;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "exit code 2");
	analysis_release(&a);
	tr.end.stopped_by = STOPPED_GUARD;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.outcome, RUN_GUARD);
	analysis_release(&a);

	/* a pipeline that exits 3 by itself under stagebench: runs.json's exit 3
	 * is not read as a guard stop, the end record decides */
	tr.end.stopped_by = STOPPED_NONE;
	tr.end.exit_code = 3;
	e.exit = 3;
	cr_assert_eq(analysis_run(&tr, &e, &a), 0);
	cr_assert_str_eq(analysis_outcome_str(&a, buf, sizeof(buf)), "exit code 3");
	analysis_release(&a);
	done(&tr);
}

Test(analysis, loads_count_reloads_and_flag_loads_outside_their_stage)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	event(&tr, EV_RELOAD, 27, "b", "m1", 1 * GiB, 0.5);
	event(&tr, EV_LOAD, 28, "a", "m3", 1 * GiB, 1.0); /* stage in force is b */
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.nloads, 4);
	cr_assert_eq(a.nreloads, 1);
	cr_assert_eq(a.loads_outside, 1);
	cr_assert(a.loads[3].outside);
	cr_assert_str_eq(a.loads[3].stage_in_force, "b");
	cr_assert_eq(a.load_bytes, 7 * GiB);
	cr_assert_float_eq(a.load_seconds, 5.5, 1e-9);
	cr_assert_eq(a.nreleases, 2);
	cr_assert_eq(a.release_bytes, 2 * GiB);
	analysis_release(&a);
	done(&tr);
}

Test(analysis, releases_report_footprint_before_and_lowest_after)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	const struct stage_window *b = &a.windows[2];
	cr_assert_eq(b->nreleases, 2);
	cr_assert(b->has_before);
	cr_assert_eq(b->footprint_before, 1900 * MiB, "last sample before t=20");
	cr_assert(b->has_low_after);
	cr_assert_eq(b->lowest_after, 500 * MiB, "lowest of samples at 23, 24, 25");
	cr_assert_eq(a.windows[1].nreleases, 0);
	analysis_release(&a);
	done(&tr);
}

Test(analysis, swap_and_level_from_the_samples)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	tr.samples[3].swap_used = 512 * MiB; /* a dip does not change start or peak */
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.swap_start, 1 * GiB);
	cr_assert_eq(a.swap_peak, 1 * GiB + 30 * MiB);
	cr_assert_eq(a.swap_rise, 30 * MiB);
	cr_assert_float_eq(a.lowest_level, 50.0, 1e-9);
	cr_assert_float_eq(a.wall_s, 30.0, 1e-9);
	analysis_release(&a);
	done(&tr);
}

Test(analysis, kernel_peak_above_the_sampled_peak_warns_of_a_missed_spike)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	/* stage a's sampled footprint peak is 1900 MiB: 2100 is > 10% above it */
	struct trace_event *ev = event(&tr, EV_PEAK, 19.9, "a", NULL, 0, 0);
	ev->metric = "footprint";
	ev->has_bytes = true;
	ev->bytes = 2100 * MiB;
	ev->has_from = true;
	ev->from = 10;
	/* stage b: 3200 is within 10% of 3000 */
	ev = event(&tr, EV_PEAK, 30, "b", NULL, 0, 0);
	ev->metric = "footprint";
	ev->has_bytes = true;
	ev->bytes = 3200 * MiB;
	/* rss: no sample has rss, so nothing to compare against */
	ev = event(&tr, EV_PEAK, 30, "b", NULL, 0, 0);
	ev->metric = "rss";
	ev->has_bytes = true;
	ev->bytes = 9 * GiB;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	const struct kernel_peak *kp = &analysis_stage(&a, "a")->kpeak[KPEAK_FOOTPRINT];
	cr_assert(kp->present && kp->has_sampled);
	cr_assert_eq(kp->sampled_bytes, 1900 * MiB);
	cr_assert(kp->missed_spike);
	cr_assert(stage_missed_spike(analysis_stage(&a, "a")));
	kp = &analysis_stage(&a, "b")->kpeak[KPEAK_FOOTPRINT];
	cr_assert(kp->present && !kp->missed_spike);
	cr_assert_eq(kp->sampled_bytes, 3000 * MiB);
	kp = &analysis_stage(&a, "b")->kpeak[KPEAK_RSS];
	cr_assert(kp->present && !kp->has_sampled && !kp->missed_spike);
	cr_assert_not(stage_missed_spike(analysis_stage(&a, "b")));
	analysis_release(&a);
	done(&tr);
}

Test(analysis, trace_without_start_is_refused)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	begin(&tr, "x", false);
	tr.has_start = false;
	cr_assert_eq(analysis_run(&tr, NULL, &a), -1);
	analysis_release(&a);
	analysis_release(NULL);
	done(&tr);
}

/* ---- the real stageload traces ------------------------------------------ */

/*
 * Every expected number below was computed by hand, independently of this
 * code, with a short python3 one-off over the JSON lines: sort samples and
 * events by t; window of stage S = [last release of S after S's stage event
 * (else the stage event), next stage event), the last window including the
 * last sample; peak = max "footprint" of the samples in it. Overall figures
 * are over every sample; swap start = swap_used of the first sample by t.
 */
static void open_fixture(const char *rel, struct analysis *a)
{
	char *path = xasprintf("%s/stageload/%s", fixtures_dir(), rel);
	cr_assert_eq(analysis_open(path, a), 0, "cannot analyse %s", path);
	free(path);
}

Test(analysis, staged_decode_window_starts_after_the_five_second_release)
{
	struct analysis a = ANALYSIS_INIT;
	open_fixture("2026-10-06-qwen-image/staged-1.trace.jsonl", &a);
	cr_assert_eq(a.outcome, RUN_COMPLETED);
	cr_assert_str_eq(a.mode, "staged");
	cr_assert_eq(a.nstages, 4);
	cr_assert_str_eq(a.stages[a.ran_to].name, "decode");
	/* decode: stage event at 117.16, release of transformer at 122.091; the
	 * samples from 122.601 to 124.276 (5 of them) make the window. */
	const struct stage_window *w = &a.windows[3];
	cr_assert_float_eq(w->stage_t, 117.16, 1e-9);
	cr_assert_float_eq(w->start_t, 122.091, 1e-9);
	cr_assert_eq(w->nsamples, 5);
	cr_assert_eq(analysis_stage(&a, "decode")->peak_footprint, 15473166232ULL); /* 14.41 GB */
	/*
	 * stageload's table.md says 14.41 / 14.43 GB for staged decode as well,
	 * but only because it attributed the late-written sample at t=117.225
	 * (written after the release line) by file order. Counted from the stage
	 * event over records sorted by t, the decode peak would be 17398613888
	 * (16.2 GB, run 1) and 17406314416 (16.2 GB, run 2): the window rule's
	 * 14.4 GB is lower, as it should be.
	 */
	cr_assert_lt(analysis_stage(&a, "decode")->peak_footprint, 17398613888ULL);
	cr_assert_eq(w->nreleases, 1);
	cr_assert_eq(w->footprint_before, 17385228160ULL); /* sample at 116.685 */
	cr_assert_eq(w->lowest_after, 14399440792ULL);     /* sample at 122.601 */
	/* denoise: stage 12.648, release of text_encoder at 12.904 */
	cr_assert_float_eq(a.windows[2].start_t, 12.904, 1e-9);
	cr_assert_eq(a.windows[2].nsamples, 205);
	cr_assert_eq(analysis_stage(&a, "denoise")->peak_footprint, 17398728576ULL);
	cr_assert_eq(analysis_stage(&a, "encode")->peak_footprint, 20405372728ULL);
	cr_assert_eq(analysis_stage(&a, "encode")->nsamples, 16);
	cr_assert_eq(analysis_stage(&a, "setup")->peak_footprint, 2228356776ULL);
	cr_assert_eq(analysis_stage(&a, "setup")->nsamples, 9);
	cr_assert_eq(a.peak_footprint, 20405372728ULL);
	cr_assert_eq(a.swap_rise, 0);
	cr_assert_float_eq(a.lowest_level, 56, 1e-9);
	cr_assert_eq(a.nloads, 2);
	cr_assert_eq(a.load_bytes, 31764498032ULL);
	cr_assert_float_eq(a.load_seconds, 12.597, 1e-9); /* 7.346 + 5.251 */
	cr_assert_eq(a.loads_outside, 0);
	cr_assert_eq(a.nreleases, 2);
	cr_assert_float_eq(a.wall_s, 124.276, 1e-9);
	analysis_release(&a);
}

Test(analysis, eager_run_with_end_was_stopped_per_runs_json)
{
	struct analysis a = ANALYSIS_INIT;
	/* its trace ends with "end"; runs.json beside it says exit 3 */
	open_fixture("2026-10-06-qwen-image/eager-1.trace.jsonl", &a);
	cr_assert_eq(a.outcome, RUN_GUARD);
	cr_assert_str_eq(a.stages[a.ran_to].name, "decode");
	const struct stage_stats *d = analysis_stage(&a, "decode");
	cr_assert(d->ended_here && !d->completed);
	cr_assert_eq(d->peak_footprint, 46785513056ULL);
	cr_assert_eq(d->nsamples, 21);
	cr_assert(analysis_stage(&a, "denoise")->completed);
	cr_assert_eq(analysis_stage(&a, "setup")->peak_footprint, 33716635400ULL);
	cr_assert_eq(analysis_stage(&a, "setup")->nsamples, 40);
	cr_assert_eq(analysis_stage(&a, "denoise")->peak_footprint, 34914224096ULL);
	cr_assert_eq(a.swap_start, 12392398848ULL);
	cr_assert_eq(a.swap_peak, 20949237760ULL);
	cr_assert_eq(a.swap_rise, 8556838912ULL); /* 7.97 GB, as stageload printed */
	cr_assert_float_eq(a.lowest_level, 6, 1e-9);
	cr_assert_eq(a.nloads, 0);
	analysis_release(&a);
}

Test(analysis, stageload_trace_without_end_was_stopped_by_the_guard)
{
	struct analysis a = ANALYSIS_INIT;
	open_fixture("2026-10-06-qwen-image/first-attempt/eager-1.trace.jsonl", &a);
	cr_assert_eq(a.outcome, RUN_GUARD);
	cr_assert_eq(a.nstages, 1);
	cr_assert_str_eq(a.stages[a.ran_to].name, "setup");
	cr_assert_eq(a.peak_footprint, 29417036928ULL); /* 27.4 GB */
	cr_assert_eq(a.swap_rise, 10554703872ULL);
	analysis_release(&a);

	open_fixture("2026-10-08-qwen-image-offload/offload-1.trace.jsonl", &a);
	cr_assert_eq(a.outcome, RUN_GUARD);
	cr_assert_str_eq(a.mode, "offload");
	cr_assert_eq(analysis_stage(&a, "decode")->peak_footprint, 17439377472ULL);
	cr_assert_eq(analysis_stage(&a, "decode")->nsamples, 17);
	cr_assert_eq(a.swap_rise, 10286071808ULL);
	cr_assert_float_eq(a.lowest_level, 22, 1e-9);
	analysis_release(&a);
}

Test(analysis, pixal3d_trace_merges_setup_and_counts_the_reload)
{
	struct analysis a = ANALYSIS_INIT;
	open_fixture("2026-10-05/showcase/moss_native.trace.jsonl", &a);
	cr_assert_eq(a.nstages, 9);
	cr_assert_str_eq(a.stages[0].name, "setup");
	cr_assert_str_eq(a.stages[1].name, "preprocess");
	/* setup: t=0 up to preprocess at 7.769, across the "setup" event at 5.328 */
	cr_assert_eq(a.stages[0].nsamples, 16);
	cr_assert_eq(a.stages[0].peak_footprint, 3145778352ULL);
	/* decode: stage 240.81, releases 242.168 and 242.47 -> window from 242.47 */
	const struct stage_stats *d = analysis_stage(&a, "decode");
	cr_assert_eq(d->nsamples, 75);
	cr_assert_eq(d->peak_footprint, 21445204976ULL);
	cr_assert_eq(analysis_stage(&a, "texture")->peak_footprint, 32275794344ULL);
	cr_assert_eq(analysis_stage(&a, "export")->peak_footprint, 63705953088ULL);
	cr_assert_eq(a.nloads, 8);
	cr_assert_eq(a.nreloads, 1);
	cr_assert_eq(a.load_bytes, 14134937204ULL);
	cr_assert_float_eq(a.load_seconds, 37.102, 1e-9);
	cr_assert_eq(a.loads_outside, 0);
	cr_assert_eq(a.nreleases, 10);
	cr_assert_eq(a.release_bytes, 16241631892ULL);
	analysis_release(&a);
}

Test(analysis, unreadable_trace_fails_with_minus_one)
{
	struct analysis a = ANALYSIS_INIT;
	char path[] = "/tmp/sb-analysis-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	const char junk[] = "{\"type\":\"start\",\"mode\":\"eager\"}\n{\"type\":\"sample\",\"t\":oops}\n";
	cr_assert_eq(write(fd, junk, sizeof(junk) - 1), (ssize_t)sizeof(junk) - 1);
	close(fd);
	cr_assert_eq(analysis_open(path, &a), -1);
	analysis_release(&a);
	cr_assert_eq(analysis_open("/nonexistent/x.trace.jsonl", &a), -1);
	analysis_release(&a);
	unlink(path);
}

/* ---- device memory: the probe's devmem samples and gpu events ---- */

static void devmem_sample(struct trace *tr, double t, uint64_t bytes)
{
	ALLOC_GROW(tr->samples, tr->nsamples + 1, tr->samples_alloc);
	struct trace_sample *s = &tr->samples[tr->nsamples];
	size_t at = tr->nsamples++;
	while (at && tr->samples[at - 1].t > t) /* keep t order */
		at--;
	memmove(tr->samples + at + 1, tr->samples + at, (tr->nsamples - 1 - at) * sizeof(*s));
	s = &tr->samples[at];
	memset(s, 0, sizeof(*s));
	s->t = t;
	s->fields = SF_DEVMEM;
	s->devmem = bytes;
}

static void gpu_event(struct trace *tr, double t, const char *stage, const char *device,
		      const char *metric, uint64_t bytes, uint64_t max_bytes)
{
	struct trace_event *ev = event(tr, EV_GPU, t, stage, NULL, 0, 0);
	ev->device = (char *)device;
	ev->metric = (char *)metric;
	ev->has_bytes = true;
	ev->bytes = bytes;
	ev->has_max_bytes = max_bytes != 0;
	ev->max_bytes = max_bytes;
}

Test(analysis, device_peak_per_stage_follows_the_window_rule)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	devmem_sample(&tr, 15.5, 1 * GiB);
	devmem_sample(&tr, 21.5, 9 * GiB);  /* between b's event and its releases: no window's */
	devmem_sample(&tr, 26.5, 2 * GiB);
	gpu_event(&tr, 30, "b", "mps", "mps_driver", 512 * MiB, 0);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert(a.has_device && a.device_sampled);
	cr_assert_str_eq(analysis_device_label(&a), "MPS driver");
	cr_assert_eq(a.device_peak, 9 * GiB, "the overall peak still counts the gap");
	cr_assert_float_eq(a.device_peak_t, 21.5, 1e-9);
	cr_assert_not(a.stages[0].has_device);
	cr_assert_eq(a.stages[1].device_peak, 1 * GiB);
	cr_assert_eq(a.stages[2].device_peak, 2 * GiB);
	cr_assert_not(a.stages[2].device_exact, "MPS has no peak counter");
	/* the footprint figures do not change: devmem samples have no footprint */
	cr_assert_eq(a.windows[2].nsamples, 8);
	cr_assert_eq(a.stages[2].peak_footprint, 3000 * MiB);
	analysis_release(&a);
	done(&tr);
}

Test(analysis, cuda_stage_peak_is_max_memory_reserved_summed_over_the_devices)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	gpu_event(&tr, 10.1, "a", "cuda:0", "cuda_reserved", 100 * MiB, 100 * MiB);
	gpu_event(&tr, 10.1, "a", "cuda:1", "cuda_reserved", 200 * MiB, 200 * MiB);
	gpu_event(&tr, 19.9, "a", "cuda:0", "cuda_reserved", 500 * MiB, 1100 * MiB);
	gpu_event(&tr, 19.9, "a", "cuda:1", "cuda_reserved", 200 * MiB, 200 * MiB);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_str_eq(analysis_device_label(&a), "CUDA reserved");
	cr_assert(a.stages[1].has_device && a.stages[1].device_exact);
	cr_assert_eq(a.stages[1].device_peak, 1300 * MiB);
	cr_assert_not(a.stages[2].has_device);
	cr_assert_not(a.device_sampled);
	analysis_release(&a);
	done(&tr);
}

Test(analysis, no_device_readings_no_device_figures)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_not(a.has_device || a.has_gpu);
	for (size_t i = 0; i < a.nstages; i++)
		cr_assert_not(a.stages[i].has_device || a.stages[i].has_gpu);
	analysis_release(&a);
	done(&tr);
}

Test(analysis, nvml_gpu_memory_is_shown_beside_the_probes_device_memory)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	for (size_t i = 0; i < tr.nsamples; i++) {
		tr.samples[i].fields |= SF_GPU;
		tr.samples[i].gpu = (uint64_t)(i + 1) * 10 * MiB;
	}
	devmem_sample(&tr, 26.5, 2 * GiB);
	gpu_event(&tr, 30, "b", "mps", "mps_driver", 512 * MiB, 0);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert(a.has_gpu && a.has_device);
	cr_assert_eq(a.gpu_peak, 31 * 10 * MiB);
	cr_assert_eq(a.stages[1].gpu_peak, 20 * 10 * MiB, "stage a: samples 10..19");
	struct strbuf o = STRBUF_INIT;
	analysis_write_text(&o, &a);
	cr_assert_not_null(strstr(o.buf, "MPS driver peak 2.0 GB"), "%s", o.buf);
	cr_assert_not_null(strstr(o.buf, "GPU memory         310 MB (NVML, from outside)"), "%s", o.buf);
	cr_assert_not_null(strstr(o.buf, "swap rise     MPS peak  GPU (NVML)  kernel peak"), "%s", o.buf);
	strbuf_release(&o);
	analysis_release(&a);
	done(&tr);
}

/* Mapped files and major faults of staged_run's samples (one a second from 0
 * to 30): mapped = 10 MiB * t, majflt = 5 * t up to 22, then 1000 more each
 * second. Stage peaks follow the window rule (b's window starts at 23, after
 * its releases); a stage's faults are its count's rise from the sample before
 * its window to its last. */
Test(analysis, mapped_peak_and_major_faults_per_stage)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	staged_run(&tr);
	for (size_t i = 0; i < tr.nsamples; i++) {
		struct trace_sample *s = &tr.samples[i];
		s->fields |= SF_MAPPED | SF_MAJFLT;
		s->mapped = (uint64_t)(s->t * 10) * MiB;
		s->majflt = s->t <= 22 ? (int)(5 * s->t) : 110 + 1000 * (int)(s->t - 22);
	}
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert(a.has_mapped && a.has_majflt);
	cr_assert_eq(a.mapped_peak, (uint64_t)(tr.samples[tr.nsamples - 1].t * 10) * MiB);
	cr_assert_str_eq(a.stages[1].name, "a");
	/* a: samples 10..19 */
	cr_assert_eq(a.stages[1].mapped_peak, 190 * MiB);
	cr_assert_eq(a.stages[1].majflt, 5 * 19 - 5 * 9);
	/* b: from 23 (after the releases) to the last sample */
	uint64_t last = (uint64_t)tr.samples[tr.nsamples - 1].t;
	cr_assert_eq(a.stages[2].mapped_peak, last * 10 * MiB);
	cr_assert_eq(a.stages[2].majflt, 1000 * (last - 22) - (5 * 22 - 110));
	cr_assert(a.any_majflt);
	analysis_release(&a);
	done(&tr);
}

/* ---- the reader (common/reader.h) ----------------------------------------- */

Test(analysis, the_reader_is_the_marks_else_the_backends_else_unknown)
{
	struct trace tr;
	struct analysis a = ANALYSIS_INIT;
	begin(&tr, "eager", true);
	tr.start.meter_backend = "linux";
	event(&tr, EV_MARK, 0, NULL, NULL, 0, 0)->note = "memory primed: 1 GB";
	event(&tr, EV_MARK, 0, NULL, NULL, 0, 0)->note = "meter: cgroup-v2: footprint read from ...";
	event(&tr, EV_STAGE, 1, "a", NULL, 0, 0);
	sample(&tr, 1.5, 100 * MiB, 0, 80);
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.reader, SB_READER_CGROUP_V2);
	analysis_release(&a);
	done(&tr);

	begin(&tr, "eager", true);
	tr.start.meter_backend = "macos";
	event(&tr, EV_STAGE, 1, "a", NULL, 0, 0);
	sample(&tr, 1.5, 100 * MiB, 0, 80);
	a = (struct analysis)ANALYSIS_INIT;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.reader, SB_READER_MACOS);
	analysis_release(&a);
	tr.start.meter_backend = "linux"; /* a Linux trace older than the mark */
	a = (struct analysis)ANALYSIS_INIT;
	cr_assert_eq(analysis_run(&tr, NULL, &a), 0);
	cr_assert_eq(a.reader, SB_READER_UNKNOWN);
	analysis_release(&a);
	done(&tr);

	/* the real stageload traces name none: unknown, as before */
	a = (struct analysis)ANALYSIS_INIT;
	open_fixture("2026-10-06-qwen-image/staged-1.trace.jsonl", &a);
	cr_assert_eq(a.reader, SB_READER_UNKNOWN);
	analysis_release(&a);
}
