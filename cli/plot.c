/* plot.c -- `stagebench plot`: memory charts of traces (plots/plot.h draws them) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/parse.h"
#include "../common/util.h"
#include "../plots/plot.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "commands.h"
#include "opt.h"

static const char usage_text[] =
	"usage: stagebench plot [-o DIR] [--format png|svg] [--ram SIZE] [--supplement TRACE]...\n"
	"                       [--title TEXT] [--note TEXT] TRACE...\n"
	"\n"
	"Draw DIR/memory.FORMAT (memory over time, one panel per run: footprint,\n"
	"GPU memory, swap growth, stage bands, where a run was stopped) and\n"
	"DIR/stages.FORMAT (per-stage peak footprint by mode) with gnuplot.\n"
	"A runs.json beside the traces tells how stageload's runs ended.\n"
	"\n";

static const struct opt_spec plot_opts[] = {
	OPT_STRING_TO("out", 'o', "DIR", OV_DIR, struct plot_opts, out_dir,
		      "where to write (default: the current directory)"),
	OPT_WORDS("format", 'f', 'f', "FMT", "png svg", "png (default) or svg"),
	OPT("ram", 0, 'r', "SIZE", OV_TEXT,
	    "draw the machine's RAM at SIZE (default: the traces'\n"
	    "host memory; no line when they lack it)"),
	OPT("supplement", 0, 'S', "TRACE", OV_TRACE,
	    "a run that only fills stages of the stages chart\n"
	    "that no TRACE of its mode entered (as in table), drawn\n"
	    "hatched, its file named in the legend"),
	OPT_STRING_TO("title", 0, "TEXT", OV_TEXT, struct plot_opts, title, "a title over each chart"),
	OPT_STRING_TO("note", 0, "TEXT", OV_TEXT, struct plot_opts, note,
		      "a line of small print under each chart (a source)"),
	OPT_HELP,
	OPT_END,
};

const struct opt_cmd opt_cmd_plot = {
	.name = "plot", .usage = usage_text, .opts = plot_opts, .column = 23,
	.flags = OPT_INDENT_LONG,
	.after = "\n"
		 "Sizes are in GB = 2^30 bytes. Needs gnuplot on PATH (Debian: gnuplot-nox).\n"
		 "The paths written are printed on stdout.\n",
	.operands = OV_TRACE,
};

struct runs_cache {
	char *dir;
	struct run_list list;
	bool present;
};

/* Read PATH into *tr and *ps (plot_read_trace: one pass, the samples reduced
 * as they are read) and find its runs.json entry (read once per directory
 * into cache) into *entry. Returns 0, or -1 after an error; dies on a trace
 * that cannot be drawn at all. */
static int load_trace(const char *path, struct trace *tr, struct plot_samples *ps,
		      const struct run_entry **entry, struct runs_cache *cache, size_t *ncache)
{
	if (plot_read_trace(path, tr, ps)) {
		/* a trace cut short still draws (a killed run); a refused one does not */
		if (!tr->damaged || !tr->has_start)
			die(SB_EXIT_FAILURE, "cannot plot '%s'", path);
		warning("'%s' is damaged: drawing the records before the fault", path);
	}
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	size_t k;
	for (k = 0; k < *ncache; k++)
		if (!strcmp(cache[k].dir, dir))
			break;
	if (k == *ncache) {
		char *rj = xasprintf("%s/runs.json", dir);
		cache[k].dir = dir;
		dir = NULL;
		int r = runs_read(rj, &cache[k].list);
		free(rj);
		(*ncache)++;
		if (r < 0)
			return -1;
		cache[k].present = r == 0;
	}
	free(dir);
	if (cache[k].present)
		*entry = runs_find(&cache[k].list, slash ? slash + 1 : path);
	return 0;
}

int cmd_plot(int argc, char **argv)
{
	struct plot_opts o = PLOT_OPTS_INIT;
	const char **sup = xcalloc((size_t)argc + 1, sizeof(*sup));
	size_t nsup = 0;
	struct opt_parser p;
	int c;
	opt_begin_to(&p, &opt_cmd_plot, argc, argv, NULL, &o);
	while ((c = opt_next(&p)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(p.arg, "png"))
				o.format = PLOT_PNG;
			else if (!strcmp(p.arg, "svg"))
				o.format = PLOT_SVG;
			else {
				free(sup);
				return opt_usage_error("plot", "option '--format': invalid value '%s' "
						       "(png or svg)", p.arg);
			}
			break;
		case 'r':
			if (parse_size(p.arg, &o.ram_bytes) || !o.ram_bytes) {
				free(sup);
				return opt_usage_error("plot", "option '--ram': invalid value '%s' "
						       "(a size like 48G)", p.arg);
			}
			break;
		case 'S':
			sup[nsup++] = p.arg;
			break;
		default: /* OPT_EXIT */
			free(sup);
			return p.rc;
		}
	}
	size_t n = (size_t)(argc - optind);
	if (!n) {
		free(sup);
		return opt_usage_error("plot", "no trace given");
	}

	size_t all = n + nsup;
	struct trace *traces = xcalloc(all, sizeof(*traces));
	struct plot_samples *samples = xcalloc(all, sizeof(*samples));
	const struct run_entry **entries = xcalloc(all, sizeof(*entries));
	struct runs_cache *cache = xcalloc(all, sizeof(*cache));
	size_t ncache = 0;
	int rc = SB_EXIT_FAILURE;
	for (size_t i = 0; i < all; i++)
		if (load_trace(i < n ? argv[optind + (int)i] : sup[i - n], &traces[i], &samples[i],
			       &entries[i], cache, &ncache))
			goto out;
	o.supplements = traces + n;
	o.supplement_runs = entries + n;
	o.nsupplements = nsup;
	o.samples = samples;
	rc = plot_runs(&o, traces, entries, n) ? SB_EXIT_FAILURE : SB_EXIT_OK;
out:
	for (size_t i = 0; i < all; i++) {
		trace_release(&traces[i]);
		plot_samples_release(&samples[i]);
	}
	free(samples);
	for (size_t k = 0; k < ncache; k++) {
		free(cache[k].dir);
		runs_release(&cache[k].list);
	}
	free(cache);
	free(entries);
	free(traces);
	free(sup);
	return rc;
}
