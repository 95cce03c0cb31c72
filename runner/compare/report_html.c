/* report_html.c -- report.html: the comparison as one self-contained page (the verdict,
 * the tables, the charts as inline SVG, the latents, the failed runs, the run summary,
 * the versions, the hosts and the commands) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyze/html.h"
#include "../../analyze/loadplan.h"
#include "../../analyze/text.h"
#include "../../common/units.h"
#include "../../common/util.h"
#include "../../plots/plot.h"
#include "compare_int.h"

/* The charts as SVG into OUT (memory.svg, stages.svg), then inlined; a chart
 * that cannot be drawn or read is said instead. */
static void page_charts(struct strbuf *pg, const struct report_page *rp)
{
	static const char *const names[] = { "memory", "stages" };
	static const char *const titles[] = {
		"Memory over time, one panel per run, with its stage bands",
		"Peak footprint per stage and mode (bar: the highest run; whiskers: the range)",
	};
	html_heading(pg, 2, "Charts", "charts");
	if (!rp->svg_drawn) {
		html_para(pg, rp->charts_why ? rp->charts_why : "No charts were drawn.", "warn");
		return;
	}
	for (size_t c = 0; c < 2; c++) {
		char *path = xasprintf("%s/%s.svg", rp->out, names[c]);
		char *svg = NULL;
		size_t len = 0;
		if (read_file(path, &svg, &len) < 0 ||
		    html_svg(pg, svg, len, names[c], titles[c], strbuf_str(&rp->chart_desc)) < 0) {
			char *why = xasprintf("The chart %s could not be read or was not plain SVG.", path);
			html_para(pg, why, "warn");
			free(why);
		}
		free(svg);
		free(path);
	}
	if (rp->chart_note.len)
		html_para(pg, rp->chart_note.buf, NULL);
}

/* The plan as it ran: its section when a run reports a load or a release. */
static void page_plan(struct strbuf *pg, const struct report_page *rp)
{
	if (!rp->plan.len)
		return;
	html_heading(pg, 2, LOADPLAN_HEADING, "plan");
	html_md_rows(pg, rp->plan.buf, 2, REPORT_MAX_ROWS);
}

/* One run's command line, each argument quoted the way a shell reads it back. */
static void command_line(const struct trace *tr, struct strbuf *out)
{
	for (char **a = tr->start.command; a && *a; a++) {
		bool plain = **a != '\0';
		for (const char *c = *a; *c && plain; c++)
			plain = strchr("/._-=:,+@%", *c) || (*c >= '0' && *c <= '9') ||
				(*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z');
		if (a != tr->start.command)
			strbuf_addch(out, ' ');
		if (plain) {
			strbuf_addstr(out, *a);
			continue;
		}
		strbuf_addch(out, '\'');
		for (const char *c = *a; *c; c++)
			if (*c == '\'')
				strbuf_addstr(out, "'\\''");
			else
				strbuf_addch(out, *c);
		strbuf_addch(out, '\'');
	}
}

/* The host each run ran on, one line per distinct description. */
static void page_hosts(struct strbuf *pg, const struct done_run *d, size_t n)
{
	struct strbuf seen = STRBUF_INIT, line = STRBUF_INIT;
	html_heading(pg, 2, "Hosts", "hosts");
	strbuf_addstr(pg, "<ul>\n");
	for (size_t i = 0; i < n; i++) {
		if (!d[i].read)
			continue;
		const struct trace_start *st = &d[i].tr.start;
		char ram[UNITS_BUF];
		strbuf_reset(&line);
		strbuf_addf(&line, "%s: %s %s %s, %d CPUs, %s RAM", st->host_name ? st->host_name : "unknown",
			    st->host_os ? st->host_os : "?", st->host_kernel ? st->host_kernel : "?",
			    st->host_machine ? st->host_machine : "?", st->host_cpus,
			    st->host_memory ? units_size((double)st->host_memory, UNITS_COARSE, false, ram) : "?");
		strbuf_addf(&line, "; meter %s, reader %s", st->meter_backend ? st->meter_backend : "?",
			    reader_info(d[i].a.reader)->label);
		char *key = xasprintf("\n%s\n", line.buf);
		if (!strstr(strbuf_str(&seen), key)) {
			strbuf_addstr(&seen, key);
			strbuf_addstr(pg, "<li>");
			text_html(pg, line.buf);
			strbuf_addstr(pg, "</li>\n");
		}
		free(key);
	}
	strbuf_addstr(pg, "</ul>\n");
	strbuf_release(&seen);
	strbuf_release(&line);
}

/* Versions and commands: one row per run. */
static void page_runs_detail(struct strbuf *pg, const struct done_run *d, size_t n)
{
	struct strbuf cell = STRBUF_INIT;
	html_heading(pg, 2, "Library versions", "versions");
	strbuf_addstr(pg, "<table>\n<thead><tr><th scope=\"col\">run</th>"
			  "<th scope=\"col\">versions</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < n; i++) {
		strbuf_reset(&cell);
		for (size_t v = 0; d[i].read && v < d[i].a.nversions; v++)
			strbuf_addf(&cell, "%s%s %s", v ? ", " : "", d[i].a.versions[v].name,
				    d[i].a.versions[v].value);
		strbuf_addstr(pg, "<tr><td>");
		text_html(pg, d[i].id);
		strbuf_addstr(pg, "</td><td>");
		text_html(pg, cell.len ? cell.buf : "none recorded");
		strbuf_addstr(pg, "</td></tr>\n");
	}
	strbuf_addstr(pg, "</tbody></table>\n");
	html_heading(pg, 2, "Commands", "commands");
	strbuf_addstr(pg, "<table>\n<thead><tr><th scope=\"col\">run</th><th scope=\"col\">"
			  "command</th><th scope=\"col\">trace</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < n; i++) {
		strbuf_reset(&cell);
		if (d[i].read)
			command_line(&d[i].tr, &cell);
		strbuf_addstr(pg, "<tr><td>");
		text_html(pg, d[i].id);
		strbuf_addstr(pg, "</td><td class=\"mono\">");
		text_html(pg, cell.len ? cell.buf : "not recorded");
		strbuf_addstr(pg, "</td><td class=\"mono\">");
		text_html(pg, d[i].trace_path);
		strbuf_addstr(pg, "</td></tr>\n");
	}
	strbuf_addstr(pg, "</tbody></table>\n");
	strbuf_release(&cell);
}

/* The title: the modes compared and the directory. */
static char *page_title(const struct report_page *rp)
{
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, "stagebench: ");
	size_t k = 0;
	for (size_t i = 0; i < rp->n; i++) {
		bool again = false;
		for (size_t j = 0; j < i && !again; j++)
			again = !strcmp(rp->d[j].mode, rp->d[i].mode);
		if (!again)
			strbuf_addf(&t, "%s%s", k++ ? " against " : "", rp->d[i].mode);
	}
	const char *slash = strrchr(rp->out, '/');
	strbuf_addf(&t, " (%s)", slash && slash[1] ? slash + 1 : rp->out);
	return strbuf_detach(&t);
}

