/* meter.h -- the neutral memory meter: one interface, a backend per platform
 *
 * Backends (chosen by the build, after htop's Platform.h):
 *   meter/linux.c  /proc: tree footprint (RssAnon + RssShmem), RSS, VmSwap,
 *                  /proc/meminfo swap and MemAvailable; exact peaks via
 *                  clear_refs (5) + VmHWM.
 *   meter/macos.c  proc_pid_rusage(RUSAGE_INFO_V4): ri_phys_footprint and
 *                  ri_interval_max_phys_footprint; vm.swapusage;
 *                  kern.memorystatus_level.
 *   meter/nvml.c   NVIDIA per-process GPU memory through dlopen'd NVML,
 *                  sampled on its own slower timer; optional on both.
 *   meter/fake.c   a scripted backend for tests (STAGEBENCH_METER=fake:FILE).
 * Each backend states which sample fields it fills (`fields`): a field it
 * lacks is left absent, never reported as 0.
 *
 * Call order:
 *   m = meter_new(NULL);           // platform default; "fake:FILE" for tests
 *   meter_track(m, pid);           // the command's pid (its group leader)
 *   loop: meter_sample(m, &s);     // walks the tree, fills s
 *         meter_peak_reset(m) at a stage window start,
 *         meter_peak_read(m, ..) at its end
 *   meter_free(m);
 * The recorder should call prctl(PR_SET_CHILD_SUBREAPER) itself (runner/spawn)
 * so orphans stay in its tree.
 */
#ifndef SB_METER_H
#define SB_METER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../traces/trace.h"

struct meter;

struct meter_info {
	const char *backend;    /* "linux", "macos", "fake" */
	const char *footprint;  /* what footprint counts, in words, for the start record */
	unsigned fields;        /* SF_* this backend fills */
	const char *peak_metric;/* "rss" (VmHWM), "footprint" (interval max), NULL = no exact peaks */
	bool gpu;               /* NVML found and initialised */
};

/* spec: NULL or "" for the platform default, "fake:PATH" for the fake backend.
 * Returns NULL after error(). */
struct meter *meter_new(const char *spec);
void meter_free(struct meter *m); /* NULL ok */
const struct meter_info *meter_info(const struct meter *m);

/* Root of the process tree to meter (the spawned command). Descendants are
 * found on every sample (children, grandchildren, processes that left the
 * group or were re-parented to us); every pid seen is remembered until it
 * exits. */
void meter_track(struct meter *m, pid_t root);

/* Pids currently in the tree (root first); valid until the next call. */
const pid_t *meter_pids(struct meter *m, size_t *n);

/* One sample over the whole tree plus system figures. s->t is left for the
 * caller. Returns 0, or -1 when the root is gone and nothing was measured. */
int meter_sample(struct meter *m, struct trace_sample *s);

/* System figures only (the guard's admission checks): available percent,
 * available bytes, swap used/total. Returns 0 or -1. */
struct meter_system {
	double avail_pct;
	uint64_t avail_bytes, total_bytes;
	uint64_t swap_used, swap_total;
	bool has_swap; /* the platform reports swap */
};
int meter_system(struct meter *m, struct meter_system *sys);

/* Exact stage peaks: reset the kernel high-water mark of every tree process
 * (Linux: "5" > /proc/PID/clear_refs; macOS: proc_reset_footprint_interval),
 * then read the sum of per-process high-water marks since the reset (exact for
 * a one-process tree, an upper bound for several). Returns 0, or -1 when the
 * backend has no exact peaks (meter_info()->peak_metric == NULL) or the
 * tree is gone. */
int meter_peak_reset(struct meter *m);
int meter_peak_read(struct meter *m, uint64_t *bytes);

/* GPU memory of the tree (NVML), for the slower GPU timer; returns 0 and sets
 * *bytes, or -1 when there is no GPU backend. */
int meter_gpu(struct meter *m, uint64_t *bytes);

/* Host facts for the start record. */
struct host_info {
	char os[64], kernel[128], machine[64];
	int cpus;
	uint64_t memory, swap;
};
void host_info_get(struct host_info *h);

#endif
