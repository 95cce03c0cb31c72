/* session.c -- one run of a compare session: a run of the schedule, the prepare
 * command, the warm-ups, each under record_run, and a signal between runs; what
 * compare.c, compare_parts.c (--task) and learn.c run */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/units.h"
#include "../../common/util.h"
#include "compare.h"
#include "compare_int.h"
#include "../conditions.h"
#include "../pipeline.h"
#include "../record/record.h"

void compare_schedule(size_t nvariants, size_t k, size_t *variant, int *rep)
{
	if (!nvariants)
		BUG("compare_schedule with no variants");
	*variant = k % nvariants;
	*rep = (int)(k / nvariants) + 1;
}

/* ---- running and reporting ------------------------------------------------ */

/* Run one plan under record_run with the command's stdout in its log and its
 * stderr copied to its .err file, the pipeline's files brought to the cache
 * state first (state: NULL for no trace, as for prepare). */
int run_one(const struct record_opts *base, const struct compare_run *cr,
	    const enum cache_state *state, struct trace_label *labels, size_t nlabels,
	    struct record_result *res)
{
	if (mkdir_p(cr->out_dir))
		return -1;
	struct cache_report cache;
	if (state && cache_state_apply(*state, cr->files, &cache))
		return -1;
	/* A symlink where a file of this run goes is replaced, never written through. */
	if (unlink_symlink(cr->log_path) || unlink_symlink(cr->err_path) ||
	    (state && unlink_symlink(cr->trace_path)))
		return -1;
	int log = open_output(cr->log_path, 0);
	if (log < 0)
		return -1;
	int err = open_output(cr->err_path, O_APPEND);
	if (err < 0) {
		close(log);
		return -1;
	}
	struct record_opts o = *base;
	struct trace_fields extra = TRACE_FIELDS_INIT;
	if (state)
		cache_state_fields(*state, &cache, &extra);
	/* primed: what the runs so far used at most, at least the files a run
	 * reads (what an eager run loads); prepare is not primed */
	o.prime_bytes = state && base->prime_bytes != PRIME_OFF
			? (base->prime_bytes > cache.bytes ? base->prime_bytes : cache.bytes) : 0;
	if (o.prime_bytes)
		trace_fields_u64(&extra, "memory_primed", o.prime_bytes);
	o.trace_path = state ? cr->trace_path : NULL;
	o.latents_dir = state ? cr->latents_dir : NULL;
	o.labels = labels;
	o.nlabels = nlabels;
	o.env_set = (const char **)cr->env;
	o.stdout_fd = log;
	o.stderr_copy_fd = err;
	o.start_fields = &extra;
	int rc = record_run(&o, cr->argv, res);
	close(log);
	close(err);
	trace_fields_release(&extra);
	return rc;
}

/* What happened to a run, in words, for the progress line. */
void outcome_words(const struct record_result *res, struct strbuf *sb)
{
	if (res->stopped_by == STOPPED_GUARD)
		strbuf_addf(sb, "stopped by the guard (%s)", res->reason ? res->reason : "?");
	else if (res->stopped_by == STOPPED_SIGNAL)
		strbuf_addf(sb, "interrupted (signal %d)", res->exit_code - 128);
	else if (!res->started)
		strbuf_addf(sb, "did not start%s%s%s", res->reason ? " (" : "",
			    res->reason ? res->reason : "", res->reason ? ")" : "");
	else if (res->signal)
		strbuf_addf(sb, "killed by signal %d", res->signal);
	else if (res->exit_code)
		strbuf_addf(sb, "failed with exit code %d", res->exit_code);
	else
		strbuf_addstr(sb, "completed");
}

/* runs.json gets the run, rewritten whole after every run. */
static void note_run(struct session *s, const char *mode, int rep, const struct compare_run *cr,
		     const struct record_result *res)
{
	ALLOC_GROW(s->runs.items, s->runs.n + 1, s->runs.alloc);
	struct run_entry *e = &s->runs.items[s->runs.n++];
	memset(e, 0, sizeof(*e));
	e->mode = xstrdup(mode);
	e->run = rep;
	e->has_exit = true;
	e->exit = res->exit_code;
	const char *slash = strrchr(cr->trace_path, '/');
	e->trace = xstrdup(slash ? slash + 1 : cr->trace_path);
	e->stopped_by = res->stopped_by;
	e->signal = res->signal;
	e->campaign = xstrdup(s->campaign);
	if (s->o->part == COMPARE_TASK && res->stopped_by == STOPPED_SIGNAL) {
		int sig = res->exit_code > 128 ? res->exit_code - 128 : res->signal;
		e->why = xasprintf("stopped by signal %d (%s): its engine cancelled or preempted "
				   "the task, or its time limit ran out", sig, strsignal(sig));
	}
	if (runs_write(s->runs_path, &s->runs) < 0)
		s->rc = SB_EXIT_FAILURE;

	struct done_run *d = &s->done[s->ndone++];
	d->id = xstrdup(cr->id);
	d->rep = rep;
	d->completed = res->started && !res->stopped_by && !res->exit_code;
	d->failed = res->started && !res->stopped_by && (res->exit_code || res->signal);
	d->err_path = xstrdup(cr->err_path);
	d->wall_s = res->wall_s;
	d->mode = xstrdup(mode);
	d->trace_path = xstrdup(cr->trace_path);
}

