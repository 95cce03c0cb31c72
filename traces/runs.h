/* runs.h -- runs.json: how each run of a run directory ended
 *
 * stageload leaves `[{"mode":"eager","run":1,"exit":3}, ...]` beside its
 * traces, run N of a mode being MODE-N.trace.jsonl; exit 3 there means the
 * guard stopped the run even when its trace ends with `end`. stagebench writes
 * the same keys plus "trace" (the file name), "stopped_by" and "signal".
 */
#ifndef SB_RUNS_H
#define SB_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"

struct run_entry {
	char *mode;
	int run;          /* 1-based within the mode */
	bool has_exit;
	int exit;         /* the guarded command's exit: 3 = stopped by the guard */
	char *trace;      /* file name relative to runs.json; NULL = MODE-RUN.trace.jsonl[.zst] */
	enum stopped_by stopped_by; /* "guard", "signal", "lost"; STOPPED_NONE when absent */
	char *why;        /* in words, for "lost" runs and a task stopped by a signal; NULL otherwise */
	int signal;
	char *campaign;   /* the distributed compare's campaign (OUT/plan.json); NULL when none */
};

struct run_list {
	struct run_entry *items;
	size_t n, alloc;
};
#define RUN_LIST_INIT { NULL, 0, 0 }

/* Returns 0 when read, 1 when the file does not exist (empty list), -1 after
 * error() naming the file for anything malformed. */
int runs_read(const char *path, struct run_list *out);
int runs_write(const char *path, const struct run_list *runs); /* atomic */
/* The entry for a trace file name like "eager-1.trace.jsonl", or NULL. */
const struct run_entry *runs_find(const struct run_list *runs, const char *trace_basename);
/* A deep copy of SRC into DST. */
void runs_entry_copy(struct run_entry *dst, const struct run_entry *src);
void runs_release(struct run_list *runs);

#endif
