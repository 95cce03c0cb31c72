/* plot.c -- `stagebench plot` and plot_runs(): memory charts of runs, drawn by gnuplot */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/commands.h"
#include "../common/parse.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "plot.h"

static int draw(const struct plot_opts *o, const char *name, const struct plot_run *runs,
		size_t n, bool memory)
{
	const char *ext = o->format == PLOT_SVG ? "svg" : "png";
	const char *dir = o->out_dir && *o->out_dir ? o->out_dir : ".";
	char *path = xasprintf("%s/%s.%s", dir, name, ext);
	struct strbuf sb = STRBUF_INIT;
	if (memory)
		plot_memory_script(&sb, runs, n, o->format, path);
	else
		plot_stages_script(&sb, runs, n, o->format, path);
	int rc = plot_run_gnuplot(o->gnuplot, sb.buf, sb.len);
	if (rc)
		error("cannot draw '%s'", path);
	else if (!o->quiet_paths)
		printf("%s\n", path);
	strbuf_release(&sb);
	free(path);
	return rc;
}

int plot_runs(const struct plot_opts *opts, const struct trace *traces,
	      const struct run_entry *const *runs, size_t n)
{
	struct plot_run *model = NULL;
	const char *dir = opts->out_dir && *opts->out_dir ? opts->out_dir : ".";
	if (!plot_have_gnuplot(opts->gnuplot))
		return error(PLOT_GNUPLOT_MISSING);
	if (mkdir_p(dir))
		return -1;
	if (plot_model_build(traces, runs, n, opts->ram_bytes, &model))
		return -1;
	int rc = draw(opts, "memory", model, n, true);
	if (!rc)
		rc = draw(opts, "stages", model, n, false);
	plot_model_release(model, n);
	return rc;
}

/* ---- the command ------------------------------------------------------------ */

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
				fprintf(stderr, "stagebench plot: unknown format '%s' (png or svg)\n%s",
					optarg, usage_text);
				return SB_EXIT_USAGE;
			}
			break;
		case 'r':
			if (parse_size(optarg, &o.ram_bytes) || !o.ram_bytes) {
				fprintf(stderr, "stagebench plot: bad --ram '%s' (a size like 48G)\n%s",
					optarg, usage_text);
				return SB_EXIT_USAGE;
			}
			break;
		default:
			if (optopt && strchr("of", optopt))
				fprintf(stderr, "stagebench plot: option -%c needs a value\n%s",
					optopt, usage_text);
			else
				fprintf(stderr, "stagebench plot: unknown option '%s'\n%s",
					argv[optind - 1], usage_text);
			return SB_EXIT_USAGE;
		}
	}
	size_t n = (size_t)(argc - optind);
	if (!n) {
		fprintf(stderr, "stagebench plot: no trace given\n%s", usage_text);
		return SB_EXIT_USAGE;
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