int report_html_write(const struct report_page *rp)
{
	struct strbuf pg = STRBUF_INIT;
	char *title = page_title(rp);
	html_begin(&pg, title);
	html_heading(&pg, 2, "Verdict", "verdict");
	strbuf_addstr(&pg, "<div class=\"verdict\">\n");
	html_md(&pg, strbuf_str(&rp->verdict), 2);
	if (rp->latents_result.len)
		html_para(&pg, rp->latents_result.buf, NULL);
	size_t nfailed = 0;
	for (const char *p = strbuf_str(&rp->failed); (p = strstr(p, "- ")); p += 2)
		nfailed += p == rp->failed.buf || p[-1] == '\n';
	if (nfailed) {
		char *line = xasprintf("%zu run%s failed on %s own: see Failed runs.", nfailed,
				       nfailed == 1 ? "" : "s", nfailed == 1 ? "its" : "their");
		html_para(&pg, line, NULL);
		free(line);
	}
	strbuf_addstr(&pg, "</div>\n");
	if (rp->problems.len) {
		html_heading(&pg, 2, "Problems", "problems");
		strbuf_addstr(&pg, "<div class=\"warn\">\n");
		html_md(&pg, rp->problems.buf, 2);
		strbuf_addstr(&pg, "</div>\n");
	}
	if (rp->failed.len) {
		html_heading(&pg, 2, "Failed runs", "failed");
		strbuf_addstr(&pg, "<div class=\"fail\">\n");
		html_md(&pg, rp->failed.buf, 2);
		strbuf_addstr(&pg, "</div>\n");
	}
	html_heading(&pg, 2, "Per-stage peak footprint", "table");
	html_md_rows(&pg, strbuf_str(&rp->table), 2, REPORT_MAX_ROWS);
	page_plan(&pg, rp);
	page_charts(&pg, rp);
	html_heading(&pg, 2, "Latents", "latents");
	html_md_rows(&pg, strbuf_str(&rp->latents), 2, REPORT_MAX_ROWS);
	html_heading(&pg, 2, "Runs", "runs");
	html_md_rows(&pg, strbuf_str(&rp->runs), 2, REPORT_MAX_ROWS);
	page_runs_detail(&pg, rp->d, rp->n);
	page_hosts(&pg, rp->d, rp->n);
	html_end(&pg);
	char *path = xasprintf("%s/report.html", rp->out);
	int rc = write_file(path, pg.buf, pg.len);
	if (!rc)
		printf("%s\n", path);
	free(path);
	free(title);
	strbuf_release(&pg);
	return rc;
}