/* The progress line after a run, and what its outcome means for the exit status. */
static void judge_run(struct session *s, size_t k, const char *mode, int rep,
		      const struct compare_run *cr, const struct record_result *res)
{
	struct strbuf words = STRBUF_INIT;
	char wall[UNITS_BUF];
	outcome_words(res, &words);
	if (sb_verbosity >= 1 || (res->stopped_by != STOPPED_GUARD && res->exit_code))
		fprintf(stderr, "stagebench: [%zu/%zu] %s run %d: %s, wall %s\n", k + 1,
			s->total, mode, rep, words.buf,
			units_seconds(res->wall_s, UNITS_COARSE, false, wall));
	strbuf_release(&words);
	if (res->stopped_by == STOPPED_SIGNAL) {
		s->interrupted = res->exit_code;
	} else if (!res->started) {
		s->rc = SB_EXIT_FAILURE; /* the command could not start: nothing was compared */
	} else if (res->stopped_by != STOPPED_GUARD && res->exit_code) {
		if (sb_verbosity >= 1)
			fprintf(stderr, "stagebench: [%zu/%zu] %s run %d: its output is in %s, its "
				"stderr in %s\n", k + 1, s->total, mode, rep, cr->log_path,
				cr->err_path);
		s->failed++;
	}
}

/* Run k (0-based) of the schedule. Returns 0, or -1 when it could not be
 * planned or the recorder failed (the compare stops). */
int run_k(struct session *s, size_t k)
{
	const struct compare_opts *o = s->o;
	size_t vi;
	int rep;
	compare_schedule(o->nvariants, k, &vi, &rep);
	const struct pipeline_variant *v = o->variants[vi];
	struct compare_run cr = COMPARE_RUN_INIT;
	if (compare_plan_run(&s->setup, v, rep, &cr) < 0)
		return -1;
	char repbuf[16];
	snprintf(repbuf, sizeof(repbuf), "%d", rep);
	struct trace_label labels[4] = {
		{ (char *)"seed", (char *)o->setup.seed },
		{ (char *)"pipeline", (char *)o->setup.p->name },
		{ (char *)"rep", repbuf },
		{ (char *)"campaign", s->campaign },
	};
	char status[128];
	snprintf(status, sizeof(status), "[%zu/%zu] %s run %d", k + 1, s->total, v->name, rep);
	s->ro.mode = v->name;
	s->ro.status_label = status;
	if (sb_verbosity >= 1)
		note("[%zu/%zu] %s run %d: running", k + 1, s->total, v->name, rep);
	struct record_result res = RECORD_RESULT_INIT;
	if (s->ro.prime_bytes != PRIME_OFF)
		s->ro.prime_bytes = s->largest_peak[vi];
	int rc = run_one(&s->ro, &cr, &s->cache, labels, s->campaign ? 4 : 3, &res);
	if (res.peak_footprint > s->largest_peak[vi])
		s->largest_peak[vi] = res.peak_footprint;
	s->ro.status_label = NULL;
	if (!rc && res.started && !res.stopped_by && res.signal && s->ro.signals &&
	    take_signal(s, s->ro.signals) && s->interrupted - 128 == res.signal) {
		/* the signal that stopped us killed the command first (an engine such as
		 * Slurm signals every process of the task): stopped by it, not failed */
		res.stopped_by = STOPPED_SIGNAL;
		res.exit_code = s->interrupted;
	}
	if (rc < 0) {
		error("[%zu/%zu] %s run %d: the recorder failed (see above)", k + 1, s->total,
		      v->name, rep);
	} else if (!res.started && res.stopped_by == STOPPED_SIGNAL) {
		/* a signal before its start: no command ran, nothing to keep */
		s->interrupted = res.exit_code;
		unlink(cr.trace_path);
		unlink(cr.log_path);
		unlink(cr.err_path);
		rmdir(cr.out_dir);
	} else {
		judge_run(s, k, v->name, rep, &cr, &res);
		note_run(s, v->name, rep, &cr, &res);
	}
	record_result_release(&res);
	compare_run_release(&cr);
	return rc;
}

