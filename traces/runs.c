/* runs.c -- runs.json: how each run of a run directory ended */
#include "runs.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/jsonw.h"
#include "../common/util.h"

static bool get_int(json_t *v, int *out)
{
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (x < INT32_MIN || x > INT32_MAX)
			return false;
		*out = (int)x;
		return true;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d != (double)(int)d || d < INT32_MIN || d > INT32_MAX)
			return false;
		*out = (int)d;
		return true;
	}
	return false;
}

static int entry_from_json(const char *path, size_t idx, json_t *o, struct run_entry *e)
{
	json_t *v;
	memset(e, 0, sizeof(*e));
	if (!json_is_object(o))
		return error("%s: entry %zu is not a JSON object", path, idx + 1);
	v = json_object_get(o, "mode");
	if (!json_is_string(v))
		return error("%s: entry %zu has no \"mode\" string", path, idx + 1);
	e->mode = xstrdup(json_string_value(v));
	v = json_object_get(o, "run");
	if (!get_int(v, &e->run) || e->run < 1)
		return error("%s: entry %zu (mode '%s') has no positive \"run\" number", path,
			     idx + 1, e->mode);
	v = json_object_get(o, "exit");
	if (v && !json_is_null(v)) {
		if (!get_int(v, &e->exit))
			return error("%s: entry %zu: \"exit\" is not an integer", path, idx + 1);
		e->has_exit = true;
	}
	v = json_object_get(o, "trace");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return error("%s: entry %zu: \"trace\" is not a string", path, idx + 1);
		e->trace = xstrdup(json_string_value(v));
	}
	v = json_object_get(o, "stopped_by");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return error("%s: entry %zu: \"stopped_by\" is not a string", path, idx + 1);
		/* a value from a later version: as if absent */
		stopped_by_parse(json_string_value(v), &e->stopped_by);
	}
	v = json_object_get(o, "why");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return error("%s: entry %zu: \"why\" is not a string", path, idx + 1);
		e->why = xstrdup(json_string_value(v));
	}
	v = json_object_get(o, "signal");
	if (v && !json_is_null(v) && (!get_int(v, &e->signal) || e->signal < 0))
		return error("%s: entry %zu: \"signal\" is not a signal number", path, idx + 1);
	v = json_object_get(o, "campaign");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return error("%s: entry %zu: \"campaign\" is not a string", path, idx + 1);
		e->campaign = xstrdup(json_string_value(v));
	}
	return 0;
}

static void entry_release(struct run_entry *e)
{
	free(e->mode);
	free(e->trace);
	free(e->why);
	free(e->campaign);
	memset(e, 0, sizeof(*e));
}

void runs_entry_copy(struct run_entry *dst, const struct run_entry *src)
{
	*dst = *src;
	dst->mode = xstrdup(src->mode);
	dst->trace = xstrdup(src->trace);
	dst->why = xstrdup(src->why);
	dst->campaign = xstrdup(src->campaign);
}

int runs_read(const char *path, struct run_list *out)
{
	struct stat st;
	char *data;
	size_t len;
	json_error_t jerr;

	memset(out, 0, sizeof(*out));
	if (stat(path, &st) < 0 && errno == ENOENT)
		return 1;
	if (read_file(path, &data, &len))
		return -1;
	json_t *root = json_loadb(data, len, 0, &jerr);
	free(data);
	if (!root)
		return error("%s:%d: malformed JSON: %s", path, jerr.line, jerr.text);
	if (!json_is_array(root)) {
		json_decref(root);
		return error("%s: not a JSON array of runs", path);
	}
	size_t i;
	json_t *o;
	json_array_foreach(root, i, o) {
		ALLOC_GROW(out->items, out->n + 1, out->alloc);
		if (entry_from_json(path, i, o, &out->items[out->n])) {
			entry_release(&out->items[out->n]);
			json_decref(root);
			runs_release(out);
			return -1;
		}
		out->n++;
	}
	json_decref(root);
	return 0;
}

int runs_write(const char *path, const struct run_list *runs)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addch(&sb, '[');
	for (size_t i = 0; i < runs->n; i++) {
		const struct run_entry *e = &runs->items[i];
		strbuf_addstr(&sb, i ? ",\n  {" : "\n  {");
		strbuf_addstr(&sb, "\"mode\": ");
		json_escape(&sb, e->mode ? e->mode : "");
		strbuf_addf(&sb, ", \"run\": %d", e->run);
		if (e->has_exit)
			strbuf_addf(&sb, ", \"exit\": %d", e->exit);
		if (e->trace) {
			strbuf_addstr(&sb, ", \"trace\": ");
			json_escape(&sb, e->trace);
		}
		if (stopped_by_name(e->stopped_by)) {
			strbuf_addstr(&sb, ", \"stopped_by\": ");
			json_escape(&sb, stopped_by_name(e->stopped_by));
		}
		if (e->signal)
			strbuf_addf(&sb, ", \"signal\": %d", e->signal);
		if (e->why) {
			strbuf_addstr(&sb, ", \"why\": ");
			json_escape(&sb, e->why);
		}
		if (e->campaign) {
			strbuf_addstr(&sb, ", \"campaign\": ");
			json_escape(&sb, e->campaign);
		}
		strbuf_addch(&sb, '}');
	}
	strbuf_addstr(&sb, runs->n ? "\n]\n" : "]\n");
	int ret = write_file(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return ret;
}

const struct run_entry *runs_find(const struct run_list *runs, const char *trace_basename)
{
	if (!runs || !trace_basename)
		return NULL;
	for (size_t i = 0; i < runs->n; i++) {
		const struct run_entry *e = &runs->items[i];
		if (e->trace) {
			const char *slash = strrchr(e->trace, '/');
			if (!strcmp(e->trace, trace_basename) ||
			    (slash && !strcmp(slash + 1, trace_basename)))
				return e;
			continue;
		}
		if (!e->mode)
			continue;
		char *plain = xasprintf("%s-%d.trace.jsonl", e->mode, e->run);
		bool hit = !strcmp(plain, trace_basename);
		free(plain);
		if (!hit) {
			char *zst = xasprintf("%s-%d.trace.jsonl.zst", e->mode, e->run);
			hit = !strcmp(zst, trace_basename);
			free(zst);
		}
		if (hit)
			return e;
	}
	return NULL;
}

void runs_release(struct run_list *runs)
{
	if (!runs)
		return;
	for (size_t i = 0; i < runs->n; i++)
		entry_release(&runs->items[i]);
	free(runs->items);
	runs->items = NULL;
	runs->n = runs->alloc = 0;
}
