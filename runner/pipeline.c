/* pipeline.c -- read pipeline files (JSON) into struct pipeline */
#include "pipeline.h"

#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/kv.h"
#include "../common/util.h"

static void free_strv(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* A JSON array of strings -> NULL-terminated vector; NULL json -> empty vector. */
static int strv_from_json(const char *path, const char *what, json_t *arr, int need_nonempty,
			  char ***out)
{
	if (!arr) {
		if (need_nonempty)
			return error("%s: '%s' is missing", path, what);
		*out = xcalloc(1, sizeof(char *));
		return 0;
	}
	if (!json_is_array(arr) || (need_nonempty && json_array_size(arr) == 0))
		return error("%s: '%s' must be a%s array of strings", path, what,
			     need_nonempty ? " non-empty" : "n");
	size_t n = json_array_size(arr);
	char **v = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(arr, i);
		if (!json_is_string(s)) {
			free_strv(v);
			return error("%s: '%s' item %zu must be a string", path, what, i + 1);
		}
		v[i] = xstrdup(json_string_value(s));
	}
	*out = v;
	return 0;
}

static int kv_from_json(const char *path, const char *what, json_t *obj, struct kv_list *out)
{
	if (!obj)
		return 0;
	if (!json_is_object(obj))
		return error("%s: '%s' must be an object of strings", path, what);
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		if (json_is_string(val))
			kv_set(out, key, json_string_value(val));
		else if (json_is_integer(val)) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(val));
			kv_set(out, key, buf);
		} else
			return error("%s: '%s.%s' must be a string", path, what, key);
	}
	return 0;
}

/* Levenshtein distance of a and b, counted up to cap (returns cap + 1 beyond it). */
static size_t edit_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if ((la > lb ? la - lb : lb - la) > cap || lb > 31)
		return cap + 1;
	size_t row[32];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb] > cap ? cap + 1 : row[lb];
}

static const char *const top_keys[] = { "name", "command", "variants", "defaults", "env",
					 "adapter", "pythonpath", "prepare", "files", NULL };
static const char *const variant_keys[] = { "env", "args", NULL };

/* Every key of obj must be one of known, or a comment ("_..." or "//..."); else an
 * error naming the key, where it is, the known keys and the nearest one when close. */
static int check_keys(const char *path, json_t *obj, const char *where,
		      const char *const *known)
{
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		if (key[0] == '_' || !strncmp(key, "//", 2))
			continue;
		const char *near = NULL;
		size_t best = 3; /* a hint only within distance 2, and only when one key is nearest */
		int ok = 0, ties = 0;
		for (const char *const *k = known; *k && !ok; k++) {
			size_t d = edit_distance(key, *k, 2);
			ok = d == 0;
			if (d < best) {
				best = d;
				near = *k;
				ties = 0;
			} else if (d == best && near)
				ties++;
		}
		if (ok)
			continue;
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "%s: unknown key '%s' %s", path, key, where);
		if (near && !ties)
			strbuf_addf(&msg, "; did you mean '%s'?", near);
		strbuf_addstr(&msg, " (known keys: ");
		for (const char *const *k = known; *k; k++)
			strbuf_addf(&msg, "%s%s", k == known ? "" : ", ", *k);
		strbuf_addstr(&msg, "; a key starting with '_' or '//' is a comment)");
		error("%s", strbuf_str(&msg));
		strbuf_release(&msg);
		return -1;
	}
	return 0;
}

