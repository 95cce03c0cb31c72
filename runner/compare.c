/* compare.c -- the compare engine: plan a pipeline's runs, run each under record_run, report */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "../analyze/analysis.h"
#include "../analyze/latents.h"
#include "../analyze/render.h"
#include "../analyze/table.h"
#include "../common/jsonw.h"
#include "../common/parse.h"
#include "../common/units.h"
#include "../common/util.h"
#include "../plots/plot.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "compare.h"
#include "compare_int.h"
#include "pipeline.h"
#include "git.h"
#include "guard.h"
#include "record.h"

/* ---- the pure parts (compare.h) ------------------------------------------ */

void compare_vars(const struct compare_setup *s, const char *variant, int rep,
		  struct kv_list *vars)
{
	const struct pipeline *p = s->p;
	kv_set(vars, "python", s->python);
	kv_set(vars, "pipeline_dir", p->dir);
	kv_set(vars, "seed", s->seed);
	kv_set(vars, "cache", s->cache);
	for (size_t i = 0; i < p->defaults.n; i++)
		kv_set(vars, p->defaults.items[i].key, p->defaults.items[i].value);
	for (size_t i = 0; s->sets && i < s->sets->n; i++)
		kv_set(vars, s->sets->items[i].key, s->sets->items[i].value);
	char *out = rep > 0 ? xasprintf("%s/%s-%d", s->out, variant, rep)
			    : xasprintf("%s/%s", s->out, variant);
	char run[16];
	snprintf(run, sizeof(run), "%d", rep);
	kv_set(vars, "out", out);
	kv_set(vars, "run", run);
	kv_set(vars, "mode", variant);
	free(out);
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Expand tmpl, or report which file and what field it came from. */
static char *expand_in(const struct pipeline *p, const char *what, const char *tmpl,
		       const struct kv_list *vars)
{
	char *s = expand_placeholders(tmpl, vars);
	if (!s)
		error("%s: cannot expand %s '%s'", p->path, what, tmpl);
	return s;
}

bool compare_variant_name_ok(const char *name)
{
	if (!name || !*name || name[0] == '.' || strlen(name) > COMPARE_VARIANT_NAME_MAX)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-'))
			return false;
	return true;
}

int compare_variant_name_check(const struct pipeline *p, const char *name)
{
	if (compare_variant_name_ok(name))
		return 0;
	struct strbuf q = STRBUF_INIT;
	json_escape(&q, name ? name : "");
	error("%s: variant name %s cannot name files in the output directory: use up to %d "
	      "letters, digits, '.', '_' and '-', not starting with '.'", p->path, q.buf,
	      COMPARE_VARIANT_NAME_MAX);
	strbuf_release(&q);
	return -1;
}

/* Expand a NULL-terminated template list into a new one; NULL after error(). */
static char **expand_strv(const struct pipeline *p, const char *what, char *const *tmpl,
			  const struct kv_list *vars)
{
	size_t n = 0;
	for (char *const *a = tmpl; a && *a; a++)
		n++;
	char **v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = expand_in(p, what, tmpl[i], vars))) {
			strv_free(v);
			return NULL;
		}
	return v;
}

