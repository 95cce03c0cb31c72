/* jsonw.c -- a small JSON writer for command output */
#include "jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_escape(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		default:
			if (*p < 0x20)
				strbuf_addf(sb, "\\u%04x", *p);
			else
				strbuf_addch(sb, *p);
		}
	}
	strbuf_addch(sb, '"');
}

static void indent(struct jsonw *w)
{
	if (!w->pretty)
		return;
	strbuf_addch(w->out, '\n');
	for (int i = 0; i < w->depth; i++)
		strbuf_addstr(w->out, "  ");
}

/* Before any value or key: comma and indentation, unless right after a key. */
static void pre_value(struct jsonw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (w->need_comma[w->depth])
			strbuf_addch(w->out, ',');
		indent(w);
	}
	w->need_comma[w->depth] = true;
}

static void open_(struct jsonw *w, char c)
{
	pre_value(w);
	strbuf_addch(w->out, c);
	if (w->depth + 1 >= (int)(sizeof(w->need_comma) / sizeof(w->need_comma[0])))
		BUG("json nesting too deep");
	w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_(struct jsonw *w, char c)
{
	bool had = w->need_comma[w->depth];
	w->depth--;
	if (had)
		indent(w);
	strbuf_addch(w->out, c);
	if (w->depth == 0 && w->pretty)
		strbuf_addch(w->out, '\n');
}

void jw_object_begin(struct jsonw *w) { open_(w, '{'); }
void jw_object_end(struct jsonw *w) { close_(w, '}'); }
void jw_array_begin(struct jsonw *w) { open_(w, '['); }
void jw_array_end(struct jsonw *w) { close_(w, ']'); }

void jw_key(struct jsonw *w, const char *key)
{
	pre_value(w);
	json_escape(w->out, key);
	strbuf_addstr(w->out, w->pretty ? ": " : ":");
	w->after_key = true;
}

void jw_string(struct jsonw *w, const char *s)
{
	pre_value(w);
	if (s)
		json_escape(w->out, s);
	else
		strbuf_addstr(w->out, "null");
}

void jw_u64(struct jsonw *w, uint64_t v)
{
	pre_value(w);
	strbuf_addf(w->out, "%llu", (unsigned long long)v);
}

void jw_i64(struct jsonw *w, int64_t v)
{
	pre_value(w);
	strbuf_addf(w->out, "%lld", (long long)v);
}

void jw_double(struct jsonw *w, double v)
{
	pre_value(w);
	if (!isfinite(v)) {
		strbuf_addstr(w->out, "null");
		return;
	}
	char buf[64];
	if (v == floor(v) && fabs(v) < 1e15) { /* whole numbers as integers: 100, not 1e+02 */
		snprintf(buf, sizeof(buf), "%.0f", v);
		strbuf_addstr(w->out, buf);
		return;
	}
	/* shortest representation that reads back to the same double */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	strbuf_addstr(w->out, buf);
}

void jw_bool(struct jsonw *w, bool v)
{
	pre_value(w);
	strbuf_addstr(w->out, v ? "true" : "false");
}

void jw_null(struct jsonw *w)
{
	pre_value(w);
	strbuf_addstr(w->out, "null");
}

void jw_raw(struct jsonw *w, const char *json)
{
	pre_value(w);
	strbuf_addstr(w->out, json);
}
