/* analyze.c -- `stagebench analyze`: per-run, per-stage memory figures */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../analyze/analysis.h"
#include "../analyze/render.h"
#include "../common/util.h"
#include "commands.h"
#include "opt.h"

static const char usage_text[] =
	"usage: stagebench analyze [--json] TRACE...\n"
	"\n"
	"Per run: mode, the stage it ran to, how it ended, the reader of its footprint\n"
	"(json: \"reader\", cgroup-v1, cgroup-v2, per-process, macos or unknown; see\n"
	"traces/FORMAT.md), peak footprint overall and\n"
	"per stage (window rule: a stage's window starts when the releases that\n"
	"entering it triggered have completed), kernel peaks, swap, device memory\n"
	"(the probe's MPS driver or CUDA reserved figure per stage, sampled on the\n"
	"interval; NVML's beside it), mapped model files (resident pages of the data\n"
	"files the run maps, not in the footprint) and major page faults per stage,\n"
	"lowest available memory, wall time, loads and releases. A runs.json beside a\n"
	"trace says how that run ended.\n"
	"\n";

struct analyze_args {
	bool json;
};

static const struct opt_spec analyze_opts[] = {
	OPT_BOOL_TO("json", 0, struct analyze_args, json, "machine-readable output, bytes and seconds"),
	OPT_HELP,
	OPT_END,
};

const struct opt_cmd opt_cmd_analyze = {
	.name = "analyze", .usage = usage_text, .opts = analyze_opts, .column = 14,
	.after = "\nexit: 0 ok, 2 usage, 3 a trace could not be read (file:line on stderr)\n",
	.operands = OV_TRACE,
};

int cmd_analyze(int argc, char **argv)
{
	struct analyze_args a = { .json = false };
	struct opt_parser p;
	opt_begin_to(&p, &opt_cmd_analyze, argc, argv, NULL, &a);
	if (opt_next(&p) != -1) /* OPT_EXIT: every other row is bound */
		return p.rc;
	if (optind >= argc) {
		return opt_usage_error("analyze", "no trace given");
	}

	size_t n = (size_t)(argc - optind);
	struct analysis *runs = xcalloc(n, sizeof(*runs));
	int rc = SB_EXIT_OK;
	for (size_t i = 0; i < n; i++)
		if (analysis_open(argv[optind + (int)i], &runs[i]) < 0) {
			rc = SB_EXIT_FAILURE;
			goto out;
		}

	struct strbuf o = STRBUF_INIT;
	struct analysis_runs model = { runs, n };
	render_find(RM_RUNS, a.json ? "json" : "text")(&model, &o);
	for (size_t i = 0; i < n; i++)
		analysis_warn_spikes(&runs[i]);
	fwrite(o.buf, 1, o.len, stdout);
	strbuf_release(&o);
out:
	for (size_t i = 0; i < n; i++)
		analysis_release(&runs[i]);
	free(runs);
	return rc;
}
