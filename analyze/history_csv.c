/* history_csv.c -- the history as CSV: one row per mode x stage x metric x commit, unrounded */
#include "history.h"
#include "text.h"

/* Bytes are whole numbers (a median of two may end in .5): no exponent. */
static void number(struct strbuf *out, double v)
{
	if (v == (double)(long long)v && v < 9007199254740992.0)
		strbuf_addf(out, "%lld", (long long)v);
	else
		text_csv_double(out, v);
}

void history_render_csv(const struct history *h, struct strbuf *out)
{
	strbuf_addstr(out, "mode,stage,metric,unit,commit_index,commit,dirty,dir,runs,min,median,max,"
			   "regression,failed\n");
	for (size_t s = 0; s < h->nseries; s++)
		for (int m = 0; m < HM_NMETRICS; m++)
			for (size_t c = 0; c < h->ncommits && history_metric_shown(h, (enum history_metric)m);
			     c++) {
				const struct history_point *p = history_point(h, s, c, (enum history_metric)m);
				const struct history_commit *k = &h->commits[c];
				text_csv(out, h->series[s].mode);
				strbuf_addch(out, ',');
				text_csv(out, h->series[s].stage);
				strbuf_addf(out, ",%s,%s,%zu,", history_metric_name((enum history_metric)m),
					    history_metric_is_time((enum history_metric)m) ? "seconds" : "bytes", c);
				text_csv(out, k->commit);
				strbuf_addf(out, ",%s,", k->dirty ? "true" : "false");
				text_csv(out, k->dir);
				strbuf_addf(out, ",%zu,", p->n);
				if (p->n) {
					number(out, p->min);
					strbuf_addch(out, ',');
					number(out, p->median);
					strbuf_addch(out, ',');
					number(out, p->max);
				} else {
					strbuf_addstr(out, ",,");
				}
				strbuf_addf(out, ",%s,%zu\n", p->regression ? "true" : "false", p->failed);
			}
}
