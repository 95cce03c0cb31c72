/* table.c -- `stagebench table`: the per-stage peak table by mode, in md, csv or json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opt.h"
#include "../common/util.h"
#include "../analyze/render.h"
#include "../analyze/table.h"

static const char table_usage[] =
	"usage: stagebench table [--stages LIST] [--supplement TRACE]... [--format md|csv|json] TRACE...\n"
	"\n"
	"Groups the runs by the start record's mode (columns in order of first\n"
	"appearance) and prints the per-stage peak footprint table (window rule),\n"
	"how much less the other modes used than the first, the loads per mode and a\n"
	"per-mode summary. GB = 2^30 bytes, one decimal; under 1 GB in MB (2^20\n"
	"bytes), so no difference of 64 MB or more reads 0.0 GB. A mode whose runs have\n"
	"no load events shows loading as \"not reported\". csv and json carry the same\n"
	"figures unrounded, in bytes and seconds (csv: four blocks separated by an\n"
	"empty line: stage cells, per-stage differences, runs, per-stage swap rise).\n"
	"Swap counts: footprint does not include swapped pages, so a mode whose system\n"
	"swap rose 256 MB more than the first's (in a stage or over its runs) is never\n"
	"said to use less; the sentence says the footprint was lower but swap grew,\n"
	"and how its runs ended. A second table gives each stage's swap rise when\n"
	"swap rose somewhere; another its device peak (the probe's MPS driver or\n"
	"CUDA reserved memory; MPS sampled on the interval, CUDA exact) when the\n"
	"runs read a device (csv: a fifth block). The first line names the reader of\n"
	"the footprint (the run's own memory cgroup, v1 or v2; per-process, with what\n"
	"it can miss; macOS; unknown for traces older than the reader mark) and says\n"
	"when the runs were read differently (json: each run's \"reader\" token and\n"
	"\"readers_differ\"; traces/FORMAT.md).\n"
	"\n";

struct table_args {
	const char *stages; /* --stages as given */
	const char *format;
};

static const struct opt_spec table_opts[] = {
	OPT_STRING_TO("stages", 0, "LIST", OV_TEXT, struct table_args, stages,
		      "rows, comma-separated, in this order (default: every\n"
		      "stage, in order of first appearance)"),
	OPT("supplement", 0, 'S', "TRACE", OV_TRACE,
	    "a run that only fills stages no main run of its mode\n"
	    "entered (repeatable)"),
	OPT_WORDS_TO("format", 0, "FMT", "md csv json", struct table_args, format,
		     "md (default), csv or json"),
	OPT_HELP,
	OPT_END,
};

const struct opt_cmd opt_cmd_table = {
	.name = "table", .usage = table_usage, .opts = table_opts, .column = 23,
	.after = "\nexit: 0 ok, 2 usage, 3 a trace could not be read (file:line on stderr)\n",
	.operands = OV_TRACE,
};

/* Split "a,b,c" into *names (pointers into the string, which is modified). */
static int split_stages(char *list, const char ***names, size_t *n)
{
	size_t alloc = 0;
	*n = 0;
	for (char *p = list;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p)
			return -1;
		for (size_t i = 0; i < *n; i++)
			if (!strcmp((*names)[i], p))
				return -1;
		ALLOC_GROW(*names, *n + 1, alloc);
		(*names)[(*n)++] = p;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int cmd_table(int argc, char **argv)
{
	struct table_args a = { .format = "md" };
	const char **supplements = NULL;
	size_t nsup = 0, sup_alloc = 0;
	const char **stages = NULL;
	size_t nstages = 0;
	struct opt_parser p;
	int c, rc = SB_EXIT_OK;

	opt_begin_to(&p, &opt_cmd_table, argc, argv, NULL, &a);
	while ((c = opt_next(&p)) != -1) {
		switch (c) {
		case 'S':
			ALLOC_GROW(supplements, nsup + 1, sup_alloc);
			supplements[nsup++] = p.arg;
			break;
		default: /* OPT_EXIT */
			free(supplements);
			return p.rc;
		}
	}
	render_fn render = render_find(RM_TABLE, a.format);
	if (!render) {
		free(supplements);
		return opt_usage_error("table", "option '--format': invalid value '%s' (%s)",
				       a.format, render_format_list(RM_TABLE));
	}
	if (optind >= argc) {
		free(supplements);
		return opt_usage_error("table", "no trace given");
	}
	char *list_copy = xstrdup(a.stages);
	if (list_copy && split_stages(list_copy, &stages, &nstages) < 0) {
		free(list_copy);
		free(stages);
		free(supplements);
		return opt_usage_error("table", "option '--stages': invalid value '%s' (distinct non-empty names separated by commas)",
				       a.stages);
	}

	size_t nmain = (size_t)(argc - optind), n = nmain + nsup;
	struct table_run *runs = xcalloc(n, sizeof(*runs));
	struct table t = TABLE_INIT;
	for (size_t i = 0; i < n; i++) {
		const char *path = i < nmain ? argv[optind + (int)i] : supplements[i - nmain];
		runs[i].supplement = i >= nmain;
		if (analysis_open(path, &runs[i].a) < 0) {
			rc = SB_EXIT_FAILURE;
			goto out;
		}
	}
	if (table_build(&t, runs, n, a.stages ? stages : NULL, nstages) < 0) {
		rc = SB_EXIT_FAILURE;
		goto out;
	}
	struct strbuf o = STRBUF_INIT;
	render(&t, &o);
	fwrite(o.buf, 1, o.len, stdout);
	strbuf_release(&o);
out:
	table_release(&t);
	for (size_t i = 0; i < n; i++)
		analysis_release(&runs[i].a);
	free(runs);
	free(stages);
	free(list_copy);
	free(supplements);
	return rc;
}
