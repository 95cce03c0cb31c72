/* check_text.c -- a check's values and findings in words, for its renderers and for history
 * (see check.h): sizes and times by units.h */
#include "../common/units.h"
#include "check.h"

void check_text_value(struct strbuf *sb, enum check_metric m, double v, bool sign)
{
	if (check_metric_is_time(m))
		units_add_seconds(sb, v, UNITS_FINE, sign);
	else
		units_add_size(sb, v, UNITS_FINE, sign);
}

void check_text_range(struct strbuf *sb, enum check_metric m, double lo, double hi, size_t n)
{
	/* units.h's one range form, as history and table print it */
	if (check_metric_is_time(m))
		units_add_seconds_range(sb, lo, hi, UNITS_FINE);
	else
		units_add_size_range(sb, lo, hi, UNITS_FINE);
	strbuf_addf(sb, " (%zu run%s)", n, n == 1 ? "" : "s");
}

void check_finding_line(const struct check_finding *f, struct strbuf *out)
{
	strbuf_addf(out, "%s %s %s", f->mode, f->stage ? f->stage : "-", check_metric_name(f->metric));
	if (f->metric == CM_LATENT)
		strbuf_addf(out, " %s", f->latent);
	strbuf_addstr(out, ": ");
	if (f->metric >= CM_NNUMERIC) {
		if (f->base_text)
			strbuf_addf(out, "%s -> %s: ", f->base_text, f->now_text ? f->now_text : "-");
		strbuf_addstr(out, f->detail ? f->detail : "");
		return;
	}
	check_text_range(out, f->metric, f->base_min, f->base_max, f->nbase);
	strbuf_addstr(out, " -> ");
	check_text_range(out, f->metric, f->cand_min, f->cand_max, f->ncand);
	strbuf_addstr(out, ": ");
	check_text_value(out, f->metric, f->change, true);
	double ref = f->kind == CK_REGRESSION ? f->base_max : f->base_min;
	if (ref > 0)
		strbuf_addf(out, " (%+.0f%%)", 100.0 * f->change / ref);
	if (f->detail)
		strbuf_addf(out, ", %s", f->detail);
	strbuf_addstr(out, "; spread ");
	check_text_value(out, f->metric, f->spread, false);
	strbuf_addstr(out, ", allowed ");
	check_text_value(out, f->metric, f->allowed, false);
}
