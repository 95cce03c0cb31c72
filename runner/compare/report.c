/* report.c -- compare's report: the slow-run warnings, the table, the failed runs, the latents,
 * the run summary and the charts */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyze/analysis.h"
#include "../../analyze/latents.h"
#include "../../analyze/loadplan.h"
#include "../../analyze/text.h"
#include "../../analyze/table.h"
#include "../../common/units.h"
#include "../../common/util.h"
#include "../../plots/plot.h"
#include "compare_int.h"
#include "../conditions.h"

/* Stage names the charts' description lists at most. */
#define REPORT_DESC_STAGES 60

/* A warning for each completed run much slower than the variant's other
 * completed runs, with what may be why. */
static void warn_slow_runs(const struct session *s)
{
	double *others = xcalloc(s->ndone + 1, sizeof(*others));
	for (size_t i = 0; i < s->ndone; i++) {
		const struct done_run *d = &s->done[i];
		size_t n = 0;
		double median;
		if (!d->completed)
			continue;
		for (size_t j = 0; j < s->ndone; j++)
			if (j != i && s->done[j].completed && !strcmp(s->done[j].mode, d->mode))
				others[n++] = s->done[j].wall_s;
		if (!run_much_slower(d->wall_s, others, n, &median))
			continue;
		char took[UNITS_BUF], med[UNITS_BUF];
		warning("%s run %d took %s, %.1f times the %s of the other %s run%s: %s",
			d->mode, d->rep, units_seconds(d->wall_s, UNITS_COARSE, false, took),
			d->wall_s / median, units_seconds(median, UNITS_COARSE, false, med), d->mode,
			n == 1 ? "" : "s",
			d->rep == 1 ? "a first run often pays for building or fetching files, a cold "
				      "page cache or warming caches (a 'prepare' command in the "
				      "pipeline file, --warmup 1 or --cache-state warm make the runs "
				      "alike)"
				    : "the machine may have been busy (other processes, swapping) "
				      "during it");
	}
	free(others);
}

static int write_text(const char *dir, const char *name, const struct strbuf *sb)
{
	char *path = xasprintf("%s/%s", dir, name);
	int rc = write_file(path, sb->buf ? sb->buf : "", sb->len);
	free(path);
	return rc;
}

/* The run summary: one row per run. */
static void runs_md(const struct done_run *d, size_t n, struct strbuf *o)
{
	strbuf_addstr(o, "| run | outcome | peak footprint | wall | trace | reader |\n"
		      "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		char buf[96], fp[32];
		/* the id and the file name are a file's name: '|', line breaks escaped */
		strbuf_addstr(o, "| ");
		text_md(o, d[i].id);
		if (!d[i].read) {
			strbuf_addstr(o, " | trace unreadable | | | ");
			text_md(o, d[i].trace_path);
			strbuf_addstr(o, " | |\n");
			continue;
		}
		const struct analysis *a = &d[i].a;
		const char *slash = strrchr(d[i].trace_path, '/');
		strbuf_addf(o, " | %s", analysis_outcome_str(a, buf, sizeof(buf)));
		if (a->outcome != RUN_COMPLETED) {
			const struct stage_stats *st = a->nstages ? &a->stages[a->ran_to] : NULL;
			if (st) {
				strbuf_addstr(o, " in ");
				text_md(o, st->name); /* the trace's: '|', line breaks */
			}
			if (a->reason) {
				strbuf_addstr(o, ": ");
				text_md(o, a->reason);
			}
		}
		if (a->has_footprint) {
			format_gb(a->peak_footprint, fp);
			strbuf_addf(o, " | %s", fp);
		} else {
			strbuf_addstr(o, " | no sample");
		}
		strbuf_addstr(o, " | ");
		units_add_seconds(o, a->wall_s, UNITS_COARSE, false);
		strbuf_addstr(o, " | ");
		text_md(o, slash ? slash + 1 : d[i].trace_path);
		strbuf_addf(o, " | %s |\n", reader_info(a->reader)->label);
	}
}

