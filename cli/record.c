/* record.c -- `stagebench record`: options, usage, then the record engine (runner/record.h) */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/parse.h"
#include "../common/util.h"
#include "../runner/guard.h"
#include "../runner/record.h"
#include "commands.h"
#include "opt.h"

#define NS_PER_MS 1000000LL

static const char record_usage[] =
	"usage: stagebench record [-o TRACE] [--mode NAME] [--interval DUR] [--label KEY=VALUE]...\n"
	"                         [--latents DIR] [GUARD OPTIONS] [-q|-v] -- COMMAND [ARG...]\n\n"
	"Record a memory trace of COMMAND and its whole process tree.\n\n"
	"  -o, --output TRACE    trace file (default stagebench-DATE-TIME.trace.jsonl.zst)\n"
	"      --mode NAME       the run's mode (STAGEBENCH_MODE for the probe)\n"
	"      --interval DUR    sample interval, 1ms or more (500ms)\n"
	"      --label KEY=VALUE free-form metadata for the start record (repeatable)\n"
	"      --latents DIR     where the probe copies latents (STAGEBENCH_LATENTS)\n"
	"      --no-peak-reset   leave the kernel high-water mark alone: stage peaks from samples\n"
	"  -q, --quiet           no status line, no summary\n"
	"  -v, --verbose         more progress messages\n"
	"  -h, --help            this text\n\n"
	"With GUARD OPTIONS the run is guarded (see 'stagebench guard --help').\n\n"
	"Exact stage peaks: at each stage window's start the kernel high-water mark of\n"
	"every process of COMMAND is reset (Linux clear_refs). The pipeline's own view of\n"
	"its peak goes with it: getrusage()'s ru_maxrss, its own max-RSS logging and\n"
	"/usr/bin/time -v see only the peak since the last window start. With\n"
	"--no-peak-reset they see the whole run; each stage's peak event is then the\n"
	"largest sampled footprint (a spike between two samples is missed) and the\n"
	"trace's start record says \"peaks\":\"samples\".\n";

enum { OPT_MODE = 0x5201, OPT_INTERVAL, OPT_LABEL, OPT_LATENTS, OPT_NO_PEAK_RESET };

struct labels {
	struct trace_label *v;
	size_t n, alloc;
};

/* --label KEY=VALUE: 0, or -1 after a usage error. */
static int add_label(struct labels *l, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg) {
		opt_usage_error("record", "option '--label': invalid value '%s' (KEY=VALUE)", arg);
		return -1;
	}
	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	l->v[l->n].key = xstrndup(arg, (size_t)(eq - arg));
	l->v[l->n].value = xstrdup(eq + 1);
	l->n++;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "latents", required_argument, NULL, OPT_LATENTS },
		{ "no-peak-reset", no_argument, NULL, OPT_NO_PEAK_RESET },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		GUARD_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct record_opts ro = RECORD_OPTS_INIT;
	struct guard_opts g = GUARD_OPTS_INIT;
	struct labels labels = { NULL, 0, 0 };
	char *default_out = NULL;
	int opt, rc = SB_EXIT_USAGE;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+o:qvh", longopts, NULL)) != -1) {
		int gr = opt_guard("record", &g, opt, optarg);
		if (gr < 0)
			goto out;
		if (gr > 0)
			continue;
		switch (opt) {
		case 'o':
			ro.trace_path = optarg;
			break;
		case OPT_MODE:
			ro.mode = optarg;
			break;
		case OPT_INTERVAL:
			if (parse_duration(optarg, &ro.interval_ns) || ro.interval_ns < NS_PER_MS) {
				opt_usage_error("record", "option '--interval': invalid duration '%s' "
						"(1ms or more)", optarg);
				goto out;
			}
			break;
		case OPT_LABEL:
			if (add_label(&labels, optarg) < 0)
				goto out;
			break;
		case OPT_LATENTS:
			ro.latents_dir = optarg;
			break;
		case OPT_NO_PEAK_RESET:
			ro.no_peak_reset = true;
			break;
		case 'q':
			sb_verbosity = 0;
			break;
		case 'v':
			sb_verbosity = 2;
			break;
		case 'h':
			fputs(record_usage, stdout);
			rc = SB_EXIT_OK;
			goto out;
		default:
			rc = opt_refused("record", opt, "+o:qvh", optopt, argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		opt_usage_error("record", "no command given (stagebench record [OPTIONS] -- COMMAND)");
		goto out;
	}
	if (!ro.trace_path)
		ro.trace_path = default_out = record_default_trace_name();
	ro.commit_dir = getenv("STAGEBENCH_COMMIT_DIR");
	ro.labels = labels.v;
	ro.nlabels = labels.n;
	ro.guard = &g;
	ro.guarded = g.given;
	ro.name = "record";
	struct record_result res = RECORD_RESULT_INIT;
	rc = record_run(&ro, argv + optind, &res) ? SB_EXIT_FAILURE : res.exit_code;
	record_result_release(&res);
out:
	for (size_t i = 0; i < labels.n; i++) {
		free(labels.v[i].key);
		free(labels.v[i].value);
	}
	free(labels.v);
	free(default_out);
	guard_opts_release(&g);
	return rc;
}