/* Plan command (+ v's args) as run rep of v; rep 0: "V" instead of "V-N". */
static int plan_command(const struct compare_setup *s, const struct pipeline_variant *v, int rep,
			char *const *command, struct compare_run *r)
{
	const struct pipeline *p = s->p;
	struct kv_list vars = { 0 }, env = { 0 };
	struct strbuf pp = STRBUF_INIT;
	size_t n = 0, k = 0;
	int ret = -1;

	*r = (struct compare_run)COMPARE_RUN_INIT;
	if (compare_variant_name_check(p, v->name) < 0)
		return -1;
	compare_vars(s, v->name, rep, &vars);
	r->id = rep > 0 ? xasprintf("%s-%d", v->name, rep) : xstrdup(v->name);
	r->out_dir = xasprintf("%s/%s", s->out, r->id);
	r->trace_path = xasprintf("%s/%s.trace.jsonl.zst", s->out, r->id);
	r->latents_dir = xasprintf("%s/%s.latents", s->out, r->id);
	r->log_path = xasprintf("%s/%s.log", s->out, r->id);
	r->err_path = xasprintf("%s/%s.err", s->out, r->id);

	for (char *const *a = command; a && *a; a++)
		n++;
	for (char **a = v->args; a && *a; a++)
		n++;
	r->argv = xcalloc(n + 1, sizeof(*r->argv));
	for (char *const *a = command; a && *a; a++)
		if (!(r->argv[k++] = expand_in(p, "command argument", *a, &vars)))
			goto out;
	for (char **a = v->args; a && *a; a++)
		if (!(r->argv[k++] = expand_in(p, "variant argument", *a, &vars)))
			goto out;
	if (!(r->files = expand_strv(p, "files entry", p->files, &vars)))
		goto out;

	strbuf_addf(&pp, "%s/site:%s", s->probe_dir, s->probe_dir);
	for (char **e = p->pythonpath; e && *e; e++) {
		char *x = expand_in(p, "pythonpath entry", *e, &vars);
		if (!x)
			goto out;
		strbuf_addf(&pp, ":%s", x);
		free(x);
	}
	if (s->old_pythonpath && *s->old_pythonpath)
		strbuf_addf(&pp, ":%s", s->old_pythonpath);
	kv_set(&env, "PYTHONPATH", pp.buf);
	if (s->adapter) {
		kv_set(&env, "STAGEBENCH_ADAPTER", s->adapter);
	} else if (p->adapter) {
		char *x = expand_in(p, "adapter", p->adapter, &vars);
		if (!x)
			goto out;
		kv_set(&env, "STAGEBENCH_ADAPTER", x);
		free(x);
	}
	const struct kv_list *lists[2] = { &p->env, &v->env };
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			char *x = expand_in(p, "environment value", lists[l]->items[i].value, &vars);
			if (!x)
				goto out;
			kv_set(&env, lists[l]->items[i].key, x);
			free(x);
		}
	}
	r->env = xcalloc(env.n + 1, sizeof(*r->env));
	for (size_t i = 0; i < env.n; i++)
		r->env[i] = xasprintf("%s=%s", env.items[i].key, env.items[i].value);
	ret = 0;
out:
	if (ret)
		compare_run_release(r);
	strbuf_release(&pp);
	kv_release(&env);
	kv_release(&vars);
	return ret;
}

int compare_plan_run(const struct compare_setup *s, const struct pipeline_variant *v, int rep,
		     struct compare_run *r)
{
	return plan_command(s, v, rep, s->p->command, r);
}

int compare_plan_prepare(const struct compare_setup *s, struct compare_run *r)
{
	struct pipeline_variant pv = { (char *)"prepare", { 0 }, NULL };
	if (plan_command(s, &pv, 0, s->p->prepare, r) < 0)
		return -1;
	/* not a measured run: without the adapter, whose hooks would never fire there
	 * (the probe fails a run whose adapter never engaged) */
	compare_run_drop_env(r, "STAGEBENCH_ADAPTER");
	return 0;
}

void compare_run_drop_env(struct compare_run *r, const char *key)
{
	size_t k = 0, n = strlen(key);
	for (size_t i = 0; r->env && r->env[i]; i++) {
		if (!strncmp(r->env[i], key, n) && r->env[i][n] == '=')
			free(r->env[i]);
		else
			r->env[k++] = r->env[i];
	}
	if (r->env)
		r->env[k] = NULL;
}

