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
	"usage: stagebench plot [-o DIR] [--format png|svg] [--ram SIZE] [--supplement TRACE]...\n"
	"                       [--title TEXT] [--note TEXT] TRACE...\n"
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
	"      --supplement TRACE  a run that only fills stages of the stages chart\n"
	"                       that no TRACE of its mode entered (as in table), drawn\n"
	"                       hatched, its file named in the legend\n"
	"      --title TEXT     a title over each chart\n"
	"      --note TEXT      a line of small print under each chart (a source)\n"
	"  -h, --help           this help\n"
	"\n"
	"Sizes are in GB = 2^30 bytes. Needs gnuplot on PATH (Debian: gnuplot-nox).\n"
	"The paths written are printed on stdout.\n";

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
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "ram", required_argument, NULL, 'r' },
		{ "supplement", required_argument, NULL, 'S' },
		{ "title", required_argument, NULL, 'T' },
		{ "note", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct plot_opts o = PLOT_OPTS_INIT;
	const char **sup = xcalloc((size_t)argc + 1, sizeof(*sup));
	size_t nsup = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+ho:f:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			free(sup);
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
				free(sup);
				return opt_usage_error("plot", "option '--format': invalid value '%s' "
						       "(png or svg)", optarg);
			}
			break;
		case 'r':
			if (parse_size(optarg, &o.ram_bytes) || !o.ram_bytes) {
				free(sup);
				return opt_usage_error("plot", "option '--ram': invalid value '%s' "
						       "(a size like 48G)", optarg);
			}
			break;
		case 'S':
			sup[nsup++] = optarg;
			break;
		case 'T':
			o.title = optarg;
			break;
		case 'N':
			o.note = optarg;
			break;
		default:
			free(sup);
			return opt_refused("plot", c, "+ho:f:", optopt, argv[optind - 1]);
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
