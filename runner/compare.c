/* compare.c -- `stagebench compare`: run a pipeline's variants alternately, guarded and recorded, then report */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
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
#include "../analyze/table.h"
#include "../cli/commands.h"
#include "../common/parse.h"
#include "../common/util.h"
#include "../plots/plot.h"
#include "../traces/pipeline.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "compare.h"
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
	char *out = xasprintf("%s/%s-%d", s->out, variant, rep);
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

int compare_plan_run(const struct compare_setup *s, const struct pipeline_variant *v, int rep,
		     struct compare_run *r)
{
	const struct pipeline *p = s->p;
	struct kv_list vars = { 0 }, env = { 0 };
	struct strbuf pp = STRBUF_INIT;
	size_t n = 0, k = 0;
	int ret = -1;

	*r = (struct compare_run)COMPARE_RUN_INIT;
	compare_vars(s, v->name, rep, &vars);
	r->id = xasprintf("%s-%d", v->name, rep);
	r->out_dir = xasprintf("%s/%s", s->out, r->id);
	r->trace_path = xasprintf("%s/%s.trace.jsonl.zst", s->out, r->id);
	r->latents_dir = xasprintf("%s/%s.latents", s->out, r->id);
	r->log_path = xasprintf("%s/%s.log", s->out, r->id);

	for (char **a = p->command; a && *a; a++)
		n++;
	for (char **a = v->args; a && *a; a++)
		n++;
	r->argv = xcalloc(n + 1, sizeof(*r->argv));
	for (char **a = p->command; a && *a; a++)
		if (!(r->argv[k++] = expand_in(p, "command argument", *a, &vars)))
			goto out;
	for (char **a = v->args; a && *a; a++)
		if (!(r->argv[k++] = expand_in(p, "variant argument", *a, &vars)))
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
	if (p->adapter) {
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

void compare_run_release(struct compare_run *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->out_dir);
	free(r->trace_path);
	free(r->latents_dir);
	free(r->log_path);
	strv_free(r->argv);
	strv_free(r->env);
	*r = (struct compare_run)COMPARE_RUN_INIT;
}

int compare_set_option(const struct pipeline *p, const char *arg, struct kv_list *sets)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return error("option '--set': expected KEY=VALUE, got '%s'", arg);
	char *key = xstrndup(arg, (size_t)(eq - arg));
	if (!kv_get(&p->defaults, key)) {
		struct strbuf have = STRBUF_INIT;
		for (size_t i = 0; i < p->defaults.n; i++)
			strbuf_addf(&have, "%s%s", i ? ", " : "", p->defaults.items[i].key);
		error("option '--set': %s has no default '%s' (it has: %s)", p->path, key,
		      have.len ? have.buf : "none");
		strbuf_release(&have);
		free(key);
		return -1;
	}
	kv_set(sets, key, eq + 1);
	free(key);
	return 0;
}

static bool is_dir(const char *path)
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

/* ---- the command ----------------------------------------------------------- */

