/* history.c -- `stagebench history`: a pipeline's stages over commits (analyze/history.h),
 * as md, csv or json, and as charts (plots/history.c) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyze/history.h"
#include "../analyze/html.h"
#include "../analyze/render.h"
#include "../common/util.h"
#include "../plots/plot.h"
#include "../common/path.h"
#include "../runner/spawn.h"
#include "commands.h"
#include "opt.h"

static const char usage_text[] =
	"usage: stagebench history [--format md|csv|json|html] [--order recorded|given]\n"
	"                          [--plot DIR] [--plot-format png|svg] RUN_DIR...\n"
	"\n"
	"One column per RUN_DIR (one commit each, as `compare --by-commit` leaves\n"
	"them, in any order): per mode and stage, the peak footprint, the kernel\n"
	"peak and the stage time over the commit's runs (lowest to highest; the\n"
	"device peak too where the runs read a device: MPS driver, CUDA reserved), the\n"
	"commit and whether its checkout was dirty (from the runs' start records),\n"
	"and \"(regression)\" where `stagebench check` of a commit against the one\n"
	"before it flags that metric in that stage (check's rule and defaults);\n"
	"\"failed\" where no run completed the stage, and a Regressions section with\n"
	"every regression check reports between neighbours (outcome, latents, swap,\n"
	"load time, memory, time). Commits as short ids, with their subject line\n"
	"where the current directory is a git checkout that knows them.\n"
	"\n";

struct history_args {
	const char *plot_dir; /* --plot: NULL for no charts */
};

static const struct opt_spec history_opts[] = {
	OPT_WORDS("format", 0, 'f', "FMT", "md csv json html",
		  "md (default), csv or json (bytes and seconds,\n"
		  "unrounded), or html: one self-contained page of the\n"
		  "md tables with the charts inline as SVG (gnuplot)"),
	OPT_WORDS("order", 0, 'O', "ORDER", "recorded given",
		  "recorded (default): by the earliest run's start time\n"
		  "(a trace holds no commit date; commits recorded in\n"
		  "their order come out in it); given: as listed"),
	OPT_STRING_TO("plot", 0, "DIR", OV_DIR, struct history_args, plot_dir,
		      "also draw history-peak and history-time charts in DIR\n"
		      "(and history-device where the runs read a device):\n"
		      "one panel per mode, a line per stage, each point's\n"
		      "spread across its runs, regressions ringed, failed\n"
		      "stages crossed, dirty checkouts marked (gnuplot on PATH)"),
	OPT_WORDS("plot-format", 0, 'P', "FMT", "png svg", "png (default) or svg"),
	OPT_HELP,
	OPT_END,
};

const struct opt_cmd opt_cmd_history = {
	.name = "history", .usage = usage_text, .opts = history_opts, .column = 22,
	.after = "\nexit: 0 ok, 2 usage, 3 a directory or trace could not be read\n",
	.operands = OV_DIR,
};

/* A regression of this series at commit c that no chart has a metric for
 * (outcome, latents, swap, load time): ringed on every chart. */
static bool other_regression(const struct history *h, size_t s, size_t c)
{
	for (size_t i = 0; i < h->nregressions; i++) {
		const struct history_regression *r = &h->regressions[i];
		if (r->commit == c && r->metric < 0 && !strcmp(r->mode, h->series[s].mode) &&
		    !strcmp(r->stage, h->series[s].stage))
			return true;
	}
	return false;
}

/* The commits' subject lines, where the current directory is a git checkout
 * that knows them (`git log -1 --format=%s ID`; ids of hex digits only). */
static void add_subjects(struct history *h)
{
	for (size_t c = 0; c < h->ncommits; c++) {
		const char *id = h->commits[c].commit;
		if (!*id || strspn(id, "0123456789abcdef") != strlen(id))
			continue;
		const char *argv[] = { "git", "log", "-1", "--format=%s", id, "--", NULL };
		struct strbuf out = STRBUF_INIT;
		if (!spawn_capture(argv, &out)) {
			while (out.len && (out.buf[out.len - 1] == '\n' || out.buf[out.len - 1] == '\r'))
				out.buf[--out.len] = '\0';
			if (out.len)
				h->commits[c].subject = strbuf_detach(&out);
		}
		strbuf_release(&out);
	}
}

/* One metric of the model as the chart's plain numbers (GB or seconds). */
static int draw(const struct history *h, enum history_metric m, const struct plot_opts *o,
		const char *name)
{
	double scale = history_metric_is_time(m) ? 1.0 : 1.0 / 1073741824.0;
	const char **commits = xcalloc(h->ncommits + 1, sizeof(*commits));
	const char **subjects = xcalloc(h->ncommits + 1, sizeof(*subjects));
	bool *dirty = xcalloc(h->ncommits + 1, sizeof(*dirty));
	struct plot_history_series *series = xcalloc(h->nseries + 1, sizeof(*series));
	for (size_t c = 0; c < h->ncommits; c++) {
		commits[c] = h->commits[c].short_id;
		subjects[c] = h->commits[c].subject;
		dirty[c] = h->commits[c].dirty;
	}
	for (size_t s = 0; s < h->nseries; s++) {
		series[s].mode = h->series[s].mode;
		series[s].stage = h->series[s].stage;
		series[s].points = xcalloc(h->ncommits + 1, sizeof(*series[s].points));
		for (size_t c = 0; c < h->ncommits; c++) {
			const struct history_point *p = history_point(h, s, c, m);
			struct plot_history_point *q = &series[s].points[c];
			q->has_value = p->n > 0;
			q->value = p->max * scale;
			q->lo = p->min * scale;
			q->hi = p->max * scale;
			q->regression = p->regression || (p->n && other_regression(h, s, c));
			q->failed = p->failed > 0;
		}
	}
	struct plot_history ph = { history_metric_name(m), history_metric_is_time(m) ? "s" : "GB",
				   commits, subjects, dirty, h->ncommits, series, h->nseries };
	int rc = plot_history(o, &ph, name);
	for (size_t s = 0; s < h->nseries; s++)
		free(series[s].points);
	free(series);
	free(commits);
	free(subjects);
	free(dirty);
	return rc;
}

