/* latents.c -- `stagebench latents RUN_DIR...`: latent copies compared across runs */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opt.h"
#include "../common/util.h"
#include "../analyze/latents.h"
#include "../analyze/render.h"

static const char usage_text[] =
	"usage: stagebench latents [--baseline MODE] [--format md|json] [-q] RUN_DIR...\n"
	"\n"
	"Compare the latent copies (.npy) that runs recorded with `latent` events.\n"
	"Each RUN_DIR holds traces (MODE-N.trace.jsonl.zst or .jsonl) and runs.json;\n"
	"a trace file may be named instead of a directory. For each latent, every pair\n"
	"of runs is identical (bit for bit), differs (largest absolute difference),\n"
	"has a shape or dtype that differs, is missing in one run, or has a copy whose\n"
	"sha256 does not match its event (corrupt). A difference is within noise when\n"
	"it is no larger than the spread between runs of the baseline mode.\n"
	"\n";

struct latents_args {
	const char *baseline;
};

static const struct opt_spec latents_opts[] = {
	OPT_STRING_TO("baseline", 0, "MODE", OV_VARIANT, struct latents_args, baseline,
		      "the mode whose run-to-run spread is the noise\n"
		      "(default: the first run's mode)"),
	OPT_WORDS("format", 0, 'f', "md|json", "md json", "output format (default md)"),
	OPT_QUIET("no warnings"),
	OPT_HELP,
	OPT_END,
};

const struct opt_cmd opt_cmd_latents = {
	.name = "latents", .usage = usage_text, .opts = latents_opts, .column = 20,
	.after = "\n"
		 "exit: 0 every pair identical or within noise, 1 a difference beyond noise,\n"
		 "a missing latent, a shape or dtype change or a corrupt copy, 2 usage,\n"
		 "3 unreadable input (trace or .npy).\n",
	.operands = OV_DIR,
};

int cmd_latents(int argc, char **argv)
{
	struct latents_args a = { .baseline = NULL };
	const char *format = "md";
	struct opt_parser p;
	int c;
	opt_begin_to(&p, &opt_cmd_latents, argc, argv, NULL, &a);
	while ((c = opt_next(&p)) != -1) {
		switch (c) {
		case 'f':
			if (!render_find(RM_LATENTS, p.arg))
				return opt_usage_error("latents", "option '--format': invalid value '%s' "
						       "(%s)", p.arg, render_format_list(RM_LATENTS));
			format = p.arg;
			break;
		default: /* OPT_EXIT */
			return p.rc;
		}
	}
	if (optind >= argc)
		return opt_usage_error("latents", "no RUN_DIR given");

	struct latent_set set = LATENT_SET_INIT;
	for (int i = optind; i < argc; i++) {
		if (latent_set_add_path(&set, argv[i]) < 0) {
			latent_set_release(&set);
			return SB_EXIT_FAILURE;
		}
	}
	if (set.nruns < 2) {
		error("latents needs at least two runs, found %zu", set.nruns);
		latent_set_release(&set);
		return SB_EXIT_FAILURE;
	}
	if (a.baseline) {
		bool found = false;
		for (size_t i = 0; i < set.nruns && !found; i++)
			found = !strcmp(set.runs[i].mode, a.baseline);
		if (!found) {
			latent_set_release(&set);
			return opt_usage_error("latents", "option '--baseline': no runs of mode '%s'",
					       a.baseline);
		}
	}
	if (latent_compare(&set, a.baseline)) {
		latent_set_release(&set);
		return SB_EXIT_FAILURE;
	}
	if (!set.nlatents)
		warning("no latent events in these runs (record with --latents DIR)");
	struct strbuf out = STRBUF_INIT;
	render_find(RM_LATENTS, format)(&set, &out);
	fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
	strbuf_release(&out);
	int rc = latent_findings(&set) ? SB_EXIT_FINDING : SB_EXIT_OK;
	latent_set_release(&set);
	return rc;
}
