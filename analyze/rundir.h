/* rundir.h -- the traces of a run directory, in the order the runs were made
 *
 * A run directory (what `compare` leaves in --out, or a stageload bench
 * directory) holds traces named MODE-N.trace.jsonl.zst or MODE-N.trace.jsonl
 * and, usually, a runs.json saying how each run ended. rundir_open() lists
 * the traces: in runs.json order when that file lists them, the others after
 * them by name in version order ("eager-2" before "eager-10").
 *
 * Call order:
 *   struct rundir rd = RUNDIR_INIT;
 *   rundir_open(dir, &rd);         lists DIR and reads DIR/runs.json
 *   ... rd.traces[i].path, .stem, .entry ...
 *   rundir_release(&rd);           always, even after a failure; NULL ok
 *
 * Ownership: the rundir owns every string; `entry` points into rd.runs and
 * lives as long as the rundir.
 */
#ifndef SB_RUNDIR_H
#define SB_RUNDIR_H

#include <stddef.h>

#include "../traces/runs.h"

struct rundir_trace {
	char *path;                    /* DIR/BASE */
	char *base;                    /* the file name */
	char *stem;                    /* BASE without .trace.jsonl[.zst] ("eager-1") */
	const struct run_entry *entry; /* its runs.json entry, or NULL */
};

struct rundir {
	char *dir;
	struct run_list runs;          /* DIR/runs.json; empty when absent */
	struct rundir_trace *traces;
	size_t n, alloc;
};
#define RUNDIR_INIT { .runs = RUN_LIST_INIT }

/*
 * List DIR. Returns the number of traces found (0 is not an error here; the
 * caller says whether an empty directory is), or -1 after error() when DIR
 * does not exist, is not a directory, cannot be listed, or has a runs.json
 * that cannot be read (the runs reader names the file).
 */
int rundir_open(const char *dir, struct rundir *out);
void rundir_release(struct rundir *rd);

/* "eager-1.trace.jsonl.zst" -> "eager-1"; NULL when BASE is not a trace name.
 * Caller frees. */
char *rundir_trace_stem(const char *base);
/* "eager-12" -> "eager"; NULL when STEM has no "-N" suffix. Caller frees. */
char *rundir_mode_of_stem(const char *stem);

#endif