/* The history as one page: the markdown tables, then the charts drawn as SVG
 * into a scratch directory and inlined (none without gnuplot: said instead). */
static void render_page(const struct history *h, struct strbuf *o)
{
	static const char *const names[] = { "history-peak", "history-time", "history-device",
					     "history-total" };
	static const enum history_metric metrics[] = { HM_PEAK, HM_TIME, HM_DEVICE, HM_TOTAL };
	struct strbuf md = STRBUF_INIT;
	char *title = xasprintf("stagebench history: %zu commit%s", h->ncommits,
				h->ncommits == 1 ? "" : "s");
	history_render_md(h, &md);
	html_begin(o, title);
	html_md(o, md.buf, 0); /* its "##" sections under the page's <h1> */
	html_heading(o, 2, "Charts", "charts");
	char dir[] = "/tmp/stagebench-history.XXXXXX";
	struct plot_opts po = PLOT_OPTS_INIT;
	po.format = PLOT_SVG;
	po.quiet_paths = true;
	po.out_dir = dir;
	if (!plot_have_gnuplot(NULL) || !mkdtemp(dir)) {
		html_para(o, "No charts: gnuplot was not found (Debian: gnuplot-nox).", "warn");
		goto end;
	}
	for (size_t i = 0; i < 4; i++) {
		if ((metrics[i] == HM_DEVICE || metrics[i] == HM_TOTAL) &&
		    !history_metric_shown(h, metrics[i]))
			continue;
		char *path = xasprintf("%s/%s.svg", dir, names[i]), *svg = NULL;
		size_t len = 0;
		char *what = xasprintf("%s over commits, one panel per mode, a line per stage",
				       history_metric_name(metrics[i]));
		if (draw(h, metrics[i], &po, names[i]) < 0 || read_file(path, &svg, &len) < 0 ||
		    html_svg(o, svg, len, names[i], what, "The tables above hold its values.") < 0)
			html_para(o, "This chart could not be drawn (see the error printed).", "warn");
		unlink(path);
		free(path);
		free(svg);
		free(what);
	}
	rmdir(dir);
end:
	html_end(o);
	free(title);
	strbuf_release(&md);
}

int cmd_history(int argc, char **argv)
{
	const char *format = "md";
	enum history_order order = HISTORY_ORDER_RECORDED;
	struct plot_opts po = PLOT_OPTS_INIT;
	struct history_args a = { .plot_dir = NULL };
	struct opt_parser p;
	int c;
	opt_begin_to(&p, &opt_cmd_history, argc, argv, NULL, &a);
	while ((c = opt_next(&p)) != -1) {
		switch (c) {
		case 'f':
			if (!render_find(RM_HISTORY, p.arg) && strcmp(p.arg, "html"))
				return opt_usage_error("history", "option '--format': invalid value '%s' "
						       "(md, csv, json or html)", p.arg);
			format = p.arg;
			break;
		case 'O':
			if (!strcmp(p.arg, "given"))
				order = HISTORY_ORDER_GIVEN;
			else if (!strcmp(p.arg, "recorded"))
				order = HISTORY_ORDER_RECORDED;
			else
				return opt_usage_error("history", "option '--order': invalid value '%s' "
						       "(recorded or given)", p.arg);
			break;
		case 'P':
			if (!strcmp(p.arg, "png"))
				po.format = PLOT_PNG;
			else if (!strcmp(p.arg, "svg"))
				po.format = PLOT_SVG;
			else
				return opt_usage_error("history", "option '--plot-format': invalid value "
						       "'%s' (png or svg)", p.arg);
			break;
		default: /* OPT_EXIT */
			return p.rc;
		}
	}
	if (optind >= argc)
		return opt_usage_error("history", "no RUN_DIR given");

	struct history h = HISTORY_INIT;
	int rc = SB_EXIT_FAILURE;
	if (history_build(&h, (const char *const *)argv + optind, (size_t)(argc - optind), order) < 0)
		goto out;
	add_subjects(&h);
	struct strbuf o = STRBUF_INIT;
	if (!strcmp(format, "html"))
		render_page(&h, &o);
	else
		render_find(RM_HISTORY, format)(&h, &o);
	fwrite(o.buf ? o.buf : "", 1, o.len, stdout);
	strbuf_release(&o);
	rc = SB_EXIT_OK;
	if (a.plot_dir) {
		po.out_dir = a.plot_dir;
		if (draw(&h, HM_PEAK, &po, "history-peak") < 0 || draw(&h, HM_TIME, &po, "history-time") < 0 ||
		    (history_metric_shown(&h, HM_DEVICE) &&
		     draw(&h, HM_DEVICE, &po, "history-device") < 0) ||
		    (history_metric_shown(&h, HM_TOTAL) && draw(&h, HM_TOTAL, &po, "history-total") < 0))
			rc = SB_EXIT_FAILURE;
	}
out:
	history_release(&h);
	return rc;
}
