/* plot.c -- plot_runs(): memory charts of runs, drawn by gnuplot */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
