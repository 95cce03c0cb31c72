/* compare.c -- compare's session: the runs on their schedule, from start to report; one
 * run (and prepare, the warm-ups) is in session.c, its planning in plan.c, learning a
 * plan in learn.c, --plan/--task/--merge in compare_parts.c, the report in report.c */
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "compare.h"
#include "compare_int.h"
#include "../conditions.h"
#include "../pipeline.h"
#include "../record/record.h"

static void session_release(struct session *s)
{
	for (size_t i = 0; i < s->ndone; i++) {
		free(s->done[i].id);
		free(s->done[i].mode);
		free(s->done[i].trace_path);
		free(s->done[i].err_path);
		trace_release(&s->done[i].tr);
		analysis_release(&s->done[i].a);
	}
	free(s->done);
	runs_release(&s->runs);
	free(s->runs_path);
	free(s->plan_path);
	strbuf_release(&s->missing);
	strbuf_release(&s->problems);
	free(s->campaign);
	free(s->largest_peak);
	runs_release(&s->planned);
}

int compare_execute(const struct compare_opts *o)
{
	struct session s;
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.ro = (struct record_opts)RECORD_OPTS_INIT;
	s.ro.interval_ns = o->interval_ns;
	s.ro.guarded = true;
	s.ro.guard = o->guard;
	s.ro.name = "compare";
	s.ro.summary = false;
	s.ro.commit_dir = o->commit_dir;
	s.ro.no_peak_reset = o->no_peak_reset;
	s.ro.prime_bytes = o->no_prime ? PRIME_OFF : 0;
	s.runs = (struct run_list)RUN_LIST_INIT;
	s.total = o->nvariants * (size_t)o->reps;
	s.done = xcalloc(s.total ? s.total : 1, sizeof(*s.done));
	s.largest_peak = xcalloc(o->nvariants ? o->nvariants : 1, sizeof(*s.largest_peak));
	s.runs_path = xasprintf("%s/runs.json", o->setup.out);
	s.setup = o->setup;
	s.cache = o->cache_state_given ? o->cache_state
		  : o->setup.p->files && o->setup.p->files[0] ? CACHE_WARM : CACHE_AS_IS;
	int r = o->part == COMPARE_TASK ? run_task(&s)
		: o->part == COMPARE_LEARN ? 0 : parts_campaign(&s);
	if (o->part == COMPARE_PLAN && !r)
		r = print_plan(o, s.total);
	if (!r && o->part == COMPARE_MERGE && parts_gather(&s) < 0)
		r = SB_EXIT_FAILURE;
	if (r || o->part == COMPARE_PLAN || o->part == COMPARE_TASK) {
		session_release(&s);
		return r;
	}
	if (sb_verbosity >= 1 && o->part != COMPARE_LEARN)
		note("compare: %s, variants %zu x %d runs, seed %s, into %s", o->setup.p->path,
		     o->nvariants, o->reps, o->setup.seed, o->setup.out);
	/* Our signal pipe for the whole schedule: a signal between two runs waits
	 * in it (record_run sees it before a start, we see it after a run). */
	struct record_signals sigs;
	memset(&sigs, 0, sizeof(sigs));
	if (record_signals_install(&sigs) < 0) {
		session_release(&s);
		return SB_EXIT_FAILURE;
	}
	s.ro.signals = &sigs;
	if (o->part == COMPARE_LEARN) {
		r = learn_only(&s);
		record_signals_restore(&sigs);
		session_release(&s);
		return r;
	}
	if (o->part == COMPARE_ALL && (run_prepare(&s) < 0 || needs_plan(&s) < 0 ||
				       run_warmups(&s) < 0)) {
		int rc = s.interrupted ? s.interrupted : SB_EXIT_FAILURE;
		record_signals_restore(&sigs);
		session_release(&s);
		return rc;
	}
	for (size_t k = 0; o->part == COMPARE_ALL && k < s.total && !s.interrupted; k++) {
		if (take_signal(&s, &sigs))
			break;
		if (run_k(&s, k) < 0) {
			s.rc = SB_EXIT_FAILURE;
			break;
		}
	}
	take_signal(&s, &sigs);
	compare_warn_slow_runs(&s);
	int rc = s.rc;
	size_t findings = 0;
	if (s.ndone) {
		if (compare_report(&s, o->charts, &findings) < 0)
			rc = SB_EXIT_FAILURE;
		if (sb_verbosity >= 1)
			note("results in %s (report.html, table.md, latents.md, runs.json)", o->setup.out);
	}
	/* One that came while reporting (the report is complete) or until the
	 * handlers are back: it still sets the exit status; one after that ends
	 * the process by its default action, 128+N as well. */
	int late = record_signals_restore(&sigs);
	if (late && !s.interrupted) {
		s.interrupted = 128 + late;
		if (sb_verbosity >= 1)
			note("compare: received %s after the report was written", strsignal(late));
	}
	if (rc == SB_EXIT_OK && (findings || s.failed || s.lost)) {
		rc = SB_EXIT_FINDING;
		if (sb_verbosity >= 1)
			note("compare: %zu failed run(s)%s, %zu lost run(s), %zu latent finding(s): "
			     "exit 1", s.failed, s.failed ? " (see 'Failed runs')" : "", s.lost,
			     findings);
	}
	if (s.interrupted)
		rc = s.interrupted;
	session_release(&s);
	return rc;
}
