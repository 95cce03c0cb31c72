/* decode.c -- trace records through jansson: start, event, end, and the
 * sample lines the fast path (fastpath.c) leaves; probe pipe lines */
#include "reader_int.h"

#include <jansson.h>
#include <stdlib.h>

#include "../common/jsonw.h"

static void jv_from_json(const json_t *j, struct jv *v)
{
	memset(v, 0, sizeof(*v));
	switch (json_typeof(j)) {
	case JSON_INTEGER: {
		json_int_t x = json_integer_value(j);
		v->kind = JV_INT;
		v->neg = x < 0;
		v->u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
		v->d = (double)x;
		break;
	}
	case JSON_REAL:
		v->kind = JV_REAL;
		v->d = json_real_value(j);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		v->kind = JV_BOOL;
		break;
	case JSON_NULL:
		v->kind = JV_NULL;
		break;
	case JSON_STRING:
		v->kind = JV_STRING;
		break;
	default:
		v->kind = JV_OTHER;
	}
}

static void extra_add(struct strbuf *extra, const char *k, const json_t *v)
{
	char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (extra->len)
		strbuf_addch(extra, ',');
	json_escape(extra, k);
	strbuf_addch(extra, ':');
	strbuf_addstr(extra, d ? d : "null");
	free(d);
}

static char *extra_detach(struct strbuf *extra)
{
	if (!extra->len) {
		strbuf_release(extra);
		return NULL;
	}
	return strbuf_detach(extra);
}

/* Take a string value into *dst (replacing it); false when v is not a string. */
static bool take_str(char **dst, const json_t *v)
{
	if (!json_is_string(v))
		return false;
	free(*dst);
	*dst = xstrndup(json_string_value(v), json_string_length(v));
	return true;
}

static int sample_from_json(json_t *o, struct trace_sample *s, char *why, size_t whylen)
{
	const char *k;
	json_t *v;
	bool has_t = false;
	memset(s, 0, sizeof(*s));
	json_object_foreach(o, k, v) {
		struct jv x;
		jv_from_json(v, &x);
		if (sample_key_apply(s, &has_t, sample_key_index(k, strlen(k)), &x, why, whylen))
			return -1;
	}
	if (!has_t) {
		snprintf(why, whylen, "sample has no \"t\"");
		return -1;
	}
	return 0;
}

/* The event keys whose value is a string, and where each goes. */
static const struct {
	const char *name;
	size_t off;
} event_strs[] = {
	{ "stage", offsetof(struct trace_event, stage) },
	{ "name", offsetof(struct trace_event, name) },
	{ "note", offsetof(struct trace_event, note) },
	{ "sha256", offsetof(struct trace_event, sha256) },
	{ "dtype", offsetof(struct trace_event, dtype) },
	{ "file", offsetof(struct trace_event, file) },
	{ "metric", offsetof(struct trace_event, metric) },
	{ "device", offsetof(struct trace_event, device) },
	{ "action", offsetof(struct trace_event, action) },
	{ "reason", offsetof(struct trace_event, reason) },
};

/* "shape": an array of at most EVENT_MAX_DIMS integers; false (ndim -1) when not. */
static bool event_shape(struct trace_event *ev, json_t *v)
{
	size_t i;
	json_t *d;
	/* more dimensions than fit: kept as it was, in extra */
	bool ok = json_is_array(v) && json_array_size(v) <= EVENT_MAX_DIMS;
	if (ok) {
		json_array_foreach(v, i, d) {
			if (!json_is_integer(d)) {
				ok = false;
				break;
			}
			ev->shape[i] = json_integer_value(d);
		}
	}
	ev->ndim = ok ? (int)json_array_size(v) : -1;
	return ok;
}

/*
 * One key of an event other than type, kind, t and mono. Returns whether the
 * key is a known one; *ok says whether its value had the expected type.
 */
static bool event_field(struct trace_event *ev, const char *k, json_t *v, const struct jv *x,
			bool *ok)
{
	*ok = false;
	for (size_t i = 0; i < sizeof(event_strs) / sizeof(event_strs[0]); i++) {
		if (strcmp(k, event_strs[i].name))
			continue;
		*ok = take_str((char **)((char *)ev + event_strs[i].off), v);
		return true;
	}
	if (!strcmp(k, "nbytes"))
		*ok = ev->has_nbytes = jv_bytes(x, &ev->nbytes);
	else if (!strcmp(k, "bytes"))
		*ok = ev->has_bytes = jv_bytes(x, &ev->bytes);
	else if (!strcmp(k, "max_bytes"))
		*ok = ev->has_max_bytes = jv_bytes(x, &ev->max_bytes);
	else if (!strcmp(k, "seconds"))
		*ok = ev->has_seconds = jv_number(x, &ev->seconds);
	else if (!strcmp(k, "from"))
		*ok = ev->has_from = jv_number(x, &ev->from);
	else if (!strcmp(k, "shape"))
		*ok = event_shape(ev, v);
	else
		return false;
	return true;
}