/* The pipeline's "prepare" command, once, before any run. Returns 0, or -1
 * after error() when it could not run or failed (nothing else runs then). */
int run_prepare(struct session *s)
{
	const struct compare_opts *o = s->o;
	struct compare_run cr = COMPARE_RUN_INIT;
	struct record_result res = RECORD_RESULT_INIT;
	if (!o->setup.p->prepare || !o->setup.p->prepare[0])
		return 0;
	if (compare_plan_prepare(&s->setup, &cr) < 0)
		return -1;
	if (sb_verbosity >= 1)
		note("prepare: %s ... (not recorded; output in %s)", cr.argv[0], cr.log_path);
	int rc = run_one(&s->ro, &cr, NULL, NULL, 0, &res);
	if (!rc && res.stopped_by == STOPPED_SIGNAL) {
		s->interrupted = res.exit_code;
	} else if (!rc && (!res.started || res.stopped_by || res.exit_code)) {
		struct strbuf words = STRBUF_INIT;
		outcome_words(&res, &words);
		rc = error("prepare: %s: nothing was run (its output is in %s, its stderr in %s)",
			   words.buf, cr.log_path, cr.err_path);
		strbuf_release(&words);
	} else if (!rc) {
		/* What prepare wrote is written back now, not during the first run
		 * (which then paid for it: 4.1 s of loading against 1.6 s). */
		sync();
		if (sb_verbosity >= 1) {
			char wall[UNITS_BUF];
			note("prepare: done in %s", units_seconds(res.wall_s, UNITS_COARSE, false,
								  wall));
		}
	}
	record_result_release(&res);
	compare_run_release(&cr);
	return rc;
}

/* o->warmup rounds of every variant, recorded in OUT/warmup/ and left out
 * of runs.json, the tables and the checks; task K warms up its own variant
 * only, in OUT/warmup/task-K/. Returns -1 when the recorder failed. */
int run_warmups(struct session *s)
{
	const struct compare_opts *o = s->o;
	struct compare_setup setup = s->setup;
	size_t vfirst = 0, vend = o->nvariants;
	char *dir = xasprintf("%s/warmup", o->setup.out);
	int rc = 0;
	if (o->part == COMPARE_TASK) {
		int rep;
		compare_schedule(o->nvariants, o->task, &vfirst, &rep);
		vend = vfirst + 1;
		free(dir);
		dir = xasprintf("%s/warmup/task-%zu", o->setup.out, o->task);
	}
	setup.out = dir;
	for (int w = 1; w <= o->warmup && !rc && !s->interrupted; w++) {
		for (size_t vi = vfirst; vi < vend && !rc && !s->interrupted; vi++) {
			const struct pipeline_variant *v = o->variants[vi];
			struct compare_run cr = COMPARE_RUN_INIT;
			struct record_result res = RECORD_RESULT_INIT;
			struct trace_label label = { (char *)"warmup", (char *)"true" };
			if (s->ro.signals && take_signal(s, s->ro.signals))
				break;
			if (compare_plan_run(&setup, v, w, &cr) < 0) {
				rc = -1;
				break;
			}
			s->ro.mode = v->name;
			rc = run_one(&s->ro, &cr, &s->cache, &label, 1, &res);
			if (!rc) {
				struct strbuf words = STRBUF_INIT;
				char wall[UNITS_BUF];
				outcome_words(&res, &words);
				if (sb_verbosity >= 1)
					note("[warmup %d/%d] %s: %s, wall %s (left out of the "
					     "results)", w, o->warmup, v->name, words.buf,
					     units_seconds(res.wall_s, UNITS_COARSE, false, wall));
				strbuf_release(&words);
				if (res.stopped_by == STOPPED_SIGNAL)
					s->interrupted = res.exit_code;
			}
			record_result_release(&res);
			compare_run_release(&cr);
		}
	}
	free(dir);
	return rc;
}


/* A signal that came between runs (or after the last): the schedule stops. */
bool take_signal(struct session *s, const struct record_signals *sigs)
{
	int sig = record_signals_take(sigs);
	if (sig && !s->interrupted) {
		s->interrupted = 128 + sig;
		if (sb_verbosity >= 1)
			note("compare: received %s: no more runs; writing the results of the %zu "
			     "run(s) done", strsignal(sig), s->ndone);
	}
	return s->interrupted != 0;
}
