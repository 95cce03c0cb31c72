/* jsonw.c -- a small JSON writer for command output */
#include "jsonw.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t plain_len(const char *s);

void json_escape(struct strbuf *sb, const char *s)
{
	size_t plain = plain_len(s);
	if (!s[plain]) { /* nothing to escape: one copy */
		strbuf_grow(sb, plain + 2);
		char *q = sb->buf + sb->len;
		*q++ = '"';
		memcpy(q, s, plain);
		q += plain;
		*q++ = '"';
		*q = '\0';
		sb->len = (size_t)(q - sb->buf);
		return;
	}
	strbuf_addch(sb, '"');
	const unsigned char *p = (const unsigned char *)s;
	for (;;) {
		size_t n = plain_len((const char *)p); /* added at once */
		strbuf_add(sb, p, n);
		p += n;
		if (!*p)
			break;
		switch (*p) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		default: strbuf_addf(sb, "\\u%04x", *p);
		}
		p++;
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

static void open_container(struct jsonw *w, char c)
{
	pre_value(w);
	strbuf_addch(w->out, c);
	if (w->depth + 1 >= (int)(sizeof(w->need_comma) / sizeof(w->need_comma[0])))
		BUG("json nesting too deep");
	w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_container(struct jsonw *w, char c)
{
	bool had = w->need_comma[w->depth];
	w->depth--;
	if (had)
		indent(w);
	strbuf_addch(w->out, c);
	if (w->depth == 0 && w->pretty)
		strbuf_addch(w->out, '\n');
}

void jw_object_begin(struct jsonw *w) { open_container(w, '{'); }
void jw_object_end(struct jsonw *w) { close_container(w, '}'); }
void jw_array_begin(struct jsonw *w) { open_container(w, '['); }
void jw_array_end(struct jsonw *w) { close_container(w, ']'); }

/* The length of s's start that is written as it is inside a JSON string. */
static size_t plain_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p >= 0x20 && *p != '"' && *p != '\\')
		p++;
	return (size_t)(p - (const unsigned char *)s);
}

void jw_key(struct jsonw *w, const char *key)
{
	size_t n = plain_len(key);
	if (!w->pretty && !w->after_key && w->depth > 0 && !key[n]) {
		/* compact and nothing to escape (every key of a trace): one copy */
		strbuf_grow(w->out, n + 4);
		char *p = w->out->buf + w->out->len;
		if (w->need_comma[w->depth])
			*p++ = ',';
		w->need_comma[w->depth] = true;
		*p++ = '"';
		memcpy(p, key, n);
		p += n;
		*p++ = '"';
		*p++ = ':';
		*p = '\0';
		w->out->len = (size_t)(p - w->out->buf);
		w->after_key = true;
		return;
	}
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

/* Decimal digits of v, without printf (a trace sample holds several numbers). */
static void add_u64(struct strbuf *sb, uint64_t v)
{
	char buf[24];
	char *p = buf + sizeof(buf);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_add(sb, p, (size_t)(buf + sizeof(buf) - p));
}

void jw_u64(struct jsonw *w, uint64_t v)
{
	pre_value(w);
	add_u64(w->out, v);
}

void jw_i64(struct jsonw *w, int64_t v)
{
	pre_value(w);
	if (v < 0) {
		strbuf_addch(w->out, '-');
		add_u64(w->out, (uint64_t)0 - (uint64_t)v);
	} else {
		add_u64(w->out, (uint64_t)v);
	}
}

void jw_format_double(char buf[JW_DOUBLE_MAX], double v)
{
	if (!isfinite(v)) {
		strcpy(buf, "null");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) { /* whole numbers as integers: 100, not 1e+02 */
		snprintf(buf, JW_DOUBLE_MAX, "%.0f", v);
		return;
	}
	/* The shortest text that reads back as v. Any decimal of 15 significant
	 * digits or fewer survives decimal -> double -> %.15g (DBL_DIG), so when a
	 * shorter text reads back as v, %.15g writes that text; else 16 or 17.
	 * Subnormals hold fewer digits: every length is tried for them. */
	for (int prec = fabs(v) < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
		snprintf(buf, JW_DOUBLE_MAX, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
}

void jw_double(struct jsonw *w, double v)
{
	char buf[JW_DOUBLE_MAX];
	pre_value(w);
	jw_format_double(buf, v);
	strbuf_addstr(w->out, buf);
}

void jw_fixed(struct jsonw *w, double v, int decimals)
{
	pre_value(w);
	if (!isfinite(v)) {
		strbuf_addstr(w->out, "null");
		return;
	}
	if (decimals < 0 || decimals > 9)
		BUG("jw_fixed with %d decimals", decimals);
	double scale = 1;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	double x = v * scale;
	if (v >= 0 && x < 1e13) {
		/* x is within 2^-9 of v * 10^decimals: round only when far from a tie */
		double whole = floor(x), frac = x - whole;
		if (fabs(frac - 0.5) > 0.01) {
			uint64_t q = (uint64_t)whole + (frac > 0.5);
			char buf[32]; /* digits from the end: decimals, '.', whole part */
			char *p = buf + sizeof(buf);
			for (int i = 0; i < decimals; i++, q /= 10)
				*--p = (char)('0' + q % 10);
			if (decimals)
				*--p = '.';
			do
				*--p = (char)('0' + q % 10);
			while (q /= 10);
			strbuf_add(w->out, p, (size_t)(buf + sizeof(buf) - p));
			return;
		}
	}
	strbuf_addf(w->out, "%.*f", decimals, v);
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

void jw_members(struct jsonw *w, const char *body)
{
	if (!body || !*body)
		return;
	if (w->depth < 1 || w->after_key)
		BUG("jw_members outside an object");
	pre_value(w);
	strbuf_addstr(w->out, body);
}
