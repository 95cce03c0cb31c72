/* text.c -- escaping and text helpers for every output format (see text.h) */
#include "text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void escape_control(struct strbuf *out, unsigned char c)
{
	if (c == '\n')
		strbuf_addstr(out, "\\n");
	else if (c == '\r')
		strbuf_addstr(out, "\\r");
	else if (c == '\t')
		strbuf_addstr(out, "\\t");
	else
		strbuf_addf(out, "\\x%02x", c);
}

void text_md(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			escape_control(out, c);
		else if (c == '|')
			strbuf_addstr(out, "\\|");
		else
			strbuf_addch(out, (char)c);
	}
}

void text_term(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			escape_control(out, c);
		else
			strbuf_addch(out, (char)c);
	}
}

void text_csv(struct strbuf *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		strbuf_addstr(out, s);
		return;
	}
	strbuf_addch(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			strbuf_addch(out, '"');
		strbuf_addch(out, *s);
	}
	strbuf_addch(out, '"');
}

void text_csv_double(struct strbuf *out, double v)
{
	char buf[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	strbuf_addstr(out, buf);
}

const char *text_outcome_key(enum run_outcome o)
{
	static const char *const keys[] = { "completed", "guard", "signal", "exit", "recorder_died",
					    "recording" };
	return keys[o];
}

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

/* What XML and HTML escape alike (& < > " and valid UTF-8 kept), and where they differ. */
struct markup {
	const char *apos;        /* the apostrophe's entity */
	bool (*control)(struct strbuf *out, unsigned char ch); /* true: ch written */
	const char *invalid;     /* for a byte sequence that is not a character allowed */
};

static void escape_markup(struct strbuf *out, const char *s, const struct markup *m)
{
	while (s && *s) {
		unsigned char ch = (unsigned char)*s;
		size_t n = 1;
		switch (ch) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, m->apos); break;
		default: {
			if (m->control(out, ch))
				break;
			bool ok;
			n = xml_char_len((const unsigned char *)s, &ok);
			if (ok)
				strbuf_add(out, s, n);
			else
				strbuf_addstr(out, m->invalid);
		}
		}
		s += n;
	}
}

/* XML: tab, newline and return as character references; other controls are not
 * characters XML allows (xml_char_len: '?'). */
static bool xml_control(struct strbuf *out, unsigned char ch)
{
	if (ch != '\t' && ch != '\n' && ch != '\r')
		return false;
	strbuf_addf(out, "&#x%X;", ch);
	return true;
}

/* HTML: every control shown as its escape, so that it reads as in the terminal. */
static bool html_control(struct strbuf *out, unsigned char ch)
{
	if (ch >= 0x20 && ch != 0x7f)
		return false;
	escape_control(out, ch);
	return true;
}

void text_xml(struct strbuf *out, const char *s)
{
	static const struct markup xml = { "&apos;", xml_control, "?" };
	escape_markup(out, s, &xml);
}

void text_html(struct strbuf *out, const char *s)
{
	static const struct markup html = { "&#39;", html_control, "\xef\xbf\xbd" /* U+FFFD */ };
	escape_markup(out, s, &html);
}

void text_github(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '%')
			strbuf_addstr(out, "%25");
		else if (*s == '\r')
			strbuf_addstr(out, "%0D");
		else if (*s == '\n')
			strbuf_addstr(out, "%0A");
		else
			strbuf_addch(out, *s);
	}
}
