/* plot.c -- `stagebench plot`: memory charts of traces (plots/plot.h draws them) */
#include <getopt.h>
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
	"usage: stagebench plot [-o DIR] [--format png|svg] [--ram SIZE] TRACE...\n"
	"\n"
	"Draw DIR/memory.FORMAT (memory over time, one panel per run: footprint,\n"
	"GPU memory, swap growth, stage bands, where a run was stopped) and\n"
	"DIR/stages.FORMAT (per-stage peak footprint by mode) with gnuplot.\n"
	"A runs.json beside the traces tells how stageload's runs ended.\n"
	"\n"
	"  -o, --out DIR        where to write (default: the current directory)\n"
	"  -f, --format FMT     png (default) or svg\n"
	"      --ram SIZE       draw the machine's RAM at SIZE (default: the traces'\n"
	"                       host memory; no line when they lack it)\n"
	"  -h, --help           this help\n"
	"\n"
	"Sizes are in GB = 2^30 bytes. Needs gnuplot on PATH (Debian: gnuplot-nox).\n"
	"The paths written are printed on stdout.\n";

struct runs_cache {
	char *dir;
	struct run_list list;
	bool present;
};

int cmd_plot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "ram", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct plot_opts o = PLOT_OPTS_INIT;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+ho:f:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return SB_EXIT_OK;
		case 'o':
			o.out_dir = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "png"))
				o.format = PLOT_PNG;
			else if (!strcmp(optarg, "svg"))
				o.format = PLOT_SVG;
			else {
				return opt_usage_error("plot", "option '--format': invalid value '%s' "
						       "(png or svg)", optarg);
			}
			break;
		case 'r':
			if (parse_size(optarg, &o.ram_bytes) || !o.ram_bytes) {
				return opt_usage_error("plot", "option '--ram': invalid value '%s' "
						       "(a size like 48G)", optarg);
			}
			break;
		default:
			return opt_refused("plot", c, "+ho:f:", optopt, argv[optind - 1]);
		}
	}
	size_t n = (size_t)(argc - optind);
	if (!n) {
		return opt_usage_error("plot", "no trace given");
	}

	struct trace *traces = xcalloc(n, sizeof(*traces));
	const struct run_entry **entries = xcalloc(n, sizeof(*entries));
	struct runs_cache *cache = xcalloc(n, sizeof(*cache));
	size_t ncache = 0;
	int rc = SB_EXIT_FAILURE;
	for (size_t i = 0; i < n; i++) {
		const char *path = argv[optind + (int)i];
		if (trace_read(path, &traces[i])) {
			/* a trace cut short still draws (a killed run); a refused one does not */
			if (!traces[i].damaged || !traces[i].has_start)
				die(SB_EXIT_FAILURE, "cannot plot '%s'", path);
			warning("'%s' is damaged: drawing the records before the fault", path);
		}
		/* runs.json beside the trace: read once per directory */
		const char *slash = strrchr(path, '/');
		char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
		size_t k;
		for (k = 0; k < ncache; k++)
			if (!strcmp(cache[k].dir, dir))
				break;
		if (k == ncache) {
			char *rj = xasprintf("%s/runs.json", dir);
			cache[k].dir = dir;
			dir = NULL;
			int r = runs_read(rj, &cache[k].list);
			free(rj);
			if (r < 0)
				goto out;
			cache[k].present = r == 0;
			ncache++;
		}
		free(dir);
		if (cache[k].present)
			entries[i] = runs_find(&cache[k].list, slash ? slash + 1 : path);
	}
	rc = plot_runs(&o, traces, entries, n) ? SB_EXIT_FAILURE : SB_EXIT_OK;
out:
	for (size_t i = 0; i < n; i++)
		trace_release(&traces[i]);
	for (size_t k = 0; k < ncache; k++) {
		free(cache[k].dir);
		runs_release(&cache[k].list);
	}
	free(cache);
	free(entries);
	free(traces);
	return rc;
}
