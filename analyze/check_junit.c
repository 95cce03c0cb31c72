/* check_junit.c -- a check as JUnit XML: a test case per judgement (see check.h) */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "text.h"

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
	text_xml(out, k->mode);
	strbuf_addch(out, '.');
	text_xml(out, k->stage);
	strbuf_addstr(out, "\" name=\"");
	text_xml(out, check_metric_name(k->metric));
	if (k->latent) {
		strbuf_addch(out, ' ');
		text_xml(out, k->latent);
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
		text_xml(out, k->why);
		strbuf_addstr(out, "\"/>\n");
	} else {
		const struct check_finding *f = finding_of(c, k);
		if (f)
			check_finding_line(f, &line);
		strbuf_addstr(out, "      <failure type=\"regression\" message=\"");
		text_xml(out, line.buf ? line.buf : "regression");
		strbuf_addstr(out, "\"/>\n");
	}
	strbuf_release(&line);
	strbuf_addstr(out, "    </testcase>\n");
}

static void junit_count_cases(const struct check *c, const char *mode, size_t *n, size_t *fail, size_t *skip)
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

void check_render_junit(const struct check *c, struct strbuf *out)
{
	size_t n, fail, skip;
	junit_count_cases(c, NULL, &n, &fail, &skip);
	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	strbuf_addf(out, "<testsuites name=\"stagebench check\" tests=\"%zu\" failures=\"%zu\" "
			 "errors=\"0\" skipped=\"%zu\">\n", n, fail, skip);
	for (size_t mi = 0; mi < c->nmodes; mi++) {
		const char *mode = c->modes[mi];
		junit_count_cases(c, mode, &n, &fail, &skip);
		if (!n)
			continue;
		strbuf_addstr(out, "  <testsuite name=\"");
		text_xml(out, mode);
		strbuf_addf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
			    n, fail, skip);
		for (size_t i = 0; i < c->ncases; i++)
			if (!strcmp(c->cases[i].mode, mode))
				testcase(c, &c->cases[i], out);
		strbuf_addstr(out, "  </testsuite>\n");
	}
	strbuf_addstr(out, "</testsuites>\n");
}
