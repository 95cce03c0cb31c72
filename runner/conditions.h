/* conditions.h -- the same conditions for every run of a compare
 *
 * After hyperfine's --prepare/--warmup and asv's setup: the pipeline's own
 * "prepare" command runs once before the timed runs (compare.c), warmup runs
 * come first and are kept apart (compare.c), and the page cache holds the
 * pipeline's declared files in the same state before each run:
 *
 *   warm    every byte of each file is read once (so the run reads from memory);
 *   cold    each file is evicted from the page cache: fdatasync() (dirty pages
 *           cannot be dropped), then posix_fadvise(POSIX_FADV_DONTNEED), which
 *           needs no root; pages another process has mapped stay;
 *   as-is   nothing is done.
 * compare's default: warm when the pipeline declares files, else as-is; and
 * after "prepare", sync(), so that the first run does not pay for writing
 * back what prepare wrote.
 *
 * A run much slower than the others of its variant is named afterwards
 * (run_much_slower()): the first run of a compare often pays for building
 * files, a cold page cache or a compiler's caches.
 */
#ifndef SB_CONDITIONS_H
#define SB_CONDITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cache_state { CACHE_AS_IS = 0, CACHE_WARM, CACHE_COLD };

/* "warm", "cold", "as-is" -> *out; 0, or -1 (nothing printed) for another word. */
int cache_state_parse(const char *s, enum cache_state *out);
const char *cache_state_name(enum cache_state c);

/* What cache_state_apply() did. */
struct cache_report {
	size_t files;      /* regular files found under the paths */
	uint64_t bytes;    /* their size */
	size_t missing;    /* paths that do not exist (skipped) */
	size_t failed;     /* files that could not be read or advised (a warning each, once) */
};

/* Bring the regular files at paths (NULL-terminated; a directory means every
 * regular file below it, symbolic links not followed) into state c. Returns
 * 0 (problems are counted in *rep, with one warning for the first), or -1
 * after error() when the state cannot be had on this platform (cold without
 * posix_fadvise). */
int cache_state_apply(enum cache_state c, char *const *paths, struct cache_report *rep);

/* The start record's keys for it, added to f: "cache_state":"cold",
 * "cache_files":N, "cache_bytes":B (the last two only when c is not as-is). */
struct trace_fields;
void cache_state_fields(enum cache_state c, const struct cache_report *rep,
			struct trace_fields *f);

/* A run is much slower than the others of its variant when its wall time is
 * more than 1.5 times their median and more than 1 s above it. others: the
 * wall times of the variant's other completed runs (n >= 1; reordered). Sets
 * *median. */
bool run_much_slower(double wall, double *others, size_t n, double *median);

#endif