void compare_plan_adapter(const char *probe_dir, const char *adapter, bool staged,
			  const char *old_pythonpath, struct compare_run *r)
{
	struct strbuf pp = STRBUF_INIT;
	char *abs = NULL;
	size_t k = 0;

	*r = (struct compare_run)COMPARE_RUN_INIT;
	strbuf_addf(&pp, "%s/site:%s", probe_dir, probe_dir);
	if (adapter && (strchr(adapter, '/') || str_ends_with(adapter, ".py"))) {
		abs = compare_absolute(adapter);
		const char *slash = strrchr(abs, '/');
		strbuf_addf(&pp, ":%.*s", (int)(slash - abs), abs);
	}
	if (old_pythonpath && *old_pythonpath)
		strbuf_addf(&pp, ":%s", old_pythonpath);
	r->env = xcalloc(4, sizeof(*r->env));
	r->env[k++] = xasprintf("PYTHONPATH=%s", pp.buf);
	if (adapter)
		r->env[k++] = xasprintf("STAGEBENCH_ADAPTER=%s", abs ? abs : adapter);
	if (staged)
		r->env[k++] = xstrdup("STAGEBENCH_STAGED=1");
	free(abs);
	strbuf_release(&pp);
}

void compare_run_release(struct compare_run *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->out_dir);
	free(r->trace_path);
	free(r->latents_dir);
	free(r->log_path);
	free(r->err_path);
	strv_free(r->argv);
	strv_free(r->env);
	strv_free(r->files);
	*r = (struct compare_run)COMPARE_RUN_INIT;
}

int compare_set_option(const struct pipeline *p, const char *arg, struct kv_list *sets,
		       struct strbuf *why)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg) {
		if (why)
			strbuf_addf(why, "option '--set': invalid value '%s' (KEY=VALUE)", arg);
		return -1;
	}
	char *key = xstrndup(arg, (size_t)(eq - arg));
	if (!kv_get(&p->defaults, key)) {
		if (why) {
			strbuf_addf(why, "option '--set': %s has no default '%s' (it has: ", p->path,
				    key);
			for (size_t i = 0; i < p->defaults.n; i++)
				strbuf_addf(why, "%s%s", i ? ", " : "", p->defaults.items[i].key);
			strbuf_addstr(why, p->defaults.n ? ")" : "none)");
		}
		free(key);
		return -1;
	}
	kv_set(sets, key, eq + 1);
	free(key);
	return 0;
}

bool compare_is_dir(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static bool exists(const char *path)
{
	struct stat st;
	return !stat(path, &st);
}

char *compare_find_share(const char *home, const char *exe, const char *what)
{
	char *cands[3] = { NULL, NULL, NULL };
	char *found = NULL;
	if (home && *home)
		cands[0] = xasprintf("%s/%s", home, what);
	if (exe) {
		const char *slash = strrchr(exe, '/');
		char *dir = slash ? xstrndup(exe, (size_t)(slash - exe)) : xstrdup(".");
		cands[1] = xasprintf("%s/../%s", dir, what);
		cands[2] = xasprintf("%s/../share/stagebench/%s", dir, what);
		free(dir);
	}
	for (size_t i = 0; i < 3 && !found; i++)
		if (cands[i] && exists(cands[i]))
			found = realpath(cands[i], NULL);
	for (size_t i = 0; i < 3; i++)
		free(cands[i]);
	return found;
}

char *compare_self_exe(void)
{
#ifdef __APPLE__
	char buf[PATH_MAX];
	uint32_t size = sizeof(buf);
	if (_NSGetExecutablePath(buf, &size))
		return NULL;
	return realpath(buf, NULL);
#else
	return realpath("/proc/self/exe", NULL);
#endif
}

const char *compare_python(void)
{
	const char *e = getenv("STAGEBENCH_PYTHON");
	if (e && *e)
		return e;
	if (!access("/usr/bin/python3", X_OK))
		return "/usr/bin/python3";
	return "python3";
}

char *compare_default_cache(const char *name)
{
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && *x)
		return xasprintf("%s/stagebench/%s", x, name);
	const char *h = getenv("HOME");
	if (h && *h)
		return xasprintf("%s/.cache/stagebench/%s", h, name);
	return xasprintf(".cache/stagebench/%s", name);
}

char *compare_default_out(const char *date, const char *name, const char *commit, bool dirty)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "runs/%s-", date);
	for (const char *c = name; *c; c++)
		strbuf_addch(&sb, *c == '/' ? '_' : *c);
	if (commit)
		strbuf_addf(&sb, "-%s%s", commit, dirty ? "-dirty" : "");
	return strbuf_detach(&sb);
}

