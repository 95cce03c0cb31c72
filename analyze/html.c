/* html.c -- the pieces of a self-contained HTML page (see html.h) */
#include "html.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text.h"

/* Inline, small, readable at a laptop's width and in print; no font fetched. */
static const char style[] =
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1b1b1b;"
	"background:#fff;margin:0}"
	"main{max-width:1000px;margin:0 auto;padding:1em 1.5em 3em}"
	"h1{font-size:1.5em;margin:.6em 0 .3em}h2{font-size:1.25em;margin-top:1.8em;"
	"border-bottom:1px solid #ddd;padding-bottom:.2em}h3{font-size:1.1em}h4{font-size:1em}"
	"table{border-collapse:collapse;margin:.6em 0;font-variant-numeric:tabular-nums}"
	"th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
	"th{background:#f3f3f3}tbody tr:nth-child(even){background:#fafafa}"
	"figure{margin:1em 0}figure svg{max-width:100%;height:auto;display:block}"
	"figcaption{font-size:.9em;color:#555}"
	"code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;"
	"word-break:break-all}"
	".verdict{font-size:1.08em;background:#f2f7ff;border-left:4px solid #3a6fd8;"
	"padding:.6em .9em}"
	".warn{background:#fff6e0;border-left:4px solid #d89a00;padding:.5em .9em}"
	".fail{background:#fdecea;border-left:4px solid #c62828;padding:.5em .9em}"
	"footer{color:#777;font-size:.85em;margin-top:3em}";

void html_begin(struct strbuf *out, const char *title)
{
	strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			   "style-src 'unsafe-inline'\">\n<title>");
	text_html(out, title);
	strbuf_addf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n<h1>", style);
	text_html(out, title);
	strbuf_addstr(out, "</h1>\n");
}

void html_end(struct strbuf *out)
{
	strbuf_addstr(out, "<footer>Written by stagebench: one file, no script, nothing "
			   "fetched.</footer>\n</main>\n</body>\n</html>\n");
}

void html_heading(struct strbuf *out, int level, const char *text, const char *id)
{
	if (id)
		strbuf_addf(out, "<h%d id=\"%s\">", level, id);
	else
		strbuf_addf(out, "<h%d>", level);
	text_html(out, text);
	strbuf_addf(out, "</h%d>\n", level);
}

void html_para(struct strbuf *out, const char *text, const char *cls)
{
	if (cls)
		strbuf_addf(out, "<p class=\"%s\">", cls);
	else
		strbuf_addstr(out, "<p>");
	text_html(out, text);
	strbuf_addstr(out, "</p>\n");
}

/* Text of n bytes, escaped. */
static void text_n(struct strbuf *out, const char *s, size_t n)
{
	char *copy = xstrndup(s, n);
	text_html(out, copy);
	free(copy);
}

/* One table row "| a | b \| c |" as cells of tag td or th. */
static void html_md_row(struct strbuf *out, const char *line, size_t n, const char *tag)
{
	struct strbuf cell = STRBUF_INIT;
	size_t i = 0;
	if (i < n && line[i] == '|')
		i++;
	strbuf_addstr(out, "<tr>");
	while (i < n) {
		strbuf_reset(&cell);
		for (; i < n && line[i] != '|'; i++) {
			if (line[i] == '\\' && i + 1 < n && line[i + 1] == '|')
				i++;
			strbuf_addch(&cell, line[i]);
		}
		i++; /* the '|' */
		const char *c = strbuf_str(&cell);
		size_t a = 0, b = strlen(c);
		while (a < b && c[a] == ' ')
			a++;
		while (b > a && c[b - 1] == ' ')
			b--;
		strbuf_addf(out, "<%s%s>", tag, !strcmp(tag, "th") ? " scope=\"col\"" : "");
		text_n(out, c + a, b - a);
		strbuf_addf(out, "</%s>", tag);
	}
	strbuf_addstr(out, "</tr>\n");
	strbuf_release(&cell);
}

static bool is_rule(const char *line, size_t n)
{
	if (n < 3 || line[0] != '|')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("|-: ", line[i]))
			return false;
	return true;
}

/* The state of html_md: what is open. */
enum md_block { MD_NONE, MD_PARA, MD_LIST, MD_TABLE };

/* The rows of the open table: written, and left out past max_rows. */
struct md_rows {
	size_t max, written, left;
};

static void md_close(struct strbuf *out, enum md_block *b, struct md_rows *rows)
{
	static const char *const ends[] = { "", "</p>\n", "</ul>\n", "</tbody></table>\n" };
	if (*b == MD_TABLE && rows->left)
		strbuf_addf(out, "<tr><td colspan=\"99\">... and %zu more row%s, left out of this "
			    "page</td></tr>\n", rows->left,
			    rows->left == 1 ? "" : "s");
	strbuf_addstr(out, ends[*b]);
	*b = MD_NONE;
	rows->written = rows->left = 0;
}

void html_md(struct strbuf *out, const char *md, int shift)
{
	html_md_rows(out, md, shift, 0);
}