/*
 * An event object into *ev (which the caller has zeroed). probe: the probe
 * line protocol ("type" optional, time from "mono" - origin).
 * Returns 0, or -1 with *why set to a static message.
 */
static int event_from_json(json_t *o, struct trace_event *ev, bool probe, double origin,
			   const char **why)
{
	struct strbuf extra = STRBUF_INIT;
	bool has_t = false, has_mono = false;
	double t = 0, mono = 0;
	const char *k;
	json_t *v;

	ev->ndim = -1;
	json_object_foreach(o, k, v) {
		struct jv x;
		jv_from_json(v, &x);
		if (!strcmp(k, "type"))
			continue;
		if (!strcmp(k, "kind")) {
			if (!take_str(&ev->kind_name, v)) {
				*why = "event \"kind\" is not a string";
				goto fail;
			}
			ev->kind = event_kind_from_name(ev->kind_name);
			continue;
		}
		if (!strcmp(k, "t")) {
			if (!jv_number(&x, &t)) {
				*why = "event \"t\" is not a number";
				goto fail;
			}
			has_t = true;
			continue;
		}
		if (probe && !strcmp(k, "mono")) {
			if (!jv_number(&x, &mono)) {
				*why = "event \"mono\" is not a number";
				goto fail;
			}
			has_mono = true;
			continue;
		}
		bool ok, known = event_field(ev, k, v, &x, &ok);
		/* unknown keys, and known ones of an unexpected type, are kept
		 * as they were; a known key that is null is absent */
		if (!known || (!ok && !json_is_null(v)))
			extra_add(&extra, k, v);
	}
	if (!ev->kind_name) {
		*why = "event has no \"kind\"";
		goto fail;
	}
	if (probe && has_mono)
		ev->t = mono - origin;
	else if (has_t)
		ev->t = t;
	else {
		*why = probe ? "event has no \"mono\"" : "event has no \"t\"";
		goto fail;
	}
	if (!isfinite(ev->t)) {
		*why = "event time is out of range";
		goto fail;
	}
	ev->extra_json = extra_detach(&extra);
	return 0;
fail:
	strbuf_release(&extra);
	trace_event_release(ev);
	return -1;
}

/* start.host: what is there, of the right type */
static void decode_start_host(json_t *v, struct trace_start *st)
{
	const char *hk;
	json_t *hv;
	json_object_foreach(v, hk, hv) {
		struct jv hx;
		int64_t i64;
		jv_from_json(hv, &hx);
		if (!strcmp(hk, "name"))
			take_str(&st->host_name, hv);
		else if (!strcmp(hk, "os"))
			take_str(&st->host_os, hv);
		else if (!strcmp(hk, "kernel"))
			take_str(&st->host_kernel, hv);
		else if (!strcmp(hk, "machine"))
			take_str(&st->host_machine, hv);
		else if (!strcmp(hk, "cpus") && jv_int(&hx, 0, 1 << 30, &i64))
			st->host_cpus = (int)i64;
		else if (!strcmp(hk, "memory"))
			jv_bytes(&hx, &st->host_memory);
		else if (!strcmp(hk, "swap"))
			jv_bytes(&hx, &st->host_swap);
	}
}

