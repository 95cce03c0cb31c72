/* check_junit.c -- a check as JUnit XML: a test case per judgement (see check.h) */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "render.h"

/* The length of the UTF-8 sequence at s (1 for a byte that starts none), and
 * in *ok whether XML 1.0 allows its character (a Char: well-formed, not U+FFFE,
 * U+FFFF or a surrogate). */
static size_t xml_char_len(const unsigned char *s, bool *ok)
{
	static const unsigned min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	unsigned cp;
	size_t n;
	*ok = s[0] >= 0x20;
	if (s[0] < 0x80)
		return 1;
	*ok = false;
	if (s[0] >= 0xc0 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf7)
		n = 4, cp = s[0] & 0x07u;
	else
		return 1;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return i; /* cut short: its bytes so far stand for one '?' */
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	*ok = cp >= min[n] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
	      cp != 0xfffe && cp != 0xffff;
	return n;
}

/* XML attribute and text: the five entities, control characters as "&#xNN;"
 * where XML 1.0 allows them (tab, LF, CR); every other character XML 1.0
 * forbids (the other controls, U+FFFE, U+FFFF, surrogates, bytes that are not
 * UTF-8) as '?', so that the report stays well-formed. */
static void xml_text(struct strbuf *out, const char *s)
{
	while (s && *s) {
		unsigned char ch = (unsigned char)*s;
		size_t n = 1;
		switch (ch) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&apos;"); break;
		case '\t': case '\n': case '\r': strbuf_addf(out, "&#x%X;", ch); break;
		default: {
			bool ok;
			n = xml_char_len((const unsigned char *)s, &ok);
			if (ok)
				strbuf_add(out, s, n);
			else
				strbuf_addch(out, '?');
		}
		}
		s += n;
	}
}

static const struct check_finding *finding_of(const struct check *c, const struct check_case *k)
{
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct check_finding *f = &c->findings[i];
		if (f->kind == k->result && f->metric == k->metric && !strcmp(f->mode, k->mode) &&
		    f->stage && !strcmp(f->stage, k->stage) &&
		    (k->metric != CM_LATENT || (f->latent && !strcmp(f->latent, k->latent))))
			return f;
	}
	return NULL;
}

static void testcase(const struct check *c, const struct check_case *k, struct strbuf *out)
{
	strbuf_addstr(out, "    <testcase classname=\"");
	xml_text(out, k->mode);
	strbuf_addch(out, '.');
	xml_text(out, k->stage);
	strbuf_addstr(out, "\" name=\"");
	xml_text(out, check_metric_name(k->metric));
	if (k->latent) {
		strbuf_addch(out, ' ');
		xml_text(out, k->latent);
	}
	strbuf_addch(out, '"');
	if (k->result != CK_REGRESSION && k->result != CK_NOT_JUDGED) {
		strbuf_addstr(out, "/>\n");
		return;
	}
	strbuf_addstr(out, ">\n");
	struct strbuf line = STRBUF_INIT;
	if (k->result == CK_NOT_JUDGED) {
		strbuf_addstr(out, "      <skipped message=\"not judged: ");
		xml_text(out, k->why);
		strbuf_addstr(out, "\"/>\n");
	} else {
		const struct check_finding *f = finding_of(c, k);
		if (f)
			check_finding_line(f, &line);
		strbuf_addstr(out, "      <failure type=\"regression\" message=\"");
		xml_text(out, line.buf ? line.buf : "regression");
		strbuf_addstr(out, "\"/>\n");
	}
	strbuf_release(&line);
	strbuf_addstr(out, "    </testcase>\n");
}

static void count(const struct check *c, const char *mode, size_t *n, size_t *fail, size_t *skip)
{
	*n = *fail = *skip = 0;
	for (size_t i = 0; i < c->ncases; i++) {
		const struct check_case *k = &c->cases[i];
		if (mode && strcmp(k->mode, mode))
			continue;
		(*n)++;
		*fail += k->result == CK_REGRESSION;
		*skip += k->result == CK_NOT_JUDGED;
	}
}

void check_format_junit(const struct check *c, struct strbuf *out)
{
	size_t n, fail, skip;
	count(c, NULL, &n, &fail, &skip);
	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	strbuf_addf(out, "<testsuites name=\"stagebench check\" tests=\"%zu\" failures=\"%zu\" "
			 "errors=\"0\" skipped=\"%zu\">\n", n, fail, skip);
	for (size_t mi = 0; mi < c->nmodes; mi++) {
		const char *mode = c->modes[mi];
		count(c, mode, &n, &fail, &skip);
		if (!n)
			continue;
		strbuf_addstr(out, "  <testsuite name=\"");
		xml_text(out, mode);
		strbuf_addf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
			    n, fail, skip);
		for (size_t i = 0; i < c->ncases; i++)
			if (!strcmp(c->cases[i].mode, mode))
				testcase(c, &c->cases[i], out);
		strbuf_addstr(out, "  </testsuite>\n");
	}
	strbuf_addstr(out, "</testsuites>\n");
}