void compare_schedule(size_t nvariants, size_t k, size_t *variant, int *rep)
{
	if (!nvariants)
		BUG("compare_schedule with no variants");
	*variant = k % nvariants;
	*rep = (int)(k / nvariants) + 1;
}

/* ---- running and reporting ------------------------------------------------ */

/* A fresh default directory: BASE, else BASE-2, BASE-3 ... */
char *compare_fresh_dir(const char *base)
{
	if (!exists(base))
		return xstrdup(base);
	for (int i = 2;; i++) {
		char *d = xasprintf("%s-%d", base, i);
		if (!exists(d))
			return d;
		free(d);
	}
}

char *compare_absolute(const char *p)
{
	if (p[0] == '/')
		return xstrdup(p);
	char *cwd = getcwd(NULL, 0);
	char *a = cwd ? xasprintf("%s/%s", cwd, p) : xstrdup(p);
	free(cwd);
	return a;
}

/* Run one plan under record_run with the command's stdout in its log and its
 * stderr copied to its .err file, the pipeline's files brought to the cache
 * state first (state: NULL for no trace, as for prepare). */
static int run_one(const struct record_opts *base, const struct compare_run *cr,
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
	char *extra = state ? cache_state_json(*state, &cache) : NULL;
	o.trace_path = state ? cr->trace_path : NULL;
	o.latents_dir = state ? cr->latents_dir : NULL;
	o.labels = labels;
	o.nlabels = nlabels;
	o.env_set = (const char **)cr->env;
	o.stdout_fd = log;
	o.stderr_copy_fd = err;
	o.start_extra = extra;
	int rc = record_run(&o, cr->argv, res);
	close(log);
	close(err);
	free(extra);
	return rc;
}