int pipeline_read(const char *path, struct pipeline *p)
{
	memset(p, 0, sizeof(*p));
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return error("%s:%d: %s", path, jerr.line, jerr.text);
	int rc = -1;
	p->path = xstrdup(path);
	char *tmp = xstrdup(path);
	p->dir = xstrdup(dirname(tmp));
	free(tmp);
	if (!json_is_object(root)) {
		error("%s: a pipeline file must hold a JSON object", path);
		goto out;
	}
	if (check_keys(path, root, "at the top level", top_keys))
		goto out;
	json_t *name = json_object_get(root, "name");
	if (name && !json_is_string(name)) {
		error("%s: 'name' must be a string", path);
		goto out;
	}
	if (name)
		p->name = xstrdup(json_string_value(name));
	else {
		char *t = xstrdup(path), *b = basename(t);
		char *dot = strchr(b, '.');
		if (dot)
			*dot = '\0';
		p->name = xstrdup(b);
		free(t);
	}
	if (strv_from_json(path, "command", json_object_get(root, "command"), 1, &p->command) ||
	    strv_from_json(path, "pythonpath", json_object_get(root, "pythonpath"), 0,
			   &p->pythonpath) ||
	    strv_from_json(path, "prepare", json_object_get(root, "prepare"), 0, &p->prepare) ||
	    strv_from_json(path, "files", json_object_get(root, "files"), 0, &p->files) ||
	    kv_from_json(path, "defaults", json_object_get(root, "defaults"), &p->defaults) ||
	    kv_from_json(path, "env", json_object_get(root, "env"), &p->env))
		goto out;
	json_t *adapter = json_object_get(root, "adapter");
	if (adapter && !json_is_string(adapter) && !json_is_null(adapter)) {
		error("%s: 'adapter' must be a string", path);
		goto out;
	}
	if (json_is_string(adapter))
		p->adapter = xstrdup(json_string_value(adapter));
	json_t *variants = json_object_get(root, "variants");
	if (!json_is_object(variants) || json_object_size(variants) == 0) {
		error("%s: 'variants' must be a non-empty object (name -> {\"env\": {...}})", path);
		goto out;
	}
	p->variants = xcalloc(json_object_size(variants), sizeof(*p->variants));
	const char *vname;
	json_t *v;
	json_object_foreach(variants, vname, v) {
		struct pipeline_variant *pv = &p->variants[p->nvariants++];
		pv->name = xstrdup(vname);
		if (!json_is_object(v)) {
			error("%s: variant '%s' must be an object", path, vname);
			goto out;
		}
		char *what = xasprintf("in variants.%s", vname);
		int bad = check_keys(path, v, what, variant_keys);
		free(what);
		if (bad)
			goto out;
		what = xasprintf("variants.%s.env", vname);
		bad = kv_from_json(path, what, json_object_get(v, "env"), &pv->env);
		free(what);
		if (bad)
			goto out;
		what = xasprintf("variants.%s.args", vname);
		bad = strv_from_json(path, what, json_object_get(v, "args"), 0, &pv->args);
		free(what);
		if (bad)
			goto out;
	}
	rc = 0;
out:
	json_decref(root);
	if (rc)
		pipeline_release(p);
	return rc;
}

const struct pipeline_variant *pipeline_variant(const struct pipeline *p, const char *name)
{
	for (size_t i = 0; i < p->nvariants; i++)
		if (!strcmp(p->variants[i].name, name))
			return &p->variants[i];
	return NULL;
}

/* An argument with its braces made literal, but for the placeholders a command line may
 * name (pipeline.h: pipeline_from_command). */
static char *command_arg(const char *arg)
{
	static const char *const known[] = { "{seed}", "{out}", "{run}", "{mode}", "{cache}",
					     "{python}" };
	struct strbuf sb = STRBUF_INIT;
	for (const char *s = arg; *s;) {
		size_t k = 0, n = 0;
		for (; *s == '{' && k < sizeof(known) / sizeof(*known); k++)
			if (!strncmp(s, known[k], n = strlen(known[k])))
				break;
		if (*s == '{' && k < sizeof(known) / sizeof(*known)) {
			strbuf_add(&sb, s, n);
			s += n;
			continue;
		}
		if (*s == '{' || *s == '}')
			strbuf_addch(&sb, *s);
		strbuf_addch(&sb, *s++);
	}
	strbuf_addstr(&sb, "");
	return strbuf_detach(&sb);
}

