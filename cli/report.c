/* report.c -- `stagebench report`: report.html (and table.md, latents.md, the charts) of a
 * compare's output directory or of traces (runner/compare/compare.h: report_execute) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/path.h"
#include "../common/util.h"
#include "../plots/plot.h"
#include "../runner/compare/compare.h"
#include "commands.h"
#include "opt.h"

static const char usage_text[] =
	"usage: stagebench report [-o DIR] [--no-charts] [-q] DIR\n"
	"       stagebench report [-o DIR] [--no-charts] [-q] TRACE...\n"
	"\n"
	"Write the report of a comparison again: DIR/report.html, one self-contained\n"
	"page (the verdict, the per-stage tables, the charts as inline SVG, the\n"
	"latents, the failed runs with their errors, the run summary, the library\n"
	"versions, the hosts and the commands; no script, nothing fetched), with\n"
	"table.md, latents.md and the charts beside it, from a compare's output\n"
	"directory (its runs.json and traces) or from traces. Prints report.html's\n"
	"path. What could not be read (runs.json missing, a trace missing or cut\n"
	"short) is said on the page.\n"
	"\n";

static const struct opt_spec report_opts[] = {
	OPT("out", 'o', 'o', "DIR", OV_DIR,
	    "where to write (default: DIR, or the first trace's\n"
	    "directory)"),
	OPT_FLAG("no-charts", 0, 'n', "no charts (else drawn with gnuplot when it is on PATH)"),
	OPT_QUIET("no notes, warnings only"),
	OPT_HELP,
	OPT_END,
};

const struct opt_cmd opt_cmd_report = {
	.name = "report", .usage = usage_text, .opts = report_opts, .column = 21,
	.flags = OPT_INDENT_LONG,
	.after = "\n"
		 "Exit status: 0; 1 when a run failed or a latent differs (as compare); 3 when\n"
		 "no run could be read or a file could not be written.\n",
	.operands = OV_TRACE,
};

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .charts = true };
	struct opt_parser p;
	int c;
	opt_begin(&p, &opt_cmd_report, argc, argv, NULL);
	while ((c = opt_next(&p)) != -1) {
		switch (c) {
		case 'o':
			o.out = p.arg;
			break;
		case 'n':
			o.charts = false;
			break;
		default: /* OPT_EXIT */
			return p.rc;
		}
	}
	size_t n = (size_t)(argc - optind);
	if (!n)
		return opt_usage_error("report", "no directory or trace given");
	const char *first = argv[optind];
	if (path_is_dir(first)) {
		if (n > 1)
			return opt_usage_error("report", "one directory, or traces: '%s' is a "
					       "directory and %zu more operands follow", first, n - 1);
		o.dir = first;
	} else {
		for (size_t i = 0; i < n; i++)
			if (!path_exists(argv[optind + (int)i])) {
				error("'%s': no such file or directory", argv[optind + (int)i]);
				return SB_EXIT_FAILURE;
			}
		o.traces = (const char *const *)argv + optind;
		o.ntraces = n;
	}
	char *dflt = NULL;
	if (!o.out) {
		const char *slash = strrchr(first, '/');
		dflt = o.dir ? xstrdup(o.dir) : slash ? xstrndup(first, (size_t)(slash - first))
						      : xstrdup(".");
		o.out = dflt;
	}
	if (!path_is_dir(o.out) && mkdir_p(o.out) < 0) {
		free(dflt);
		return SB_EXIT_FAILURE;
	}
	if (o.charts && !plot_have_gnuplot(NULL)) {
		warning("%s: the report goes without charts", PLOT_GNUPLOT_MISSING);
		o.charts = false;
	}
	int rc = report_execute(&o);
	free(dflt);
	return rc;
}