/* What happened to a run, in words, for the progress line. */
static void outcome_words(const struct record_result *res, struct strbuf *sb)
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
	int rc = run_one(&s->ro, &cr, &s->cache, labels, s->campaign ? 4 : 3, &res);
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

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

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
	} else if (!res.started || res.stopped_by || res.exit_code || !file_exists(plan)) {
		struct strbuf words = STRBUF_INIT;
		outcome_words(&res, &words);
		rc = error("learn: the %s run that learns the plan %s%s: nothing else runs (its "
			   "output is in %s, its stderr in %s)", v->name,
			   file_exists(plan) ? "" : "wrote no plan: ", words.buf, cr.log_path,
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
static int needs_plan(struct session *s)
{
	if (s->setup.p->adapter || s->setup.adapter || s->interrupted)
		return 0;
	bool staged = false;
	for (size_t i = 0; i < s->o->nvariants; i++)
		staged |= pipeline_variant_staged(s->setup.p, s->o->variants[i]);
	return staged ? run_learn(s) : 0; /* nothing to stage: no plan needed */
}

/* stagebench learn: prepare, the learning run, the plan copied to o->learn_to. */
static int learn_only(struct session *s)
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

/* A warning for each completed run much slower than the variant's other
 * completed runs, with what may be why. */
static void warn_slow_runs(const struct session *s)
{
	double *others = xcalloc(s->ndone + 1, sizeof(*others));
	for (size_t i = 0; i < s->ndone; i++) {
		const struct done_run *d = &s->done[i];
		size_t n = 0;
		double median;
		if (!d->completed)
			continue;
		for (size_t j = 0; j < s->ndone; j++)
			if (j != i && s->done[j].completed && !strcmp(s->done[j].mode, d->mode))
				others[n++] = s->done[j].wall_s;
		if (!run_much_slower(d->wall_s, others, n, &median))
			continue;
		char took[UNITS_BUF], med[UNITS_BUF];
		warning("%s run %d took %s, %.1f times the %s of the other %s run%s: %s",
			d->mode, d->rep, units_seconds(d->wall_s, UNITS_COARSE, false, took),
			d->wall_s / median, units_seconds(median, UNITS_COARSE, false, med), d->mode,
			n == 1 ? "" : "s",
			d->rep == 1 ? "a first run often pays for building or fetching files, a cold "
				      "page cache or warming caches (a 'prepare' command in the "
				      "pipeline file, --warmup N or --cache-state warm make the runs "
				      "alike)"
				    : "the machine may have been busy (other processes, swapping) "
				      "during it");
	}
	free(others);
}

static int write_text(const char *dir, const char *name, const struct strbuf *sb)
{
	char *path = xasprintf("%s/%s", dir, name);
	int rc = write_file(path, sb->buf ? sb->buf : "", sb->len);
	free(path);
	return rc;
}

/* The run summary: one row per run. */
static void runs_md(const struct done_run *d, size_t n, struct strbuf *o)
{
	strbuf_addstr(o, "| run | outcome | peak footprint | wall | trace |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		char buf[96], fp[32];
		if (!d[i].read) {
			strbuf_addf(o, "| %s | trace unreadable | | | %s |\n", d[i].id, d[i].trace_path);
			continue;
		}
		const struct analysis *a = &d[i].a;
		const char *slash = strrchr(d[i].trace_path, '/');
		strbuf_addf(o, "| %s | %s", d[i].id, analysis_outcome_str(a, buf, sizeof(buf)));
		if (a->outcome != RUN_COMPLETED) {
			const struct stage_stats *st = a->nstages ? &a->stages[a->ran_to] : NULL;
			if (st) {
				strbuf_addstr(o, " in ");
				render_md_text(o, st->name); /* the trace's: '|', line breaks */
			}
			if (a->reason) {
				strbuf_addstr(o, ": ");
				render_md_text(o, a->reason);
			}
		}
		if (a->has_footprint) {
			format_gb(a->peak_footprint, fp);
			strbuf_addf(o, " | %s", fp);
		} else {
			strbuf_addstr(o, " | no sample");
		}
		strbuf_addstr(o, " | ");
		units_add_seconds(o, a->wall_s, UNITS_COARSE, false);
		strbuf_addf(o, " | %s |\n", slash ? slash + 1 : d[i].trace_path);
	}
}

bool compare_error_line(const char *text, size_t len, struct strbuf *out)
{
	static const char tb[] = "Traceback (most recent call last):";
	static const char pr[] = "stagebench_probe: ";
	const char *end = text + len, *found = NULL, *probe = NULL, *last = NULL;
	bool in_tb = false;
	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n && p[n - 1] == '\r')
			n--;
		bool blank = true;
		for (size_t i = 0; i < n && blank; i++)
			blank = p[i] == ' ' || p[i] == '\t';
		if (n == sizeof(tb) - 1 && !memcmp(p, tb, n)) {
			in_tb = true;
			found = NULL;
		} else if (in_tb && !blank && p[0] != ' ' && p[0] != '\t') {
			found = p; /* the exception line: the first unindented one */
			in_tb = false;
		}
		if (!blank && n > sizeof(pr) - 1 && !memcmp(p, pr, sizeof(pr) - 1) &&
		    !str_starts_with(p + sizeof(pr) - 1, "the run is a failure"))
			probe = p;
		if (!blank)
			last = p;
		p = nl ? nl + 1 : end;
	}
	const char *pick = found ? found : probe ? probe : last;
	if (!pick)
		return false;
	size_t n = 0;
	while (pick + n < end && pick[n] != '\n' && pick[n] != '\r')
		n++;
	if (n > COMPARE_ERROR_LINE_MAX) {
		n = COMPARE_ERROR_LINE_MAX;
		while (n && ((unsigned char)pick[n] & 0xc0) == 0x80)
			n--; /* not inside a UTF-8 character */
	}
	strbuf_add(out, pick, n);
	return true;
}

/* The runs whose command failed on their own, first of every finding: which
 * stage each died in, the error it printed last, where its stderr is. */
