/* text.h -- the escaping and text helpers every renderer shares
 *
 * A name from a trace (a stage, a run id, a library, a directory) may hold '|',
 * a quote, a newline, an escape sequence or bytes that are not UTF-8; each
 * output format has its own way to print it safely, and they all live here.
 * This file calls no renderer and no model code: renderers (table_md.c,
 * check_junit.c, ...), the models' own text (versions.c) and the runner's report
 * call it. JSON strings are escaped by the JSON writer (common/jsonw.h).
 */
#ifndef SB_TEXT_H
#define SB_TEXT_H

#include "../common/util.h"
#include "analysis.h"

/* Markdown table cell text: '|' escaped, newlines and other control characters as
 * a visible "\n", "\xNN". */
void text_md(struct strbuf *out, const char *s);
/* Terminal text: control characters (escape sequences, newlines) as "\n", "\xNN". */
void text_term(struct strbuf *out, const char *s);
/* A CSV field, quoted when it holds a comma, a quote or a line break. */
void text_csv(struct strbuf *out, const char *s);
/* The shortest %g that reads back as v. */
void text_csv_double(struct strbuf *out, double v);
/* XML attribute and text: the five entities, control characters as "&#xNN;"
 * where XML 1.0 allows them (tab, LF, CR); every other character XML 1.0
 * forbids (the other controls, U+FFFE, U+FFFF, surrogates, bytes that are not
 * UTF-8) as '?', so that the document stays well-formed. */
void text_xml(struct strbuf *out, const char *s);
/* HTML text and attribute values: the five characters of markup as entities,
 * control characters (line breaks, escape sequences) as a visible "\n",
 * "\xNN", a byte that is not UTF-8 (or a character XML 1.0 forbids) as
 * U+FFFD: nothing in s can open an element or end an attribute. */
void text_html(struct strbuf *out, const char *s);
/* A GitHub Actions workflow command's message: '%', CR and LF escaped as GitHub
 * reads them (a line break would otherwise start a command of its own). */
void text_github(struct strbuf *out, const char *s);
/* How a run ended, as the machine-readable formats key it: "completed", "guard",
 * "signal", "exit", "recorder_died", "recording". */
const char *text_outcome_key(enum run_outcome o);

#endif