bool compare_error_line(const char *text, size_t len, struct strbuf *out)
{
	static const char tb[] = "Traceback (most recent call last):";
	static const char pr[] = "stagebench_probe: ";
	const char *end = text + len, *found = NULL, *probe = NULL, *last = NULL;
	bool in_tb = false;
	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n && p[n - 1] == '\r')
			n--;
		bool blank = true;
		for (size_t i = 0; i < n && blank; i++)
			blank = p[i] == ' ' || p[i] == '\t';
		if (n == sizeof(tb) - 1 && !memcmp(p, tb, n)) {
			in_tb = true;
			found = NULL;
		} else if (in_tb && !blank && p[0] != ' ' && p[0] != '\t') {
			found = p; /* the exception line: the first unindented one */
			in_tb = false;
		}
		if (!blank && n > sizeof(pr) - 1 && !memcmp(p, pr, sizeof(pr) - 1) &&
		    !str_starts_with(p + sizeof(pr) - 1, "the run is a failure"))
			probe = p;
		if (!blank)
			last = p;
		p = nl ? nl + 1 : end;
	}
	const char *pick = found ? found : probe ? probe : last;
	if (!pick)
		return false;
	size_t n = 0;
	while (pick + n < end && pick[n] != '\n' && pick[n] != '\r')
		n++;
	if (n > COMPARE_ERROR_LINE_MAX) {
		n = COMPARE_ERROR_LINE_MAX;
		while (n && ((unsigned char)pick[n] & 0xc0) == 0x80)
			n--; /* not inside a UTF-8 character */
	}
	strbuf_add(out, pick, n);
	return true;
}

/* The runs whose command failed on their own, first of every finding: which
 * stage each died in, the error it printed last, where its stderr is. */
static void report_failed(const struct session *s, const struct done_run *d, size_t n,
			  struct report_page *rp)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		if (!d[i].failed)
			continue;
		const struct analysis *a = &d[i].a;
		strbuf_addstr(&sb, "- ");
		text_term(&sb, d[i].mode);
		strbuf_addf(&sb, " run %d failed", d[i].rep);
		/* names and the error line are file contents: one line, controls escaped */
		if (d[i].read && a->nstages) {
			strbuf_addstr(&sb, " in ");
			text_term(&sb, a->stages[a->ran_to].name);
		}
		char *text = NULL;
		size_t len = 0;
		struct strbuf line = STRBUF_INIT;
		if (!access(d[i].err_path, R_OK) &&
		    !read_file_tail(d[i].err_path, 65536, &text, &len) &&
		    compare_error_line(text, len, &line)) {
			strbuf_addstr(&sb, ": ");
			text_term(&sb, line.buf);
		}
		strbuf_release(&line);
		free(text);
		if (d[i].read && a->outcome == RUN_SIGNAL)
			strbuf_addf(&sb, " (killed by signal %d", a->signal);
		else if (d[i].read)
			strbuf_addf(&sb, " (exit code %d", a->exit_code);
		else
			strbuf_addstr(&sb, " (");
		strbuf_addf(&sb, "%sits stderr: ", d[i].read ? "; " : "");
		text_term(&sb, d[i].err_path);
		strbuf_addstr(&sb, ")\n");
	}
	if (sb.len && !s->page_only)
		printf("## Failed runs\n\n%s\n", sb.buf);
	strbuf_addstr(&rp->failed, strbuf_str(&sb));
	strbuf_release(&sb);
}