void html_md_rows(struct strbuf *out, const char *md, int shift, size_t max_rows)
{
	enum md_block b = MD_NONE;
	struct md_rows rows = { .max = max_rows };
	for (const char *p = md ? md : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *next = nl ? nl + 1 : p + n;
		size_t h = 0;
		while (h < n && p[h] == '#')
			h++;
		if (!n) {
			md_close(out, &b, &rows);
		} else if (h && h < n && p[h] == ' ') {
			md_close(out, &b, &rows);
			int level = (int)h + shift > 6 ? 6 : (int)h + shift;
			strbuf_addf(out, "<h%d>", level);
			text_n(out, p + h + 1, n - h - 1);
			strbuf_addf(out, "</h%d>\n", level);
		} else if (p[0] == '|' && b != MD_TABLE) {
			const char *nl2 = nl ? strchr(next, '\n') : NULL;
			size_t n2 = nl2 ? (size_t)(nl2 - next) : strlen(next);
			md_close(out, &b, &rows);
			strbuf_addstr(out, "<table>\n");
			if (nl && is_rule(next, n2)) {
				strbuf_addstr(out, "<thead>");
				html_md_row(out, p, n, "th");
				strbuf_addstr(out, "</thead>");
				next = nl2 ? nl2 + 1 : next + n2;
			}
			strbuf_addstr(out, "<tbody>\n");
			b = MD_TABLE;
		} else if (p[0] == '|') {
			if (rows.max && rows.written >= rows.max)
				rows.left++;
			else
				html_md_row(out, p, n, "td");
			rows.written++;
		} else if (n > 2 && p[0] == '-' && p[1] == ' ') {
			if (b != MD_LIST) {
				md_close(out, &b, &rows);
				strbuf_addstr(out, "<ul>\n");
				b = MD_LIST;
			}
			strbuf_addstr(out, "<li>");
			text_n(out, p + 2, n - 2);
			strbuf_addstr(out, "</li>\n");
		} else {
			if (b == MD_PARA) {
				strbuf_addstr(out, "<br>\n");
			} else {
				md_close(out, &b, &rows);
				strbuf_addstr(out, "<p>");
				b = MD_PARA;
			}
			text_n(out, p, n);
		}
		p = next;
	}
	md_close(out, &b, &rows);
}

/* Whether the n bytes at s hold `word`, in any case. */
static bool holds_ci(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word);
	for (size_t i = 0; i + w <= n; i++)
		if (!strncasecmp(s + i, word, w))
			return true;
	return false;
}

/* The end of the element <tag ...>...</tag> starting at s (or s when none). */
static const char *skip_element(const char *s, const char *end, const char *tag)
{
	char close[32];
	snprintf(close, sizeof(close), "</%s>", tag);
	size_t k = strlen(close);
	for (const char *p = s; p + k <= end; p++)
		if (!memcmp(p, close, k))
			return p + k;
	return s;
}

/* s[0..n) with gnuplot's ids and the references to them prefixed, and its
 * plots' titles ("gnuplot_plot_1a": no name for a reader) left out. */
static void prefixed_ids(struct strbuf *out, const char *s, size_t n, const char *prefix)
{
	static const char *const marks[] = { "id='", "id=\"", "href='#", "href=\"#", "url(#" };
	static const char plot_title[] = "<title>gnuplot_plot_";
	for (size_t i = 0; i < n;) {
		size_t hit = 0;
		if (n - i >= sizeof(plot_title) - 1 && !memcmp(s + i, plot_title, sizeof(plot_title) - 1)) {
			const char *after = skip_element(s + i, s + n, "title");
			if (after != s + i) {
				i = (size_t)(after - s);
				continue;
			}
		}
		for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]) && !hit; m++) {
			size_t k = strlen(marks[m]);
			if (i + k <= n && !memcmp(s + i, marks[m], k))
				hit = k;
		}
		if (hit) {
			strbuf_add(out, s + i, hit);
			strbuf_addf(out, "%s-", prefix);
			i += hit;
		} else {
			strbuf_addch(out, s[i++]);
		}
	}
}

int html_svg(struct strbuf *out, const char *svg, size_t len, const char *prefix,
	     const char *title, const char *desc)
{
	const char *end = svg + len, *open = NULL;
	for (const char *p = svg; p + 4 < end && !open; p++)
		if (!memcmp(p, "<svg", 4) && (p[4] == ' ' || p[4] == '\n' || p[4] == '>'))
			open = p;
	if (!open || holds_ci(svg, len, "<script") || holds_ci(svg, len, "foreignobject"))
		return -1;
	const char *gt = memchr(open, '>', (size_t)(end - open));
	if (!gt)
		return -1;
	strbuf_addf(out, "<figure id=\"chart-%s\">\n", prefix);
	strbuf_add(out, open, 4);
	strbuf_addstr(out, " role=\"img\" aria-label=\"");
	text_html(out, title);
	strbuf_addch(out, '"');
	strbuf_add(out, open + 4, (size_t)(gt - open - 4));
	strbuf_addstr(out, ">\n<title>");
	text_html(out, title);
	strbuf_addstr(out, "</title>\n<desc>");
	text_html(out, desc);
	strbuf_addstr(out, "</desc>\n");
	/* gnuplot's own title ("Gnuplot") and desc go: ours name the chart */
	const char *body = gt + 1;
	for (;;) {
		while (body < end && (*body == '\n' || *body == ' '))
			body++;
		const char *after = body;
		if ((size_t)(end - body) > 7 && !memcmp(body, "<title>", 7))
			after = skip_element(body, end, "title");
		else if ((size_t)(end - body) > 6 && !memcmp(body, "<desc>", 6))
			after = skip_element(body, end, "desc");
		if (after == body)
			break;
		body = after;
	}
	prefixed_ids(out, body, (size_t)(end - body), prefix);
	if (out->len && out->buf[out->len - 1] != '\n')
		strbuf_addch(out, '\n');
	strbuf_addstr(out, "<figcaption>");
	text_html(out, title);
	strbuf_addstr(out, "</figcaption>\n</figure>\n");
	return 0;
}
