/* plan.c -- compare's planning (compare.h's pure parts): the variables, a run's command,
 * environment and files, the options, where the bundled files live, the default directories */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/jsonw.h"
#include "../../common/path.h"
#include "../../common/util.h"
#include "plan.h"
#include "compare_int.h"
#include "../pipeline.h"

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
		abs = path_absolute(adapter);
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
		if (cands[i] && path_exists(cands[i]))
			found = realpath(cands[i], NULL);
	for (size_t i = 0; i < 3; i++)
		free(cands[i]);
	return found;
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

/* A fresh default directory: BASE, else BASE-2, BASE-3 ... */
char *compare_fresh_dir(const char *base)
{
	if (!path_exists(base))
		return xstrdup(base);
	for (int i = 2;; i++) {
		char *d = xasprintf("%s-%d", base, i);
		if (!path_exists(d))
			return d;
		free(d);
	}
}
