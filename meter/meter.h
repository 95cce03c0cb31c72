/* meter.h -- the neutral memory meter: one interface, a backend per platform
 *
 * Backends (one per platform, chosen by the build; platform/platform.h):
 *   platform/linux/meter.c   the tree footprint from the run's own memory cgroup
 *                  (each page once) or /proc per process (RssAnon + RssShmem,
 *                  proportional shares where processes share), RSS, VmSwap,
 *                  /proc/meminfo swap and MemAvailable; kernel peaks via
 *                  clear_refs (5) + VmHWM. info.reader says which reader ran.
 *   platform/darwin/meter.c  proc_pid_rusage(RUSAGE_INFO_V4): ri_phys_footprint
 *                  and ri_interval_max_phys_footprint; vm.swapusage;
 *                  kern.memorystatus_level.
 *   meter/fake.c   a scripted backend for tests (STAGEBENCH_METER=fake:FILE).
 * GPU meters (a list in meter.c, each optional, sampled on their own slower
 * timer): meter/gpu/nvml.c, NVIDIA per-process memory through dlopen'd NVML.
 * GPU memory, when sampled, is the samples' gpu field (SF_GPU).
 * docs/platforms.md states what each measures and from which OS version.
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
 * so orphans stay in its tree. The Linux meter then treats every child of the
 * recorder as part of the tree, except those it already had when
 * meter_track() was called and those passed to meter_ignore(): spawn the
 * command, meter_track() it, and meter_ignore() any other child the recorder
 * starts while metering. Orphans re-parented to the recorder become zombies
 * there when they exit: the recorder reaps them (waitpid(-1, ..)).
 *
 * Linux figures (per process, summed over the tree): footprint = RssAnon +
 * RssShmem less the part other tree processes also map (smaps_rollup's
 * Pss_Anon + Pss_Shmem where processes share: each page once; docs/platforms.md
 * says when it is read), rss = VmRSS, swapped = VmSwap, procs = live (non-zombie)
 * processes; system: swap_used = SwapTotal - SwapFree, level = MemAvailable
 * * 100 / MemTotal. Exact peaks: VmHWM after clear_refs; a window's peak is
 * the highest sum of the tree's parts over its samples (processes that never
 * lived at the same time are not added up); a process that exits inside a
 * window counts what it held alone at the last sample, or its ru_maxrss under
 * meter_peak_exited()'s rule (docs/platforms.md).
 * With the command in a memory cgroup of its own (meter_enclose), footprint is
 * that cgroup's anonymous + shmem memory instead (one read, each page once).
 * Cost: about two preads per process per sample (and the cgroup's memory.stat),
 * /proc/meminfo each sample (reused within half the interval; meter_system
 * always reads it), no allocation in steady state (bench/meter_cost.c measures it).
 *
 * The fake backend ("fake:PATH"): PATH is a text script, one sample per
 * line, KEY=VALUE words separated by blanks; '#' starts a comment, blank
 * lines are skipped:
 *     footprint=100M rss=120M swap_used=1G swap_total=8G level=80
 *     footprint=300M level=60 peak=350M gpu=2G procs=2
 *     gone
 * Keys: footprint rss swapped swap_used swap_total gpu mapped (sizes, as
 * parse_size), level (percent), procs majflt (counts); a key left out is absent
 * from the sample (its SF_ bit clear). Extra keys: peak=SIZE (what
 * meter_peak_read returns: the highest peak= among the lines sampled since
 * the last reset, the current line included; without one, the highest
 * footprint among them), total=SIZE (memory size for meter_system, default
 * 16G), the word `gone` (meter_sample returns -1 for that line: the root
 * exited), and the setting peak_metric=rss|footprint|none (default rss),
 * alone on a line. Each meter_sample returns the next line, the last one
 * repeating. meter_system reports the current line (level= required); on a
 * meter never sampled each meter_system call moves to the next line, so an
 * admission loop can be scripted. info: fields = the union of the keys used,
 * peak_metric NULL when no line has peak=, gpu when some line has gpu=.
 */
#ifndef SB_METER_H
#define SB_METER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../platform/platform.h"
#include "../traces/trace.h"
#include "../common/reader.h"

