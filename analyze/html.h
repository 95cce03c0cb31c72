/* html.h -- the pieces of a self-contained HTML page: report.html, history's page
 *
 * One file that needs nothing else: the styles inline in the head, no script,
 * no external resource (no font, no image, no link followed to render it), the
 * charts inline as SVG. Every string that came from a trace, a path or an
 * error goes through text_html() (text.h), so no file name or stage name can
 * open an element.
 *
 * The tables and sentences are the markdown the other renderers write
 * (table_render_md, latents_render_md, ...), turned into HTML by
 * html_md(): the page says the same words as the terminal and table.md. It
 * reads the subset they write: "#" headings, "| a | b |" tables whose second
 * line is "|---|", "- " list items, paragraphs; a "\|" in a cell is a '|'.
 *
 *   struct strbuf page = STRBUF_INIT;
 *   html_begin(&page, "stagebench: eager against staged");
 *   html_heading(&page, 2, "Verdict", "verdict");
 *   html_md(&page, md, 1);                   (md's "#" becomes <h2>)
 *   html_svg(&page, svg, "memory", "Memory over time", "eager-1: ...");
 *   html_end(&page);
 */
#ifndef SB_HTML_H
#define SB_HTML_H

#include <stddef.h>

#include "../common/util.h"

/* The doctype, the head with its title and styles, <body>, <main> and an <h1>
 * of the title. */
void html_begin(struct strbuf *out, const char *title);
/* </main>, a footer naming the tool, </body></html>. */
void html_end(struct strbuf *out);
/* <hLEVEL id="ID">TEXT</hLEVEL> (id NULL for none: ids are ours, not escaped). */
void html_heading(struct strbuf *out, int level, const char *text, const char *id);
/* <p>TEXT</p>, or with a class ("warn", "fail") when cls is not NULL. */
void html_para(struct strbuf *out, const char *text, const char *cls);
/* Markdown of the renderers' subset as HTML, its headings `shift` levels
 * deeper ("#" with shift 1 is <h2>; never past <h6>). */
void html_md(struct strbuf *out, const char *md, int shift);
/* The same with at most max_rows body rows a table (0: all), the rest
 * counted in a last row ("... and 99,600 more rows, left out of this page"). */
void html_md_rows(struct strbuf *out, const char *md, int shift, size_t max_rows);
/*
 * Inline gnuplot's SVG (the file's bytes, len of them) as a figure: the XML
 * declaration and gnuplot's own <title> and <desc> dropped, its ids prefixed
 * with `prefix` and a '-' (two charts on one page define the same ids), an
 * accessible name (role="img", aria-label, <title>) of `title` and a
 * description (<desc>) of `desc`, `title` as the figure's caption. Returns 0,
 * or -1 when the bytes hold no <svg element or a <script> or a
 * foreignObject (nothing is written then).
 */
int html_svg(struct strbuf *out, const char *svg, size_t len, const char *prefix,
	     const char *title, const char *desc);

#endif