/* start.labels: strings as they are, other values as their JSON text */
static void start_labels(json_t *v, struct trace_start *st)
{
	const char *lk;
	json_t *lv;
	st->labels = xcalloc(json_object_size(v), sizeof(*st->labels));
	json_object_foreach(v, lk, lv) {
		struct trace_label *l = &st->labels[st->nlabels++];
		l->key = xstrdup(lk);
		if (json_is_string(lv))
			l->value = xstrdup(json_string_value(lv));
		else
			l->value = json_dumps(lv, JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

/* 0, -1 with why, -2 for an unknown format (message in why). */
static int start_from_json(json_t *o, struct trace_start *st, char *why, size_t whylen)
{
	struct strbuf extra = STRBUF_INIT;
	const char *k;
	json_t *v;
	bool port_commit = false;

	json_object_foreach(o, k, v) {
		struct jv x;
		int64_t i64;
		bool ok = true, known = true;
		jv_from_json(v, &x);
		if (!strcmp(k, "type"))
			continue;
		if (!strcmp(k, "format")) {
			if (!json_is_string(v)) {
				snprintf(why, whylen, "start \"format\" is not a string");
				strbuf_release(&extra);
				return -1;
			}
			if (strcmp(json_string_value(v), TRACE_FORMAT)) {
				snprintf(why, whylen,
					 "unknown trace format '%s' (this stagebench reads %s and stageload traces)",
					 json_string_value(v), TRACE_FORMAT);
				strbuf_release(&extra);
				return -2;
			}
			take_str(&st->format, v);
		} else if (!strcmp(k, "utc")) {
			ok = take_str(&st->utc, v);
		} else if (!strcmp(k, "mode")) {
			ok = take_str(&st->mode, v);
		} else if (!strcmp(k, "interval")) {
			ok = jv_number(&x, &st->interval) && st->interval >= 0;
			if (!ok)
				st->interval = 0;
		} else if (!strcmp(k, "seed")) {
			ok = st->has_seed = jv_int(&x, INT64_MIN, INT64_MAX, &i64);
			if (ok)
				st->seed = i64;
		} else if (!strcmp(k, "commit")) {
			ok = take_str(&st->commit, v);
		} else if (!strcmp(k, "port_commit")) {
			/* stageload's name; "commit" wins when both are there */
			if (!st->commit || port_commit)
				ok = port_commit = take_str(&st->commit, v);
		} else if (!strcmp(k, "dirty") || !strcmp(k, "port_dirty")) {
			ok = json_is_boolean(v);
			if (ok && (!st->has_dirty || !strcmp(k, "dirty"))) {
				st->has_dirty = true;
				st->dirty = json_is_true(v);
			}
		} else if (!strcmp(k, "command")) {
			size_t i;
			json_t *a;
			ok = json_is_array(v);
			json_array_foreach(v, i, a)
				if (!json_is_string(a))
					ok = false;
			if (ok) {
				st->command = xcalloc(json_array_size(v) + 1, sizeof(char *));
				json_array_foreach(v, i, a)
					st->command[i] = xstrdup(json_string_value(a));
			}
		} else if (!strcmp(k, "host")) {
			ok = json_is_object(v);
			decode_start_host(v, st);
		} else if (!strcmp(k, "meter")) {
			const char *mk;
			json_t *mv;
			ok = json_is_object(v);
			json_object_foreach(v, mk, mv) {
				if (!strcmp(mk, "backend"))
					take_str(&st->meter_backend, mv);
				else if (!strcmp(mk, "footprint"))
					take_str(&st->meter_footprint, mv);
			}
		} else if (!strcmp(k, "stop_at")) {
			take_str(&st->stop_at, v);
			ok = known = false; /* kept in extra_json as written */
		} else if (!strcmp(k, "labels")) {
			ok = json_is_object(v) && !st->labels;
			if (ok)
				start_labels(v, st);
		} else {
			ok = known = false;
		}
		if (!ok && !(known && json_is_null(v)))
			extra_add(&extra, k, v);
	}
	st->extra_json = extra_detach(&extra);
	return 0;
}

static void end_from_json(json_t *o, struct trace_end *end)
{
	struct strbuf extra = STRBUF_INIT;
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v) {
		struct jv x;
		int64_t i64;
		bool ok = true, known = true;
		jv_from_json(v, &x);
		if (!strcmp(k, "type"))
			continue;
		if (!strcmp(k, "exit")) {
			ok = end->has_exit = jv_int(&x, INT32_MIN, INT32_MAX, &i64);
			if (ok)
				end->exit_code = (int)i64;
		} else if (!strcmp(k, "signal")) {
			ok = jv_int(&x, 0, 1024, &i64);
			if (ok)
				end->signal = (int)i64;
		} else if (!strcmp(k, "stopped_by")) {
			ok = stopped_by_parse(json_string_value(v), &end->stopped_by);
		} else if (!strcmp(k, "reason")) {
			ok = take_str(&end->reason, v);
		} else if (!strcmp(k, "wall")) {
			ok = end->has_wall = jv_number(&x, &end->wall);
		} else if (!strcmp(k, "cpu")) {
			ok = end->has_cpu = jv_number(&x, &end->cpu);
		} else {
			ok = known = false;
		}
		if (!ok && !(known && json_is_null(v)))
			extra_add(&extra, k, v);
	}
	end->extra_json = extra_detach(&extra);
}

/* One version of the run (trace.h, trace.versions): a non-empty string;
 * the sink keeps the first value of each name. */
static void version_add(struct decoded *d, const char *name, json_t *v)
{
	if (!json_is_string(v) || !*name || !*json_string_value(v))
		return;
	d->versions = xrealloc(d->versions, (d->nversions + 1) * sizeof(*d->versions));
	d->versions[d->nversions].key = xstrdup(name);
	d->versions[d->nversions].value = xstrdup(json_string_value(v));
	d->nversions++;
}

void decoded_release_versions(struct decoded *d)
{
	for (size_t i = 0; i < d->nversions; i++) {
		free(d->versions[i].key);
		free(d->versions[i].value);
	}
	free(d->versions);
	d->versions = NULL;
	d->nversions = 0;
}

/* A `versions` object: {name: version}; anything else is ignored. */
static void versions_from_object(struct decoded *d, json_t *o)
{
	const char *k;
	json_t *v;
	if (json_is_object(o))
		json_object_foreach(o, k, v)
			version_add(d, k, v);
}

/* The start record's versions: its `versions` object, then the top-level keys
 * stageload writes ("torch":"2.14.0","diffusers":"0.41.0.dev0"). The keys stay
 * in extra_json as they were. */
static void versions_from_start(struct decoded *d, json_t *o)
{
	static const char *const keys[] = { "python", "torch", "diffusers", "transformers",
					     "accelerate" };
	versions_from_object(d, json_object_get(o, "versions"));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		version_add(d, keys[i], json_object_get(o, keys[i]));
}

/* The record of type ts in o into *d. 0, -1 or -2 (why). */
static int decode_object(json_t *o, const char *ts, bool skip_start, bool skip_end,
			 struct decoded *d, char *why, size_t whylen)
{
	const char *cwhy;
	if (!strcmp(ts, "sample")) {
		if (sample_from_json(o, &d->sample, why, whylen))
			return -1;
		d->kind = REC_SAMPLE;
	} else if (!strcmp(ts, "event")) {
		if (event_from_json(o, &d->event, false, 0, &cwhy)) {
			trace_event_release(&d->event);
			snprintf(why, whylen, "%s", cwhy);
			return -1;
		}
		d->kind = REC_EVENT;
		if (d->event.kind == EV_VERSIONS)
			versions_from_object(d, json_object_get(o, "versions"));
	} else if (!strcmp(ts, "start") && !skip_start) { /* a repeated start is ignored */
		int rc = start_from_json(o, &d->start, why, whylen);
		if (rc) {
			reader_start_release(&d->start);
			return rc;
		}
		d->kind = REC_START;
		versions_from_start(d, o);
	} else if (!strcmp(ts, "end") && !skip_end) {
		end_from_json(o, &d->end);
		d->kind = REC_END;
	}
	/* other record types: from a later minor revision, ignored */
	return 0;
}

int decode_line(const char *p, const char *end, bool skip_start, bool skip_end,
		struct decoded *d, char *why, size_t whylen)
{
	json_error_t jerr;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	d->event.ndim = -1;
	json_t *o = json_loadb(p, (size_t)(end - p), 0, &jerr);
	if (!o) {
		snprintf(why, whylen, "malformed line: %s (column %d)", jerr.text, jerr.column);
		return -1;
	}
	json_t *type = json_object_get(o, "type");
	const char *ts = json_string_value(type);
	if (!json_is_object(o)) {
		snprintf(why, whylen, "malformed line: not a JSON object");
		ret = -1;
	} else if (!type) {
		snprintf(why, whylen, "record has no \"type\"");
		ret = -1;
	} else if (!ts) {
		snprintf(why, whylen, "record \"type\" is not a string");
		ret = -1;
	} else {
		ret = decode_object(o, ts, skip_start, skip_end, d, why, whylen);
	}
	if (ret)
		decoded_release_versions(d);
	json_decref(o);
	return ret;
}

int trace_parse_probe_line(const char *line, size_t len, double mono_origin_s,
			   struct trace_event *ev, const char **errmsg)
{
	json_error_t jerr;
	const char *why = NULL;

	memset(ev, 0, sizeof(*ev));
	ev->ndim = -1;
	json_t *o = json_loadb(line, len, 0, &jerr);
	if (!o) {
		*errmsg = "not valid JSON";
		return -1;
	}
	if (!json_is_object(o)) {
		why = "not a JSON object";
	} else {
		json_t *type = json_object_get(o, "type");
		if (type && (!json_is_string(type) || strcmp(json_string_value(type), "event")))
			why = "not an event record";
		else if (event_from_json(o, ev, true, mono_origin_s, &why))
			; /* why set */
		else
			why = NULL;
	}
	json_decref(o);
	if (why) {
		*errmsg = why;
		return -1;
	}
	return 0;
}
