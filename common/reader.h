/* reader.h -- which reader read a run's footprint: the one table of their names
 *
 * A meter reads a process tree's footprint in one of a few ways (docs/platforms.md):
 * Linux from a memory cgroup of the run's own (v1 or v2: each page once, however
 * many processes map it and whenever it was written) or process by process (RssAnon
 * + RssShmem, proportional shares where processes share pages), macOS process by
 * process (ri_phys_footprint). The recorder names the reader in a `mark` event at the
 * command's start, "meter: TOKEN: WORDS" (traces/FORMAT.md), TOKEN one of the names
 * below; every renderer that says which reader ran takes its words from this table.
 *
 * Traces written before the mark carried a token: the cgroup reader's mark began
 * "meter: footprint read from the run's own memory cgroup (v1" (or "(v2"), and the
 * per-process reader wrote none. So a trace without a reader mark reads as
 * SB_READER_UNKNOWN, except where its meter backend has one reader only (macos) or
 * is the scripted test meter (fake).
 */
#ifndef SB_READER_H
#define SB_READER_H

#include <stdbool.h>
#include <stddef.h>

enum sb_reader {
	SB_READER_UNKNOWN = 0, /* a trace older than the reader mark */
	SB_READER_CGROUP_V1,
	SB_READER_CGROUP_V2,
	SB_READER_PER_PROCESS, /* Linux, process by process */
	SB_READER_MACOS,
	SB_READER_FAKE,        /* the scripted test meter (meter.h) */
	SB_READER_COUNT
};

struct sb_reader_info {
	const char *name;   /* the stable token: "cgroup-v1", "per-process", ... ("unknown") */
	const char *label;  /* in prose: "cgroup v1", "per-process", "macOS", "unknown" */
	const char *caveat; /* one sentence on what it can miss; NULL when none is said */
};

const struct sb_reader_info *reader_info(enum sb_reader r);

/* "meter: " and the reader's token (the mark's note begins so). */
#define READER_MARK_PREFIX "meter: "

/* The reader a mark's note names: "meter: TOKEN: ...", or the cgroup reader's older
 * words; SB_READER_UNKNOWN when the note names none. */
enum sb_reader reader_of_mark(const char *note);

/* A run's reader: what its mark says (SB_READER_UNKNOWN for none), else the one its
 * meter backend ("macos", "fake"; NULL ok) always has. */
enum sb_reader reader_of_run(enum sb_reader marked, const char *backend);

/* The sentence said once where some run was read by `r` (the caveat), or NULL. */
const char *reader_caveat(enum sb_reader r);

#endif