static void report_failed(const struct done_run *d, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		if (!d[i].failed)
			continue;
		const struct analysis *a = &d[i].a;
		strbuf_addf(&sb, "- %s run %d failed", d[i].mode, d[i].rep);
		/* names and the error line are file contents: one line, controls escaped */
		if (d[i].read && a->nstages) {
			strbuf_addstr(&sb, " in ");
			render_term_text(&sb, a->stages[a->ran_to].name);
		}
		char *text = NULL;
		size_t len = 0;
		struct strbuf line = STRBUF_INIT;
		if (!access(d[i].err_path, R_OK) &&
		    !read_file_tail(d[i].err_path, 65536, &text, &len) &&
		    compare_error_line(text, len, &line)) {
			strbuf_addstr(&sb, ": ");
			render_term_text(&sb, line.buf);
		}
		strbuf_release(&line);
		free(text);
		if (d[i].read && a->outcome == RUN_SIGNAL)
			strbuf_addf(&sb, " (killed by signal %d", a->signal);
		else if (d[i].read)
			strbuf_addf(&sb, " (exit code %d", a->exit_code);
		else
			strbuf_addstr(&sb, " (");
		strbuf_addf(&sb, "%sits stderr: %s)\n", d[i].read ? "; " : "", d[i].err_path);
	}
	if (sb.len)
		printf("## Failed runs\n\n%s\n", sb.buf);
	strbuf_release(&sb);
}

/* table.md, printed too. Returns 0 or -1. */
static int report_table(const char *out, const struct done_run *d, size_t n, size_t nread)
{
	int rc = 0;
	struct table_run *tr = xcalloc(nread, sizeof(*tr));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i].read)
			tr[k++].a = d[i].a; /* shallow: d[i].a keeps ownership */
	struct table t = TABLE_INIT;
	struct strbuf tmd = STRBUF_INIT;
	if (table_build(&t, tr, nread, NULL, 0) < 0) {
		rc = -1;
	} else {
		table_render_md(&t, &tmd);
		if (write_text(out, "table.md", &tmd))
			rc = -1;
	}
	printf("## Per-stage peak footprint\n\n%s\n", strbuf_str(&tmd));
	table_release(&t);
	strbuf_release(&tmd);
	free(tr);
	return rc;
}

/* The latent findings (latent_pair_is_finding), except a latent missing from
 * a run that did not get to the end (stopped by the guard or a signal, no end
 * record): the table already says how far that run got. */
static size_t findings_of_finished(const struct latent_set *ls)
{
	size_t n = 0;
	for (size_t i = 0; i < ls->nlatents; i++) {
		const struct latent *l = &ls->latents[i];
		for (size_t j = 0; j < l->npairs; j++) {
			const struct latent_pair *p = &l->pairs[j];
			if (!latent_pair_is_finding(p))
				continue;
			if (p->diff.result == LR_MISSING &&
			    (ls->runs[p->a].note || ls->runs[p->b].note))
				continue;
			n++;
		}
	}
	return n;
}

/* latents.md, printed too. Returns 0, or -1; *findings as
 * findings_of_finished(). */
static int report_latents(const char *out, const char *baseline, const struct done_run *d,
			  size_t n, size_t *findings)
{
	int rc = 0;
	struct latent_set ls = LATENT_SET_INIT;
	struct strbuf lmd = STRBUF_INIT;
	*findings = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i].read)
			latent_set_add_trace(&ls, d[i].id, d[i].mode, NULL, &d[i].tr);
	if (ls.nruns < 2) {
		strbuf_addstr(&lmd, "Latents: fewer than two runs, nothing to compare.\n");
	} else if (latent_compare(&ls, baseline) < 0) {
		rc = -1;
		strbuf_addstr(&lmd, "Latents: a copy could not be read (see the error above).\n");
	} else {
		if (!ls.nlatents)
			warning("no latent events in the traces of '%s': does the pipeline's adapter "
				"fingerprint its outputs?", out);
		latent_format_md(&ls, &lmd);
		*findings = findings_of_finished(&ls);
	}
	latent_set_release(&ls);
	if (write_text(out, "latents.md", &lmd))
		rc = -1;
	printf("## Latents\n\n%s\n", strbuf_str(&lmd));
	strbuf_release(&lmd);
	return rc;
}