static const char compare_usage[] =
	"usage: stagebench compare [VARIANT...] [--pipeline FILE] [--seed N] [--reps N] [--out DIR]\n"
	"                          [--set KEY=VALUE]... [--size S] [--cache DIR] [--interval DUR]\n"
	"                          [--by-commit] [GUARD OPTIONS] [-q|-v]\n"
	"\n"
	"Run a pipeline's variants alternately (E S E S ...), each run its own guarded,\n"
	"recorded process with the Python probe on PYTHONPATH (staged loading, stage\n"
	"events, latent copies), then print the per-stage peak table, the latent\n"
	"comparison and the run summary.\n"
	"\n"
	"  VARIANT...          variants of the pipeline file, in this order (default:\n"
	"                      eager staged when the file has both, else all of them)\n"
	"  --pipeline FILE     pipeline file (JSON; default: the bundled demo,\n"
	"                      $STAGEBENCH_HOME/demo/pipeline.json or demo/ beside the\n"
	"                      installed binary)\n"
	"  --seed N            the {seed} placeholder (default 7)\n"
	"  --reps N            runs per variant (default 2)\n"
	"  --out DIR           output directory (default runs/DATE-PIPELINE/, with -2,\n"
	"                      -3 ... added when it exists)\n"
	"  --by-commit         default output directory runs/DATE-PIPELINE-COMMIT[-dirty]/,\n"
	"                      COMMIT being the short commit of the git checkout that\n"
	"                      holds the pipeline file (-dirty: uncommitted changes)\n"
	"  --set KEY=VALUE     override a placeholder of the pipeline's \"defaults\"\n"
	"                      (repeatable)\n"
	"  --size S            --set size=S (pipelines with a size default: the demo\n"
	"                      has tiny, small, default, large)\n"
	"  --cache DIR         the {cache} placeholder (default\n"
	"                      $XDG_CACHE_HOME/stagebench/PIPELINE, else\n"
	"                      ~/.cache/stagebench/PIPELINE)\n"
	"  --interval DUR      sample interval (default 100ms)\n"
	"  -q, --quiet         no progress lines\n"
	"  -v, --verbose       more progress messages\n"
	"  -h, --help          this text\n"
	"\n"
	"GUARD OPTIONS apply to every run; each run is guarded (admission and stop\n"
	"checks) with the defaults below when none is given:\n"
	"%s"
	"\n"
	"In DIR, per run V-N (variant V, repetition N): V-N.trace.jsonl.zst (the trace;\n"
	"its start record holds mode V, labels seed, pipeline and rep, and the commit\n"
	"of the pipeline's git checkout with whether it was dirty), V-N.latents/ (the\n"
	"latent copies), V-N/ (the pipeline's own outputs, {out}), V-N.log (the\n"
	"command's stdout); then runs.json (how each run ended; rewritten after every\n"
	"run), table.md, latents.md, and the charts memory.png and stages.png (skipped\n"
	"with a warning when gnuplot is missing). Progress lines go to stderr.\n"
	"\n"
	"Placeholders in the pipeline file: {python} ($STAGEBENCH_PYTHON, else\n"
	"/usr/bin/python3, else python3), {pipeline_dir}, {seed}, {out}, {run}, {mode}\n"
	"(the variant), {cache}, and the keys of \"defaults\". The environment of each\n"
	"run: PYTHONPATH = PROBE/site:PROBE:the pipeline's \"pythonpath\":$PYTHONPATH,\n"
	"STAGEBENCH_ADAPTER (\"adapter\"), the pipeline's \"env\" and the variant's \"env\",\n"
	"STAGEBENCH_COMMIT_DIR (the pipeline file's directory unless already set).\n"
	"\n"
	"exit: 0 every run ran (a run the guard stopped is a result: the table says\n"
	"so), 2 usage (an unknown variant lists those available), 3 a failure to run\n"
	"(pipeline file unreadable, recorder failure, a command that could not start or\n"
	"failed on its own, unreadable results), 128+N when interrupted by signal N.\n";

enum {
	OPT_PIPELINE = 0x4301,
	OPT_SEED,
	OPT_REPS,
	OPT_OUT,
	OPT_SET,
	OPT_SIZE,
	OPT_CACHE,
	OPT_INTERVAL,
	OPT_BY_COMMIT,
};

static int usage_error(const char *fmt, ...) SB_GNUC_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "stagebench: error: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see 'stagebench compare --help')\n");
	va_end(ap);
	return SB_EXIT_USAGE;
}

/* A fresh default directory: BASE, else BASE-2, BASE-3 ... */
static char *fresh_dir(const char *base)
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

static char *absolute(const char *p)
{
	if (p[0] == '/')
		return xstrdup(p);
	char *cwd = getcwd(NULL, 0);
	char *a = cwd ? xasprintf("%s/%s", cwd, p) : xstrdup(p);
	free(cwd);
	return a;
}