/* The charts' text alternative: the runs, how each ended, and the stages. */
static void chart_desc(const struct table *t, const struct done_run *d, size_t n,
		       struct strbuf *o)
{
	char buf[96];
	strbuf_addstr(o, "Runs: ");
	for (size_t i = 0, k = 0; i < n; i++)
		if (d[i].read)
			strbuf_addf(o, "%s%s %s", k++ ? ", " : "", d[i].id,
				    analysis_outcome_str(&d[i].a, buf, sizeof(buf)));
	strbuf_addstr(o, ". Stages: ");
	for (size_t i = 0; i < t->nstages && i < REPORT_DESC_STAGES; i++)
		strbuf_addf(o, "%s%s", i ? ", " : "", t->stages[i]);
	if (t->nstages > REPORT_DESC_STAGES)
		strbuf_addf(o, " and %zu more", t->nstages - REPORT_DESC_STAGES);
	strbuf_addstr(o, ".");
}

static const struct table *sort_table; /* pick_bars' qsort */

static uint64_t stage_high(const struct table *t, size_t s)
{
	uint64_t hi = 0;
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_cell *c = table_cell(t, s, m);
		if (c->ncompleted && c->max_bytes > hi)
			hi = c->max_bytes;
	}
	return hi;
}

/* Higher peak first; equal ones in table order. */
static int by_peak(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t px = stage_high(sort_table, x), py = stage_high(sort_table, y);
	return px != py ? (px < py ? 1 : -1) : (x > y) - (x < y);
}

static int by_row(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* More than REPORT_MAX_BARS stages: the ones with the highest peaks, in table
 * order, for the stages chart, and a note saying so. */
static void pick_bars(const struct table *t, struct report_page *rp)
{
	if (t->nstages <= REPORT_MAX_BARS)
		return;
	size_t *rows = xcalloc(t->nstages, sizeof(*rows));
	for (size_t s = 0; s < t->nstages; s++)
		rows[s] = s;
	sort_table = t;
	qsort(rows, t->nstages, sizeof(*rows), by_peak);
	qsort(rows, REPORT_MAX_BARS, sizeof(*rows), by_row);
	rp->bar_stages = xcalloc(REPORT_MAX_BARS, sizeof(*rp->bar_stages));
	for (size_t i = 0; i < REPORT_MAX_BARS; i++)
		rp->bar_stages[i] = xstrdup(t->stages[rows[i]]);
	rp->nbar_stages = REPORT_MAX_BARS;
	strbuf_addf(&rp->chart_note, "The stages chart draws the %d of the %zu stages with the "
		    "highest peaks; table.md has every stage.", REPORT_MAX_BARS, t->nstages);
	free(rows);
}

/* table.md, printed too; the verdict, the table and the charts' description
 * for the page. Returns 0 or -1. */
static int report_table(const struct session *s, const struct done_run *d, size_t n,
			size_t nread, struct report_page *rp)
{
	const char *out = s->o->setup.out;
	int rc = 0;
	struct table_run *tr = xcalloc(nread, sizeof(*tr));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i].read)
			tr[k++].a = d[i].a; /* shallow: d[i].a keeps ownership */
	struct table t = TABLE_INIT;
	struct strbuf tmd = STRBUF_INIT, file = STRBUF_INIT;
	if (table_build(&t, tr, nread, NULL, 0) < 0) {
		rc = -1;
	} else {
		table_render_md(&t, &tmd);
		table_render_verdict(&t, &rp->verdict);
		pick_bars(&t, rp);
		chart_desc(&t, d, n, &rp->chart_desc);
		strbuf_addstr(&file, strbuf_str(&tmd));
		loadplan_section_md(&t, &file, &rp->plan); /* as `stagebench table` prints it */
		if (write_text(out, "table.md", &file))
			rc = -1;
	}
	if (!s->page_only)
		printf("## Per-stage peak footprint\n\n%s\n", strbuf_str(&file));
	strbuf_addstr(&rp->table, strbuf_str(&tmd));
	table_release(&t);
	strbuf_release(&tmd);
	strbuf_release(&file);
	free(tr);
	return rc;
}

/* The latent findings (latent_pair_is_finding), except a latent missing from
 * a run that did not get to the end (stopped by the guard or a signal, no end
 * record): the table already says how far that run got. */
