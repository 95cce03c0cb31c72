/* campaign.h -- the campaign of a compare spread over machines (plan, tasks, merge)
 *
 * `compare --plan --out DIR` (and a whole `compare`) starts a campaign: a fresh
 * id and the run ids of its plan in DIR/plan.json, refused when DIR already
 * holds a campaign or results. Each task checks its plan against it, marks its
 * trace and its runs.d entry with the id, and leaves DIR/runs.d/V-N.running
 * (host, pid) while it runs; the merge takes only entries that match.
 */
#ifndef SB_CAMPAIGN_H
#define SB_CAMPAIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "../../common/util.h"
#include "../../traces/runs.h"

/* Start a campaign of the runs RUNS[0..n) in OUT: *id gets a fresh id.
 * Returns 0, SB_EXIT_USAGE after error() when OUT already holds a campaign or
 * results, SB_EXIT_FAILURE when plan.json could not be written. */
int campaign_start(const char *out, char *const *runs, size_t n, char **id);
/* The campaign of OUT, checked against our plan RUNS[0..n). Returns 0 with *id
 * set, or SB_EXIT_USAGE / SB_EXIT_FAILURE after error(). */
int campaign_load(const char *out, char *const *runs, size_t n, char **id);

/* OUT/runs.d/RUN.running: this process records RUN of campaign ID. */
int campaign_mark_running(const char *out, const char *run, const char *id);
void campaign_unmark_running(const char *out, const char *run);
/* Whether RUN's task still records (its marker names a live process on this
 * host, or on another host its trace was written in the last seconds); *why
 * says so in words. */
bool campaign_still_recording(const char *out, const char *run, const char *id,
			      const char *trace_path, struct strbuf *why);

/* Whether entry E (read from runs.d/RUN.json) can stand for run REP of MODE of
 * campaign ID; when not, *why says what is wrong. */
bool campaign_entry_ok(const struct run_entry *e, const char *mode, int rep, const char *trace,
		       const char *id, struct strbuf *why);
/* The value of label "campaign" in TRACE_PATH's start record (caller frees), or NULL. */
char *campaign_of_trace(const char *trace_path);

#endif
