/* check_github.c -- a check as GitHub Actions workflow commands (see check.h) */
#include <string.h>

#include "check.h"
#include "text.h"

static void annotation(const char *level, const char *title, const char *msg, struct strbuf *out)
{
	strbuf_addf(out, "::%s title=%s::", level, title);
	text_github(out, msg);
	strbuf_addch(out, '\n');
}

void check_render_github(const struct check *c, struct strbuf *out)
{
	struct strbuf line = STRBUF_INIT;
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct check_finding *f = &c->findings[i];
		strbuf_reset(&line);
		if (f->kind == CK_REGRESSION || f->kind == CK_IMPROVEMENT) {
			check_finding_line(f, &line);
			annotation(f->kind == CK_REGRESSION ? "error" : "notice",
				   f->kind == CK_REGRESSION ? "stagebench regression"
							    : "stagebench improvement", line.buf, out);
		} else if (f->kind == CK_NOT_JUDGED) {
			strbuf_addf(&line, "%s %s: %s not judged: %s", f->mode, f->stage ? f->stage : "-",
				    f->metric == CM_LATENT ? "latent" : f->now_text, f->detail);
			annotation("warning", "stagebench not judged", line.buf, out);
		}
	}
	if (c->versions.ndiffs) {
		strbuf_reset(&line);
		strbuf_addstr(&line, "versions differ: ");
		versions_diff_text(&c->versions, &line, false);
		annotation("notice", "stagebench versions", line.buf, out);
	}
	strbuf_release(&line);
	size_t nr = check_count(c, CK_REGRESSION), ni = check_count(c, CK_IMPROVEMENT);
	/* The labels (directory names) escaped too: a line break in one would start
	 * a line of its own, a workflow command Actions obeys. */
	strbuf_addf(out, "check: %zu regression%s, %zu improvement%s (baseline ", nr,
		    nr == 1 ? "" : "s", ni, ni == 1 ? "" : "s");
	text_github(out, c->side[0].label ? c->side[0].label : "-");
	strbuf_addf(out, ": %zu runs; candidate ", c->side[0].n);
	text_github(out, c->side[1].label ? c->side[1].label : "-");
	strbuf_addf(out, ": %zu runs)\n", c->side[1].n);
}
