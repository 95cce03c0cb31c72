/* analyze.c -- `stagebench analyze`: per-run, per-stage memory figures */
#include <getopt.h>
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
	"Per run: mode, the stage it ran to, how it ended, peak footprint overall and\n"
	"per stage (window rule: a stage's window starts when the releases that\n"
	"entering it triggered have completed), kernel peaks, swap, device memory\n"
	"(the probe's MPS driver or CUDA reserved figure per stage, sampled on the\n"
	"interval; NVML's beside it), lowest available memory, wall time, loads and\n"
	"releases. A runs.json beside a trace says how that run ended.\n"
	"\n"
	"  --json      machine-readable output, bytes and seconds\n"
	"  -h, --help  this text\n"
	"\n"
	"exit: 0 ok, 2 usage, 3 a trace could not be read (file:line on stderr)\n";

int cmd_analyze(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return SB_EXIT_OK;
		default:
			return opt_refused("analyze", c, "+h", optopt, argv[optind - 1]);
		}
	}
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
	render_find(RM_RUNS, json ? "json" : "text")(&model, &o);
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