/* Run one plan under record_run with the command's stdout in its log. */
static int run_one(const struct record_opts *base, const struct compare_run *cr,
		   struct trace_label *labels, size_t nlabels, struct record_result *res)
{
	if (mkdir_p(cr->out_dir))
		return -1;
	int log = open(cr->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log < 0)
		return error("cannot create '%s': %s", cr->log_path, strerror(errno));
	struct record_opts o = *base;
	o.trace_path = cr->trace_path;
	o.latents_dir = cr->latents_dir;
	o.labels = labels;
	o.nlabels = nlabels;
	o.env_set = (const char **)cr->env;
	fflush(stdout);
	int saved = dup(1);
	if (saved < 0 || dup2(log, 1) < 0) {
		int e = errno;
		close(log);
		if (saved >= 0)
			close(saved);
		return error("cannot redirect the command's output to '%s': %s", cr->log_path,
			     strerror(e));
	}
	close(log);
	int rc = record_run(&o, cr->argv, res);
	dup2(saved, 1);
	close(saved);
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

struct done_run {
	char *id;
	char *mode;
	char *trace_path;
	struct trace tr;
	struct analysis a;
	bool read;
};

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
			const struct stage_stats *s = a->nstages ? &a->stages[a->ran_to] : NULL;
			if (s)
				strbuf_addf(o, " in %s", s->name);
			if (a->reason)
				strbuf_addf(o, ": %s", a->reason);
		}
		if (a->has_footprint) {
			format_gb(a->peak_footprint, fp);
			strbuf_addf(o, " | %s", fp);
		} else {
			strbuf_addstr(o, " | no sample");
		}
		strbuf_addf(o, " | %.1f s | %s |\n", a->wall_s, slash ? slash + 1 : d[i].trace_path);
	}
}

static int write_text(const char *dir, const char *name, const struct strbuf *sb)
{
	char *path = xasprintf("%s/%s", dir, name);
	int rc = write_file(path, sb->buf ? sb->buf : "", sb->len);
	free(path);
	return rc;
}

/* Read the traces, print and write the table, the latents, the summary and the charts.
 * Returns 0, or -1 when something could not be read or written. */
static int report(const char *out, const char *baseline, struct done_run *d, size_t n,
		  const struct run_list *runs, bool charts)
{
	int rc = 0;
	size_t nread = 0;
	for (size_t i = 0; i < n; i++) {
		const struct run_entry *e = &runs->items[i];
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

	/* the per-stage table */
	struct table_run *tr = xcalloc(nread, sizeof(*tr));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i].read)
			tr[k++].a = d[i].a; /* shallow: d[i].a keeps ownership */
	struct table t = TABLE_INIT;
	struct strbuf tmd = STRBUF_INIT, lmd = STRBUF_INIT, rmd = STRBUF_INIT;
	if (table_build(&t, tr, nread, NULL, 0) < 0) {
		rc = -1;
	} else {
		table_render_md(&t, &tmd);
		if (write_text(out, "table.md", &tmd))
			rc = -1;
	}
	printf("## Per-stage peak footprint\n\n%s\n", strbuf_str(&tmd));
	table_release(&t);
	free(tr);

	/* the latents */
	struct latent_set ls = LATENT_SET_INIT;
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
	}
	latent_set_release(&ls);
	if (write_text(out, "latents.md", &lmd))
		rc = -1;
	printf("## Latents\n\n%s\n", strbuf_str(&lmd));

	/* the runs */
	runs_md(d, n, &rmd);
	printf("## Runs\n\n%s", strbuf_str(&rmd));
	strbuf_release(&tmd);
	strbuf_release(&lmd);
	strbuf_release(&rmd);
	fflush(stdout);

	/* the charts */
	if (charts) {
		struct trace *traces = xcalloc(nread, sizeof(*traces));
		const struct run_entry **ents = xcalloc(nread, sizeof(*ents));
		k = 0;
		for (size_t i = 0; i < n; i++) {
			if (!d[i].read)
				continue;
			traces[k] = d[i].tr; /* shallow */
			ents[k++] = &runs->items[i];
		}
		struct plot_opts po = PLOT_OPTS_INIT;
		po.out_dir = out;
		po.quiet_paths = true;
		if (plot_runs(&po, traces, ents, nread) < 0)
			warning("the charts were not drawn (see above); the tables are in '%s'", out);
		else if (sb_verbosity >= 1)
			note("charts: %s/memory.png, %s/stages.png", out, out);
		free(traces);
		free(ents);
	}
	return rc;
}