static size_t findings_of_finished(const struct latent_set *ls)
{
	size_t n = 0;
	for (size_t i = 0; i < ls->nlatents; i++) {
		const struct latent *l = &ls->latents[i];
		for (size_t j = 0; j < l->npairs; j++) {
			const struct latent_pair *p = &l->pairs[j];
			if (!latent_pair_is_finding(p))
				continue;
			if (p->diff.result == LR_MISSING &&
			    (ls->runs[p->a].note || ls->runs[p->b].note))
				continue;
			n++;
		}
	}
	return n;
}

/* latents.md, printed too. Returns 0, or -1; *findings as
 * findings_of_finished(). */
static int report_latents(const struct session *s, const struct done_run *d, size_t n,
			  size_t *findings, struct report_page *rp)
{
	const char *out = s->o->setup.out;
	int rc = 0;
	struct latent_set ls = LATENT_SET_INIT;
	struct strbuf lmd = STRBUF_INIT;
	*findings = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i].read)
			latent_set_add_trace(&ls, d[i].id, d[i].mode, NULL, &d[i].tr);
	if (ls.nruns < 2) {
		strbuf_addstr(&lmd, "Latents: fewer than two runs, nothing to compare.\n");
	} else if (latent_compare(&ls, NULL) < 0) {
		rc = -1;
		strbuf_addstr(&lmd, "Latents: a copy could not be read (see the error above).\n");
	} else {
		if (!ls.nlatents)
			warning("no latent events in the traces of '%s': does the pipeline's adapter "
				"fingerprint its outputs?", out);
		latents_render_md(&ls, &lmd);
		*findings = findings_of_finished(&ls);
	}
	latent_set_release(&ls);
	if (write_text(out, "latents.md", &lmd))
		rc = -1;
	if (!s->page_only)
		printf("## Latents\n\n%s\n", strbuf_str(&lmd));
	const char *res = strstr(strbuf_str(&lmd), "Result: ");
	if (res)
		strbuf_add(&rp->latents_result, res, strcspn(res, "\n"));
	strbuf_addstr(&rp->latents, strbuf_str(&lmd));
	strbuf_release(&lmd);
	return rc;
}

/* The charts; a missing gnuplot is a warning. Returns -1 when gnuplot could not
 * draw them (a full disk: no chart is kept), else 0. */
static int report_charts(const char *out, const struct done_run *d, size_t n, size_t nread,
			 const struct run_list *runs, struct report_page *rp)
{
	int rc = 0;
	struct trace *traces = xcalloc(nread, sizeof(*traces));
	const struct run_entry **ents = xcalloc(nread, sizeof(*ents));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!d[i].read || !d[i].a.has_footprint)
			continue; /* nothing to draw (a run stopped before its first sample) */
		traces[k] = d[i].tr; /* shallow */
		ents[k++] = d[i].entryless ? NULL : &runs->items[i];
	}
	struct plot_opts po = PLOT_OPTS_INIT;
	po.out_dir = out;
	po.quiet_paths = true;
	po.stages = (const char *const *)rp->bar_stages;
	po.nstages = rp->nbar_stages;
	if (!k) {
		warning("no run has a footprint sample: no charts");
		rp->charts_why = "No run has a footprint sample: there is nothing to draw.";
	} else if (!plot_have_gnuplot(NULL)) {
		warning(PLOT_GNUPLOT_MISSING);
		rp->charts_why = "No charts: gnuplot was not found (Debian: gnuplot-nox).";
	} else if (plot_runs(&po, traces, ents, k) < 0 ||
		   (po.format = PLOT_SVG, plot_runs(&po, traces, ents, k) < 0)) {
		rc = error("the charts were not drawn (see above); the tables are in '%s'", out);
		rp->charts_why = "The charts could not be drawn (gnuplot failed).";
	} else {
		rp->svg_drawn = true;
		if (sb_verbosity >= 1)
			note("charts: %s/memory.png, %s/stages.png (and .svg)", out, out);
	}
	free(traces);
	free(ents);
	return rc;
}