static char *command_name(char *const *argv)
{
	const char *pick = argv[0];
	for (char *const *a = argv; *a; a++)
		if (strlen(*a) > 3 && !strcmp(*a + strlen(*a) - 3, ".py")) {
			pick = *a;
			break;
		}
	const char *slash = strrchr(pick, '/');
	char *name = xstrdup(slash ? slash + 1 : pick);
	char *dot = strrchr(name, '.');
	if (dot && dot != name && !strcmp(dot, ".py"))
		*dot = '\0';
	for (char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
			*c = '_';
	return name;
}

void pipeline_from_command(char *const *argv, const char *prepare, char *const *files,
			   struct pipeline *p)
{
	size_t n = 0, nf = 0;
	memset(p, 0, sizeof(*p));
	while (argv[n])
		n++;
	while (files && files[nf])
		nf++;
	p->path = xstrdup("the command after --");
	p->dir = getcwd(NULL, 0);
	if (!p->dir)
		p->dir = xstrdup(".");
	p->name = command_name(argv);
	p->command = xcalloc(n + 1, sizeof(*p->command));
	for (size_t i = 0; i < n; i++)
		p->command[i] = command_arg(argv[i]);
	p->pythonpath = xcalloc(1, sizeof(char *));
	p->prepare = xcalloc(prepare ? 4 : 1, sizeof(char *));
	if (prepare) {
		p->prepare[0] = xstrdup("/bin/sh");
		p->prepare[1] = xstrdup("-c");
		p->prepare[2] = command_arg(prepare);
	}
	p->files = xcalloc(nf + 1, sizeof(char *));
	for (size_t i = 0; i < nf; i++)
		p->files[i] = command_arg(files[i]);
	p->nvariants = 2;
	p->variants = xcalloc(2, sizeof(*p->variants));
	p->variants[0].name = xstrdup("eager");
	p->variants[0].args = xcalloc(1, sizeof(char *));
	p->variants[1].name = xstrdup("staged");
	p->variants[1].args = xcalloc(1, sizeof(char *));
	kv_set(&p->variants[1].env, "STAGEBENCH_STAGED", "1");
	kv_set(&p->variants[1].env, "STAGEBENCH_RNG_REPLAY", "1");
}

void pipeline_release(struct pipeline *p)
{
	if (!p)
		return;
	free(p->path);
	free(p->dir);
	free(p->name);
	free_strv(p->command);
	kv_release(&p->defaults);
	free(p->adapter);
	free_strv(p->pythonpath);
	free_strv(p->prepare);
	free_strv(p->files);
	kv_release(&p->env);
	for (size_t i = 0; i < p->nvariants; i++) {
		free(p->variants[i].name);
		kv_release(&p->variants[i].env);
		free_strv(p->variants[i].args);
	}
	free(p->variants);
	memset(p, 0, sizeof(*p));
}

char *expand_placeholders(const char *tmpl, const struct kv_list *vars)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *s = tmpl; *s;) {
		if (s[0] == '{' && s[1] == '{') {
			strbuf_addch(&sb, '{');
			s += 2;
		} else if (s[0] == '}' && s[1] == '}') {
			strbuf_addch(&sb, '}');
			s += 2;
		} else if (s[0] == '{') {
			const char *end = strchr(s, '}');
			if (!end) {
				error("unterminated placeholder in '%s'", tmpl);
				strbuf_release(&sb);
				return NULL;
			}
			char *key = xstrndup(s + 1, (size_t)(end - s - 1));
			const char *val = kv_get(vars, key);
			if (!val) {
				error("unknown placeholder '{%s}' in '%s'", key, tmpl);
				free(key);
				strbuf_release(&sb);
				return NULL;
			}
			free(key);
			strbuf_addstr(&sb, val);
			s = end + 1;
		} else {
			strbuf_addch(&sb, *s++);
		}
	}
	return strbuf_detach(&sb);
}

bool pipeline_variant_staged(const struct pipeline *p, const struct pipeline_variant *v)
{
	const char *x = kv_get(&v->env, "STAGEBENCH_STAGED");
	if (!x)
		x = kv_get(&p->env, "STAGEBENCH_STAGED");
	return x && *x && strcmp(x, "0") != 0;
}
