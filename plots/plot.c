/* plot.c -- plot_runs(): memory charts of runs, drawn by gnuplot */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/parse.h"
#include "../traces/runs.h"
#include "../traces/trace.h"
#include "gp.h"
#include "plot.h"

const struct plot_chart plot_charts[] = {
	{ "memory", plot_memory_script },
	{ "stages", plot_stages_script },
};
const size_t plot_ncharts = sizeof(plot_charts) / sizeof(plot_charts[0]);

char *gp_out_path(const struct plot_opts *o, const char *name)
{
	const char *dir = o->out_dir && *o->out_dir ? o->out_dir : ".";
	if (!plot_have_gnuplot(o->gnuplot)) {
		error(PLOT_GNUPLOT_MISSING);
		return NULL;
	}
	if (mkdir_p(dir))
		return NULL;
	return xasprintf("%s/%s.%s", dir, name, o->format == PLOT_SVG ? "svg" : "png");
}

int gp_draw(const struct plot_opts *o, const char *path, const struct strbuf *script)
{
	int rc = plot_run_gnuplot(o->gnuplot, script->buf, script->len);
	if (rc)
		error("cannot draw '%s'", path);
	else if (!o->quiet_paths)
		printf("%s\n", path);
	return rc;
}

static int draw(const struct plot_opts *o, const struct plot_chart *chart,
		const struct plot_model *m)
{
	char *path = gp_out_path(o, chart->name);
	if (!path)
		return -1;
	struct strbuf sb = STRBUF_INIT;
	chart->script(&sb, m, o, path);
	int rc = gp_draw(o, path, &sb);
	strbuf_release(&sb);
	free(path);
	return rc;
}

int plot_runs(const struct plot_opts *opts, const struct trace *traces,
	      const struct run_entry *const *runs, size_t n)
{
	struct plot_model model = PLOT_MODEL_INIT;
	const char *dir = opts->out_dir && *opts->out_dir ? opts->out_dir : ".";
	if (!plot_have_gnuplot(opts->gnuplot))
		return error(PLOT_GNUPLOT_MISSING);
	if (mkdir_p(dir))
		return -1;
	if (plot_model_build(opts, traces, runs, n, &model))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < plot_ncharts && !rc; i++)
		rc = draw(opts, &plot_charts[i], &model);
	plot_model_release(&model);
	return rc;
}
