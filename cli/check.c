/* check.c -- `stagebench check`: regressions of a run directory against a baseline, per mode and stage */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opt.h"
#include "../common/parse.h"
#include "../common/util.h"
#include "../analyze/check.h"
#include "../analyze/render.h"

static const char usage_text[] =
	"usage: stagebench check --baseline DIR [--max-growth 5%|SIZE] [--max-time-growth 10%|DUR]\n"
	"                        [--allow-latent-change] [--format md|json|junit|github] RUN_DIR\n"
	"\n"
	"Compare the runs in RUN_DIR (the candidate: a new commit, a new torch, ...)\n"
	"with the runs in DIR (the baseline), per mode and per stage: peak footprint\n"
	"(window rule), kernel peak, swap rise, device peak (the probe's MPS driver\n"
	"or CUDA reserved memory, where the runs read a device), stage time, load\n"
	"time, how far the runs got, and the latents. Each DIR holds traces\n"
	"(MODE-N.trace.jsonl.zst or .jsonl, as `compare` and stageload leave them)\n"
	"and usually runs.json.\n"
	"\n"
	"The noise rule: for each mode x stage x metric, with baseline values b (from\n"
	"at least 2 runs that completed the stage) and candidate values c,\n"
	"  noise   = max(max(b) - min(b), max(c) - min(c), 3 x pooled x max(b))\n"
	"  allowed = max(threshold, floor, noise)\n"
	"  regression  when min(c) > max(b) x shift + allowed  (worse than every\n"
	"              baseline run)\n"
	"  improvement when max(c) < min(b) x shift - allowed\n"
	"pooled: the relative standard deviation of the metric pooled over every\n"
	"stage and run of the mode on both sides (stages from 4 floors up): two runs\n"
	"of one stage say little about its noise, all of them together say more.\n"
	"shift (times only): the median over stages of median(c) / median(b), when 3\n"
	"or more stages last 0.1 s or longer: a machine busier for the whole\n"
	"candidate slows every stage, a regression one; with 5 or more such stages,\n"
	"noise is also at least 3 x how far single stages stray from that shift\n"
	"(1.4826 x the median absolute deviation of their ratios). A change past\n"
	"threshold and\n"
	"floor but within the noise is listed as \"not judged: too noisy (spread X%)\".\n"
	"threshold: --max-growth for memory (percent of max(b), or a size), and\n"
	"--max-time-growth for times (percent of max(b), or a duration). floor:\n"
	"64 MiB and 0.5 s; smaller changes are never judged. With fewer than 2\n"
	"baseline values the spread is unknown: the metric is listed as not judged.\n"
	"A stage every baseline run completed that a candidate run stopped in or\n"
	"never reached is a regression (one baseline run is enough). A latent\n"
	"identical across baseline runs that differs now, or that differs by more\n"
	"than the baseline's spread, is a regression unless --allow-latent-change.\n"
	"\n";

struct check_args {
	const char *baseline;
	bool allow_latent_change;
};

static const struct opt_spec check_opts[] = {
	OPT_STRING_TO("baseline", 0, "DIR", OV_DIR, struct check_args, baseline,
		      "the baseline run directory (required)"),
	OPT("max-growth", 0, 'g', "X", OV_TEXT, "memory threshold: 5% (default) or a size (512M)"),
	OPT("max-time-growth", 0, 't', "X", OV_TEXT,
	    "time threshold: 10% (default) or a duration (2s)"),
	OPT_BOOL_TO("allow-latent-change", 0, struct check_args, allow_latent_change,
		    "report latent changes as notes, not regressions"),
	OPT_WORDS("format", 0, 'f', "FMT", "md json junit github",
		  "md (default): GB = 2^30 bytes (MB = 2^20 under 1 GB)\n"
		  "and seconds;\n"
		  "json: bytes and seconds, every run's value\n"
		  "junit: JUnit XML, a test case per mode x stage x\n"
		  "metric judged, a failure per regression, skipped\n"
		  "when not judged; github: ::error / ::warning /\n"
		  "::notice lines for GitHub Actions (docs/ci.md)"),
	OPT_HELP,
	OPT_END,
};

const struct opt_cmd opt_cmd_check = {
	.name = "check", .usage = usage_text, .opts = check_opts, .column = 26,
	.after = "\n"
		 "A stage with no completed run on a side is listed as not judged (\"memory\n"
		 "and time\": no completed run in the baseline, the candidate, or either).\n"
		 "\n"
		 "exit: 0 no regression, 1 a regression or a failed candidate run (also when\n"
		 "the baseline's runs failed too: both sides failed), 2 usage, 3 unreadable\n"
		 "input (a missing directory, one without traces, a trace or .npy that cannot\n"
		 "be read).\n",
	.operands = OV_DIR,
};

int cmd_check(int argc, char **argv)
{
	struct check c = CHECK_INIT;
	struct check_args a = { .baseline = NULL };
	const char *format = "md";
	struct opt_parser p;
	int opt;

	opt_begin_to(&p, &opt_cmd_check, argc, argv, NULL, &a);
	while ((opt = opt_next(&p)) != -1) {
		switch (opt) {
		case 'g': {
			uint64_t bytes = 0;
			double pct = 0;
			int is_pct = 0;
			if (parse_size_or_percent(p.arg, &bytes, &pct, &is_pct) < 0)
				return opt_usage_error("check", "option '--max-growth': invalid value "
						       "'%s' (a percentage like 5%% or a size like 512M)", p.arg);
			c.opt.growth_is_pct = is_pct;
			c.opt.growth_pct = pct;
			c.opt.growth_bytes = bytes;
			break;
		}
		case 't': {
			int64_t ns;
			double pct;
			if (strchr(p.arg, '%')) {
				if (parse_percent(p.arg, &pct) < 0)
					return opt_bad_value("check", "max-time-growth", p.arg,
							     "percentage");
				c.opt.time_is_pct = true;
				c.opt.time_pct = pct;
			} else if (parse_duration(p.arg, &ns) == 0) {
				c.opt.time_is_pct = false;
				c.opt.time_s = (double)ns / 1e9;
			} else {
				return opt_usage_error("check", "option '--max-time-growth': invalid value "
						       "'%s' (a percentage like 10%% or a duration like 2s)", p.arg);
			}
			break;
		}
		case 'f':
			if (!render_find(RM_CHECK, p.arg))
				return opt_usage_error("check", "option '--format': invalid value '%s' (%s)",
						       p.arg, render_format_list(RM_CHECK));
			format = p.arg;
			break;
		default: /* OPT_EXIT */
			return p.rc;
		}
	}
	c.opt.allow_latent_change = a.allow_latent_change;
	if (!a.baseline)
		return opt_usage_error("check", "--baseline DIR is required");
	if (optind >= argc)
		return opt_usage_error("check", "no RUN_DIR given");
	if (optind + 1 < argc)
		return opt_usage_error("check", "one RUN_DIR only, got '%s' and '%s'", argv[optind],
				       argv[optind + 1]);

	int rc = SB_EXIT_FAILURE;
	if (check_add_dir(&c, CHECK_BASELINE, a.baseline) < 0 ||
	    check_add_dir(&c, CHECK_CANDIDATE, argv[optind]) < 0 || check_run(&c) < 0)
		goto out;
	struct strbuf out = STRBUF_INIT;
	render_find(RM_CHECK, format)(&c, &out);
	fwrite(out.buf, 1, out.len, stdout);
	strbuf_release(&out);
	rc = check_regressions(&c) || check_candidate_failed(&c) ? SB_EXIT_FINDING : SB_EXIT_OK;
out:
	check_release(&c);
	return rc;
}