static void labels_free(struct trace_label *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].key);
		free(l[i].value);
	}
}

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pipeline", required_argument, NULL, OPT_PIPELINE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "reps", required_argument, NULL, OPT_REPS },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "set", required_argument, NULL, OPT_SET },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "by-commit", no_argument, NULL, OPT_BY_COMMIT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		GUARD_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct guard_opts g = GUARD_OPTS_INIT;
	const char *pipeline_arg = NULL, *out_arg = NULL, *cache_arg = NULL, *seed = "7";
	const char **set_args = NULL;
	size_t nset = 0, set_alloc = 0;
	int reps = 2, opt, rc = SB_EXIT_USAGE;
	int64_t interval_ns = 100LL * 1000000LL, seed_num;
	bool by_commit = false;
	struct pipeline p;
	bool have_pipeline = false;
	struct kv_list sets = { 0 };
	const struct pipeline_variant **variants = NULL;
	size_t nvariants = 0;
	char *exe = NULL, *pipeline_path = NULL, *probe_dir = NULL, *out = NULL, *cache = NULL;
	char *commit = NULL;
	struct run_list runs = RUN_LIST_INIT;
	struct done_run *done = NULL;
	size_t ndone = 0;

	memset(&p, 0, sizeof(p));
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "qvh", longopts, NULL)) != -1) {
		int gr = guard_parse_option(&g, opt, optarg);
		if (gr < 0)
			goto out;
		if (gr > 0)
			continue;
		switch (opt) {
		case OPT_PIPELINE:
			pipeline_arg = optarg;
			break;
		case OPT_SEED:
			if (parse_i64(optarg, &seed_num)) {
				rc = usage_error("option '--seed': not an integer: '%s'", optarg);
				goto out;
			}
			seed = optarg;
			break;
		case OPT_REPS:
			if (parse_int(optarg, &reps) || reps < 1) {
				rc = usage_error("option '--reps': expected a count of 1 or more, got '%s'",
						 optarg);
				goto out;
			}
			break;
		case OPT_OUT:
			out_arg = optarg;
			break;
		case OPT_SET:
		case OPT_SIZE:
			ALLOC_GROW(set_args, nset + 1, set_alloc);
			set_args[nset++] = opt == OPT_SIZE ? xasprintf("size=%s", optarg)
							   : xstrdup(optarg);
			break;
		case OPT_CACHE:
			cache_arg = optarg;
			break;
		case OPT_INTERVAL:
			if (parse_duration(optarg, &interval_ns) || interval_ns < 1000000LL) {
				rc = usage_error("option '--interval': invalid duration '%s' (1ms or more)",
						 optarg);
				goto out;
			}
			break;
		case OPT_BY_COMMIT:
			by_commit = true;
			break;
		case 'q':
			sb_verbosity = 0;
			break;
		case 'v':
			sb_verbosity = 2;
			break;
		case 'h':
			printf(compare_usage, guard_options_help);
			rc = SB_EXIT_OK;
			goto out;
		default:
			rc = guard_bad_option("compare", opt, "qvh", optopt, argv[optind - 1]);
			goto out;
		}
	}

	/* the pipeline and the probe */
	exe = compare_self_exe();
	const char *home = getenv("STAGEBENCH_HOME");
	if (pipeline_arg) {
		pipeline_path = xstrdup(pipeline_arg);
	} else if (!(pipeline_path = compare_find_share(home, exe, "demo/pipeline.json"))) {
		error("cannot find the bundled demo pipeline (demo/pipeline.json) in "
		      "$STAGEBENCH_HOME, %s/../demo or %s/../share/stagebench/demo: set "
		      "STAGEBENCH_HOME to the stagebench tree or give --pipeline FILE",
		      exe ? exe : "(binary)", exe ? exe : "(binary)");
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	if (!(probe_dir = compare_find_share(home, exe, "probe")) || !is_dir(probe_dir)) {
		error("cannot find the Python probe (probe/) in $STAGEBENCH_HOME, %s/../probe or "
		      "%s/../share/stagebench/probe: set STAGEBENCH_HOME to the stagebench tree",
		      exe ? exe : "(binary)", exe ? exe : "(binary)");
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	if (pipeline_read(pipeline_path, &p) < 0) {
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	have_pipeline = true;

	/* variants */
	if (optind < argc) {
		for (int i = optind; i < argc; i++) {
			const struct pipeline_variant *v = pipeline_variant(&p, argv[i]);
			bool dup = false;
			for (size_t j = 0; v && j < nvariants; j++)
				dup |= variants[j] == v;
			if (!v || dup) {
				struct strbuf have = STRBUF_INIT;
				for (size_t j = 0; j < p.nvariants; j++)
					strbuf_addf(&have, "%s%s", j ? ", " : "", p.variants[j].name);
				if (dup)
					rc = usage_error("variant '%s' given twice", argv[i]);
				else
					rc = usage_error("unknown variant '%s': %s has %s", argv[i], p.path,
							 have.buf ? have.buf : "none");
				strbuf_release(&have);
				goto out;
			}
			variants = xrealloc(variants, (nvariants + 1) * sizeof(*variants));
			variants[nvariants++] = v;
		}
	} else if (pipeline_variant(&p, "eager") && pipeline_variant(&p, "staged")) {
		variants = xcalloc(2, sizeof(*variants));
		variants[nvariants++] = pipeline_variant(&p, "eager");
		variants[nvariants++] = pipeline_variant(&p, "staged");
	} else {
		variants = xcalloc(p.nvariants ? p.nvariants : 1, sizeof(*variants));
		for (size_t j = 0; j < p.nvariants; j++)
			variants[nvariants++] = &p.variants[j];
	}
	if (!nvariants) {
		error("%s: no variants", p.path);
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	for (size_t i = 0; i < nset; i++) {
		if (compare_set_option(&p, set_args[i], &sets) < 0) {
			rc = SB_EXIT_USAGE;
			goto out;
		}
	}

	/* directories */
	if (!getenv("STAGEBENCH_COMMIT_DIR") || !*getenv("STAGEBENCH_COMMIT_DIR"))
		setenv("STAGEBENCH_COMMIT_DIR", p.dir, 1);
	if (out_arg) {
		out = absolute(out_arg);
	} else {
		char date[16];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
		int dirty = 0;
		if (by_commit && !(commit = git_head(getenv("STAGEBENCH_COMMIT_DIR"), true, &dirty)))
			warning("--by-commit: '%s' is not in a git checkout; no commit in the directory "
				"name", getenv("STAGEBENCH_COMMIT_DIR"));
		char *base = compare_default_out(date, p.name, commit, dirty > 0);
		char *fresh = fresh_dir(base);
		out = absolute(fresh);
		free(base);
		free(fresh);
	}
	if (mkdir_p(out)) {
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	cache = cache_arg ? absolute(cache_arg) : compare_default_cache(p.name);
	bool charts = plot_have_gnuplot(NULL);
	if (!charts)
		warning("%s; the runs go on without charts", PLOT_GNUPLOT_MISSING);

	struct compare_setup setup = {
		.p = &p, .out = out, .probe_dir = probe_dir, .python = compare_python(),
		.cache = cache, .seed = seed, .sets = &sets,
		.old_pythonpath = getenv("PYTHONPATH"),
	};
	struct record_opts ro = RECORD_OPTS_INIT;
	ro.interval_ns = interval_ns;
	ro.guarded = true;
	ro.guard = &g;
	ro.name = "compare";
	ro.summary = false;

	size_t total = nvariants * (size_t)reps;
	done = xcalloc(total, sizeof(*done));
	if (sb_verbosity >= 1)
		note("compare: %s, variants %zu x %d runs, seed %s, into %s", p.path, nvariants, reps,
		     seed, out);
	rc = SB_EXIT_OK;
	int interrupted = 0;
	for (size_t k = 0; k < total; k++) {
		size_t vi;
		int rep;
		compare_schedule(nvariants, k, &vi, &rep);
		const struct pipeline_variant *v = variants[vi];
		struct compare_run cr = COMPARE_RUN_INIT;
		if (compare_plan_run(&setup, v, rep, &cr) < 0) {
			rc = SB_EXIT_FAILURE;
			break;
		}
		char repbuf[16];
		snprintf(repbuf, sizeof(repbuf), "%d", rep);
		struct trace_label labels[3] = {
			{ xstrdup("seed"), xstrdup(seed) },
			{ xstrdup("pipeline"), xstrdup(p.name) },
			{ xstrdup("rep"), xstrdup(repbuf) },
		};
		ro.mode = v->name;
		if (sb_verbosity >= 1)
			note("[%zu/%zu] %s run %d: running", k + 1, total, v->name, rep);
		struct record_result res = RECORD_RESULT_INIT;
		int r = run_one(&ro, &cr, labels, 3, &res);
		labels_free(labels, 3);
		if (r < 0) {
			error("[%zu/%zu] %s run %d: the recorder failed (see above)", k + 1, total,
			      v->name, rep);
			record_result_release(&res);
			compare_run_release(&cr);
			rc = SB_EXIT_FAILURE;
			break;
		}
		struct strbuf words = STRBUF_INIT;
		outcome_words(&res, &words);
		if (sb_verbosity >= 1 || (res.stopped_by != STOPPED_GUARD && res.exit_code))
			fprintf(stderr, "stagebench: [%zu/%zu] %s run %d: %s, wall %.1f s\n", k + 1,
				total, v->name, rep, words.buf, res.wall_s);
		strbuf_release(&words);

		/* runs.json after every run */
		ALLOC_GROW(runs.items, runs.n + 1, runs.alloc);
		struct run_entry *e = &runs.items[runs.n++];
		memset(e, 0, sizeof(*e));
		e->mode = xstrdup(v->name);
		e->run = rep;
		e->has_exit = true;
		e->exit = res.exit_code;
		const char *slash = strrchr(cr.trace_path, '/');
		e->trace = xstrdup(slash ? slash + 1 : cr.trace_path);
		e->stopped_by = res.stopped_by == STOPPED_GUARD    ? xstrdup("guard")
				: res.stopped_by == STOPPED_SIGNAL ? xstrdup("signal")
								   : NULL;
		e->signal = res.signal;
		char *runs_path = xasprintf("%s/runs.json", out);
		if (runs_write(runs_path, &runs) < 0)
			rc = SB_EXIT_FAILURE;
		free(runs_path);

		done[ndone].id = xstrdup(cr.id);
		done[ndone].mode = xstrdup(v->name);
		done[ndone].trace_path = xstrdup(cr.trace_path);
		ndone++;
		if (res.stopped_by == STOPPED_SIGNAL) {
			interrupted = res.exit_code;
		} else if (res.stopped_by != STOPPED_GUARD && res.exit_code) {
			if (sb_verbosity >= 1)
				fprintf(stderr, "stagebench: [%zu/%zu] %s run %d: its output is in %s\n",
					k + 1, total, v->name, rep, cr.log_path);
			rc = SB_EXIT_FAILURE;
		}
		record_result_release(&res);
		compare_run_release(&cr);
		if (interrupted)
			break;
	}

	if (ndone) {
		if (report(out, NULL, done, ndone, &runs, charts && !interrupted) < 0)
			rc = SB_EXIT_FAILURE;
		if (sb_verbosity >= 1)
			note("results in %s (table.md, latents.md, runs.json)", out);
	}
	if (interrupted)
		rc = interrupted;
	if (finish_stdout() < 0 && rc == SB_EXIT_OK)
		rc = SB_EXIT_FAILURE;

out:
	for (size_t i = 0; i < ndone; i++) {
		free(done[i].id);
		free(done[i].mode);
		free(done[i].trace_path);
		trace_release(&done[i].tr);
		analysis_release(&done[i].a);
	}
	free(done);
	runs_release(&runs);
	for (size_t i = 0; i < nset; i++)
		free((char *)set_args[i]);
	free(set_args);
	kv_release(&sets);
	free(variants);
	if (have_pipeline)
		pipeline_release(&p);
	free(exe);
	free(pipeline_path);
	free(probe_dir);
	free(out);
	free(cache);
	free(commit);
	guard_opts_release(&g);
	return rc;
}
