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

/*
 * Memory primed before a run: `bytes` of anonymous memory mapped, written one
 * byte a page and unmapped, just before the command starts. Virtual machines
 * back their memory lazily and many (free page reporting of virtio-balloon,
 * Firecracker, cloud VMs) hand freed pages back to the host seconds after a
 * process frees them; the next first touch of such a page costs a fault in
 * the host too. Measured on a 2-core Firecracker VM: 4000 MiB written in
 * 2.1 s right after another process freed as much, 5.3 to 8.2 s after 15 s
 * idle; the demo's eager loading 3.1 to 3.6 s primed against 5.0 to 5.7 s
 * not. A run that starts long after the previous one (the first run of a
 * compare, after prepare) would pay that and the others not; primed, every
 * run takes its memory from pages the machine has just touched. On a machine
 * that backs its memory (bare metal, macOS) it costs the zeroing of the pages
 * once, about 0.1 to 0.3 s per GB, and changes nothing else.
 * Returns the seconds it took, or -1 (nothing primed) when the mapping failed.
 */
double memory_prime(uint64_t bytes);

#endif