/* The charts; a missing gnuplot is a warning. Returns -1 when gnuplot could not
 * draw them (a full disk: no chart is kept), else 0. */
static int report_charts(const char *out, const struct done_run *d, size_t n, size_t nread,
			 const struct run_list *runs)
{
	int rc = 0;
	struct trace *traces = xcalloc(nread, sizeof(*traces));
	const struct run_entry **ents = xcalloc(nread, sizeof(*ents));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!d[i].read || !d[i].a.has_footprint)
			continue; /* nothing to draw (a run stopped before its first sample) */
		traces[k] = d[i].tr; /* shallow */
		ents[k++] = &runs->items[i];
	}
	struct plot_opts po = PLOT_OPTS_INIT;
	po.out_dir = out;
	po.quiet_paths = true;
	if (!k)
		warning("no run has a footprint sample: no charts");
	else if (!plot_have_gnuplot(NULL))
		warning(PLOT_GNUPLOT_MISSING);
	else if (plot_runs(&po, traces, ents, k) < 0)
		rc = error("the charts were not drawn (see above); the tables are in '%s'", out);
	else if (sb_verbosity >= 1)
		note("charts: %s/memory.png, %s/stages.png", out, out);
	free(traces);
	free(ents);
	return rc;
}

/* Read the traces, print and write the table, the latents, the summary and
 * the charts. Returns 0, or -1 when something could not be read or written;
 * *findings as report_latents(). */
static int report(const struct session *s, bool charts, size_t *findings)
{
	const char *out = s->o->setup.out;
	struct done_run *d = s->done;
	size_t n = s->ndone, nread = 0;
	int rc = 0;
	*findings = 0;
	for (size_t i = 0; i < n; i++) {
		const struct run_entry *e = &s->runs.items[i];
		if (trace_read(d[i].trace_path, &d[i].tr) < 0 && !d[i].tr.has_start) {
			rc = -1;
			continue;
		}
		if (analysis_run(&d[i].tr, e, &d[i].a) < 0) {
			rc = -1;
			continue;
		}
		d[i].read = true;
		nread++;
	}
	if (!nread)
		return error("no run of '%s' could be read", out);
	if (report_table(out, d, n, nread) < 0)
		rc = -1;
	report_failed(d, n);
	if (report_latents(out, NULL, d, n, findings) < 0)
		rc = -1;
	struct strbuf rmd = STRBUF_INIT;
	runs_md(d, n, &rmd);
	strbuf_addstr(&rmd, strbuf_str(&s->missing));
	printf("## Runs\n\n%s", strbuf_str(&rmd));
	strbuf_release(&rmd);
	fflush(stdout);
	if (charts && report_charts(out, d, n, nread, &s->runs) < 0)
		rc = -1;
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
	free(s->campaign);
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
	s.runs = (struct run_list)RUN_LIST_INIT;
	s.total = o->nvariants * (size_t)o->reps;
	s.done = xcalloc(s.total ? s.total : 1, sizeof(*s.done));
	s.runs_path = xasprintf("%s/runs.json", o->setup.out);
	s.setup = o->setup;
	s.cache = o->cache_state_given ? o->cache_state
		  : o->setup.p->files && o->setup.p->files[0] ? CACHE_WARM : CACHE_AS_IS;
	int r = o->part == COMPARE_TASK ? run_task(&s)
		: o->part == COMPARE_LEARN ? 0 : campaign_of(&s);
	if (o->part == COMPARE_PLAN && !r)
		r = print_plan(o, s.total);
	if (!r && o->part == COMPARE_MERGE && gather(&s) < 0)
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
	warn_slow_runs(&s);
	int rc = s.rc;
	size_t findings = 0;
	if (s.ndone) {
		if (report(&s, o->charts, &findings) < 0)
			rc = SB_EXIT_FAILURE;
		if (sb_verbosity >= 1)
			note("results in %s (table.md, latents.md, runs.json)", o->setup.out);
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