struct meter;

struct meter_info {
	const char *backend;    /* "linux", "macos", "fake" */
	const char *footprint;  /* what footprint counts, in words, for the start record */
	const char *mapped;     /* what mapped counts, in words; NULL: no mapped figure */
	unsigned fields;        /* SF_* this backend fills */
	const char *peak_metric;/* "rss" (VmHWM), "footprint" (interval max), NULL = no kernel peaks */
	bool gpu;               /* a GPU meter (NVML) found and initialised */
	enum sb_reader reader;  /* set by meter_track: which reader reads this run's tree
				 * (common/reader.h; SB_READER_UNKNOWN: none is named, the
				 * fake meter's) */
	const char *reader_words; /* and how, in words (the trace's "meter:" mark) */
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

/* Before spawning the command: a descriptor the command writes "0" to before
 * its exec to enter a memory cgroup of its own (Linux: cgroup.procs of a
 * cgroup made under the recorder's, v1 or v2), so that samples read the
 * whole tree's memory there, each page once, in one read (docs/platforms.md);
 * -1 when the platform or the host offers none (or STAGEBENCH_CGROUP is 0).
 * meter_track() checks that the root is in it; the cgroup goes at the next
 * meter_enclose() or meter_free(). */
int meter_enclose(struct meter *m);

/* Declare a child of the recorder that is not part of the command's tree
 * (a helper the recorder itself started): it is never adopted. */
void meter_ignore(struct meter *m, pid_t pid);

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

/* Kernel stage peaks: reset the kernel high-water mark of every tree process
 * (Linux: "5" > /proc/PID/clear_refs; macOS: proc_reset_footprint_interval),
 * then read the sum of per-process high-water marks since the reset (exact for
 * a one-process tree, an upper bound for several; Linux: pages that tree
 * processes share counted once, docs/platforms.md). Returns 0, or -1 when the
 * backend has no kernel peaks (meter_info()->peak_metric == NULL) or the
 * tree is gone. */
int meter_peak_reset(struct meter *m);
int meter_peak_read(struct meter *m, uint64_t *bytes);

/* A tree process was reaped (wait4) with maxrss, its ru_maxrss in bytes.
 * A zombie has no VmHWM, so a peak reached after the last reading of a
 * process that then exits is otherwise lost; ru_maxrss is the kernel's
 * high-water mark of the process at its exit. The rule (Linux): when maxrss
 * exceeds every VmHWM reading of every tree process seen during the run
 * (and the recorder's own high-water mark when the command was tracked),
 * the process reached it after its last reading, inside the current window,
 * and maxrss becomes its part of the window's peak. Why so strict:
 * ru_maxrss is not the process's own figure alone. It also holds the
 * high-water mark of the image exec replaced (a forked copy of the parent:
 * the recorder for the root, a tree process for a descendant) and the
 * ru_maxrss of the children it reaped, which themselves carry their
 * parent's mark from their exec: so it can be an earlier window's figure of
 * any tree process, but never above every reading (each window's end is
 * read). The mark counts from the process's last clear_refs, so it is the
 * current window's when the process lived at its start; a process already
 * a zombie at the window's start, or never seen alive (born and gone
 * between two samples), is left alone. Returns 1 when maxrss
 * became the process's part, 0 when not (or pid unknown), -1 when the
 * backend has no such rule (macOS: its peaks are the phys footprint, which
 * ru_maxrss does not measure; the fake backend). */
int meter_peak_exited(struct meter *m, pid_t pid, uint64_t maxrss);

/* A data file the tree maps, first seen resident since the last call (the
 * samples' mapped figure counts it): *path (valid until the next sample),
 * *size (its size in bytes, 0 when unknown). Returns 1, or 0 when there is
 * none (or the backend has no mapped figure). Call after meter_sample until
 * it returns 0. */
int meter_mapped_file(struct meter *m, const char **path, uint64_t *size);

/* GPU memory of the tree (every GPU meter that opened, summed), for the
 * slower GPU timer; returns 0 and sets *bytes, or -1 when there is none. */
int meter_gpu(struct meter *m, uint64_t *bytes);

/* host_info_get(): platform/platform.h */

#endif
