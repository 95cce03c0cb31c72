/* learn.c -- a staging plan learned from one eager run (compare without an adapter,
 * stagebench learn) */

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/path.h"
#include "../../common/util.h"
#include "compare_int.h"
#include "../pipeline.h"

/* The variant the plan is learned from: the first given that does not set
 * STAGEBENCH_STAGED, else the pipeline's first such, else the first given. */
static const struct pipeline_variant *learn_variant(const struct compare_opts *o)
{
	const struct pipeline *p = o->setup.p;
	for (size_t i = 0; i < o->nvariants; i++)
		if (!pipeline_variant_staged(p, o->variants[i]))
			return o->variants[i];
	for (size_t i = 0; i < p->nvariants; i++)
		if (!pipeline_variant_staged(p, &p->variants[i]))
			return &p->variants[i];
	return o->variants[0];
}

/* One eager run with STAGEBENCH_LEARN=OUT/plan.py (in OUT/learn/); then every
 * run takes the plan as its adapter. Returns 0, or -1 after error(). */
static int run_learn(struct session *s)
{
	const struct compare_opts *o = s->o;
	const struct pipeline_variant *v = learn_variant(o);
	struct compare_setup setup = s->setup;
	struct compare_run cr = COMPARE_RUN_INIT;
	struct record_result res = RECORD_RESULT_INIT;
	struct trace_label label = { (char *)"learn", (char *)"true" };
	char *dir = xasprintf("%s/learn", o->setup.out);
	char *plan = xasprintf("%s/plan.py", o->setup.out);
	int rc = -1;
	setup.out = dir;
	if (compare_plan_run(&setup, v, 0, &cr) < 0)
		goto out;
	compare_run_drop_env(&cr, "STAGEBENCH_ADAPTER"); /* learned from the script alone */
	size_t n = 0;
	while (cr.env[n])
		n++;
	cr.env = xrealloc(cr.env, (n + 2) * sizeof(*cr.env));
	cr.env[n] = xasprintf("STAGEBENCH_LEARN=%s", plan);
	cr.env[n + 1] = NULL;
	unlink(plan);
	if (sb_verbosity >= 1)
		note("learn: no adapter in %s: learning a staging plan from one %s run "
		     "(in %s)", o->setup.p->path, v->name, dir);
	s->ro.mode = v->name;
	s->ro.status_label = "learning the plan";
	rc = run_one(&s->ro, &cr, &s->cache, &label, 1, &res);
	s->ro.status_label = NULL;
	if (rc)
		goto out;
	if (res.stopped_by == STOPPED_SIGNAL) {
		s->interrupted = res.exit_code;
		rc = -1;
	} else if (!res.started || res.stopped_by || res.exit_code || !path_exists(plan)) {
		struct strbuf words = STRBUF_INIT;
		outcome_words(&res, &words);
		rc = error("learn: the %s run that learns the plan %s%s: nothing else runs (its "
			   "output is in %s, its stderr in %s)", v->name,
			   path_exists(plan) ? "" : "wrote no plan: ", words.buf, cr.log_path,
			   cr.err_path);
		strbuf_release(&words);
	} else {
		if (sb_verbosity >= 1)
			note("learn: plan in %s (used as the adapter of every run; keep it with "
			     "'stagebench learn')", plan);
		s->plan_path = plan;
		plan = NULL;
		s->setup.adapter = s->plan_path;
	}
out:
	record_result_release(&res);
	compare_run_release(&cr);
	free(dir);
	free(plan);
	return rc;
}

/* A pipeline without an adapter, one of whose variants is staged: learn the
 * plan first. */
int needs_plan(struct session *s)
{
	if (s->setup.p->adapter || s->setup.adapter || s->interrupted)
		return 0;
	bool staged = false;
	for (size_t i = 0; i < s->o->nvariants; i++)
		staged |= pipeline_variant_staged(s->setup.p, s->o->variants[i]);
	return staged ? run_learn(s) : 0; /* nothing to stage: no plan needed */
}

/* stagebench learn: prepare, the learning run, the plan copied to o->learn_to. */
int learn_only(struct session *s)
{
	const struct compare_opts *o = s->o;
	if (run_prepare(s) < 0 || run_learn(s) < 0)
		return s->interrupted ? s->interrupted : SB_EXIT_FAILURE;
	if (s->interrupted)
		return s->interrupted;
	char *data = NULL;
	size_t len = 0;
	int rc = SB_EXIT_OK;
	if (read_file(s->plan_path, &data, &len) < 0 || write_file(o->learn_to, data, len) < 0)
		rc = SB_EXIT_FAILURE;
	else if (sb_verbosity >= 1)
		note("learn: wrote %s; name it as the pipeline file's \"adapter\" to keep it",
		     o->learn_to);
	free(data);
	return rc;
}