/* Each run's trace read and analysed; what could not be is a problem for the
 * page. Returns how many were read; *rc -1 when one could not be. */
static size_t read_runs(struct session *s, struct report_page *rp, int *rc)
{
	struct done_run *d = s->done;
	size_t nread = 0;
	for (size_t i = 0; i < s->ndone; i++) {
		const struct run_entry *e = !d[i].entryless ? &s->runs.items[i] : NULL;
		if ((trace_read(d[i].trace_path, &d[i].tr) < 0 && !d[i].tr.has_start) ||
		    analysis_run(&d[i].tr, e, &d[i].a) < 0) {
			*rc = -1;
			strbuf_addf(&rp->problems, "- %s: its trace %s could not be read (no start "
				    "record): it is left out.\n", d[i].id, d[i].trace_path);
			continue;
		}
		if (d[i].a.damaged)
			strbuf_addf(&rp->problems, "- %s: its trace %s is cut short or damaged: the "
				    "figures are of what could be read.\n", d[i].id, d[i].trace_path);
		if (d[i].entryless && d[i].a.mode) {
			free(d[i].mode); /* the trace's own mode, not one guessed from its name */
			d[i].mode = xstrdup(d[i].a.mode);
		}
		if (d[i].entryless) {
			d[i].failed = d[i].a.outcome == RUN_EXIT || d[i].a.outcome == RUN_SIGNAL;
			s->failed += d[i].failed;
		}
		d[i].read = true;
		nread++;
	}
	return nread;
}

/* Read the traces, print and write the table, the latents, the summary, the
 * charts and report.html. Returns 0, or -1 when something could not be read or
 * written; *findings as report_latents(). */
static int report(struct session *s, bool charts, size_t *findings)
{
	const char *out = s->o->setup.out;
	struct done_run *d = s->done;
	size_t n = s->ndone;
	int rc = 0;
	struct report_page rp = REPORT_PAGE_INIT;
	rp.out = out;
	rp.d = d;
	rp.n = n;
	strbuf_addstr(&rp.problems, strbuf_str(&s->problems));
	*findings = 0;
	size_t nread = read_runs(s, &rp, &rc);
	if (!nread) {
		rc = error("no run of '%s' could be read", out);
		rp.charts_why = "No run could be read: there is nothing to draw.";
		strbuf_addstr(&rp.verdict, "No verdict: no run could be read.\n");
	} else {
		if (report_table(s, d, n, nread, &rp) < 0)
			rc = -1;
		report_failed(s, d, n, &rp);
		if (report_latents(s, d, n, findings, &rp) < 0)
			rc = -1;
	}
	runs_md(d, n, &rp.runs);
	strbuf_addstr(&rp.runs, strbuf_str(&s->missing));
	if (!s->page_only)
		printf("## Runs\n\n%s", strbuf_str(&rp.runs));
	fflush(stdout);
	if (!charts)
		rp.charts_why = "Charts were not asked for.";
	else if (nread && report_charts(out, d, n, nread, &s->runs, &rp) < 0)
		rc = -1;
	if (report_html_write(&rp) < 0)
		rc = -1;
	struct strbuf *bufs[] = { &rp.verdict, &rp.latents_result, &rp.problems, &rp.failed,
				  &rp.table, &rp.latents, &rp.runs, &rp.chart_desc, &rp.chart_note,
				  &rp.plan };
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		strbuf_release(bufs[i]);
	for (size_t i = 0; i < rp.nbar_stages; i++)
		free(rp.bar_stages[i]);
	free(rp.bar_stages);
	return rc;
}

/* compare.c's entry points to the report (compare_int.h). */
void compare_warn_slow_runs(const struct session *s)
{
	warn_slow_runs(s);
}

int compare_report(struct session *s, bool charts, size_t *findings)
{
	return report(s, charts, findings);
}
