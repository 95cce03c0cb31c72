/* versions.h -- did the runs being compared import different library versions?
 *
 * Each run names the versions of Python and the libraries it imported
 * (analysis.versions, from the trace: FORMAT.md "versions"). A comparison
 * groups runs (the table: by mode, or MODE@HOST; check: baseline and
 * candidate). A name differs when the runs that name it, over every group,
 * hold more than one value; runs that do not name it (a library they never
 * imported, a trace that predates versions) are left out, so a name only one
 * version is known for never differs.
 *
 *   struct versions_diff d = VERSIONS_DIFF_INIT;
 *   versions_compare(&d, groups, ngroups);
 *   versions_diff_text(&d, out, md)   "torch 2.6.0 (eager) / 2.15.0 (staged)"
 *   versions_diff_json(&d, w)         "versions_differ": [...] (nothing when none)
 *   versions_diff_release(&d);
 *
 * The model points into the groups' labels and the runs' analyses: they must
 * outlive it.
 */
#ifndef SB_VERSIONS_H
#define SB_VERSIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/util.h"
#include "analysis.h"

struct jsonw;

struct versions_group {
	const char *label;               /* "eager", "baseline" */
	const struct analysis *const *runs;
	size_t nruns;
};

/* One value of a name in one group. */
struct version_value {
	size_t group;
	const char *value;
};

/* A name whose value differs: its values, by group (group order), each group's
 * values in order of first appearance. */
struct version_diff {
	const char *name;
	struct version_value *values;
	size_t nvalues;
};

struct versions_diff {
	const char **labels;   /* [ngroups] */
	size_t ngroups;
	struct version_diff *diffs; /* names in order of first appearance */
	size_t ndiffs;
};
#define VERSIONS_DIFF_INIT { 0 }

void versions_compare(struct versions_diff *d, const struct versions_group *groups,
		      size_t ngroups);
/* Every differing name, "; " between names: "torch 2.6.0 (eager) / 2.15.0
 * (staged)", "torch 2.6.0 and 2.7.0 (eager)" for a group holding two. Nothing
 * when none differs. md: names, values and labels escaped for markdown
 * (text.h), else for a terminal. */
void versions_diff_text(const struct versions_diff *d, struct strbuf *out, bool md);
/* The key "versions_differ" and [{"name":"torch","values":{"eager":["2.6.0"],
 * "staged":["2.15.0"]}}, ...], in an open object; nothing when none differs. */
void versions_diff_json(const struct versions_diff *d, struct jsonw *w);
/* The key "versions" and {"python":"3.11.2","torch":"2.6.0"} of one run, in an
 * open object; nothing when the run names none. */
void versions_run_json(const struct analysis *a, struct jsonw *w);
void versions_diff_release(struct versions_diff *d); /* NULL ok */

#endif
