/* meter_internal.h -- what the meter backends share: the handle, the process table,
 * and the pure parsing functions (unit-tested on every platform)
 *
 * Not for use outside meter/ except by tests/unit/test_meter.c.
 *
 * A backend fills a struct meter_backend and sets m->be, m->priv and m->info
 * in its init function: meter_platform_init() (meter/linux.c or meter/macos.c,
 * one of which the build compiles) or meter_fake_init() (meter/fake.c).
 * meter.c owns the public functions and dispatches through m->be.
 */
#ifndef SB_METER_INTERNAL_H
#define SB_METER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "meter.h"

struct meter_backend {
	void (*track)(struct meter *m, pid_t root);
	const pid_t *(*pids)(struct meter *m, size_t *n);
	int (*sample)(struct meter *m, struct trace_sample *s);
	int (*system)(struct meter *m, struct meter_system *sys);
	int (*peak_reset)(struct meter *m);                    /* NULL: no exact peaks */
	int (*peak_read)(struct meter *m, uint64_t *bytes);    /* NULL: no exact peaks */
	int (*peak_exited)(struct meter *m, pid_t pid, uint64_t maxrss); /* NULL: no rule */
	int (*gpu)(struct meter *m, uint64_t *bytes);          /* NULL: use NVML */
	void (*ignore)(struct meter *m, pid_t pid);            /* NULL: nothing to do */
	void (*free)(struct meter *m);                         /* frees m->priv */
};

struct nvml;

struct meter {
	const struct meter_backend *be;
	void *priv;
	struct meter_info info;
	struct nvml *nvml; /* NULL when no NVIDIA library/driver */
};

int meter_platform_init(struct meter *m);                 /* linux.c / macos.c */
int meter_fake_init(struct meter *m, const char *path);   /* fake.c */

/* Test hook (linux.c): find children by scanning /proc/PID/stat, as on a
 * kernel without CONFIG_PROC_CHILDREN. */
void meter_linux_force_scan(struct meter *m);

/* ---- the process table (proctab.c) --------------------------------------
 * Every pid seen in the tree, root first, in discovery order. Each entry
 * carries what the backends keep per process. Entries are removed when the
 * process is gone (reaped); order is preserved. */
struct mthread {
	pid_t tid;
	int fd;       /* linux: /proc/PID/task/TID/children */
	unsigned gen; /* walk in which it was last seen */
};

struct mproc {
	pid_t pid;
	int status_fd;   /* linux: /proc/PID/status, -1 when not open */
	int task_fd;     /* linux: /proc/PID/task directory, -1 */
	int children_fd; /* linux: /proc/PID/task/PID/children, -1 */
	uint64_t start;  /* macos: start time, to tell a reused pid apart */
	uint64_t hwm;    /* last high-water mark read (bytes), 0 = unknown */
	int threads;     /* linux: Threads: from the last status read */
	int64_t listed_ns; /* linux: when task/ was last listed, 0 = never */
	bool zombie;     /* exited, not yet reaped */
	bool stale_exit; /* linux: a zombie at a peak reset or when first seen */
	bool hwm_read;   /* linux: VmHWM was read once (seen alive) */
	struct mthread *thr; /* linux: children fds of the other threads */
	size_t nthr, thr_alloc;
	unsigned gen;
};

struct proctab {
	struct mproc *p;
	size_t n, alloc;
	pid_t *pids; /* meter_pids() view, rebuilt by proctab_pids() */
	size_t pids_alloc;
	pid_t *foreign; /* recorder children that are not part of the tree */
	size_t nforeign, foreign_alloc;
};

void proctab_init(struct proctab *t);
/* Calls close_fn (may be NULL) on every entry, frees the arrays. */
void proctab_release(struct proctab *t, void (*close_fn)(struct mproc *));
/* Index of pid, or -1. */
long proctab_find(const struct proctab *t, pid_t pid);
/* Appends pid (fds -1, numbers 0) and returns the entry; pointers into the
 * table are invalidated by the next add. */
struct mproc *proctab_add(struct proctab *t, pid_t pid);
/* Removes entry i, keeping the order of the others. */
void proctab_remove(struct proctab *t, size_t i, void (*close_fn)(struct mproc *));
const pid_t *proctab_pids(struct proctab *t, size_t *n);
void proctab_add_foreign(struct proctab *t, pid_t pid);
bool proctab_is_foreign(const struct proctab *t, pid_t pid);

/* ---- Linux parsing (linux_parse.c; pure) -------------------------------- */

struct status_fields {
	unsigned have;     /* ST_* bits of the lines found */
	uint64_t rss_anon, rss_file, rss_shmem, vm_rss, vm_swap, vm_hwm; /* bytes */
	int threads;
	char state;        /* 'R', 'S', 'Z', ... ; 0 when absent */
};
enum {
	ST_RSS_ANON = 1u << 0, ST_RSS_SHMEM = 1u << 1, ST_VM_RSS = 1u << 2,
	ST_VM_SWAP = 1u << 3, ST_VM_HWM = 1u << 4, ST_THREADS = 1u << 5,
	ST_STATE = 1u << 6, ST_RSS_FILE = 1u << 7,
};
/* Parse /proc/PID/status text (need not be NUL-terminated). A zombie or a
 * kernel thread has no Vm* lines: their bits stay clear. */
void linux_parse_status(const char *buf, size_t len, struct status_fields *f);

struct meminfo_fields {
	unsigned have; /* MI_* bits */
	uint64_t mem_total, mem_available, swap_total, swap_free; /* bytes */
};
enum { MI_MEM_TOTAL = 1u << 0, MI_MEM_AVAILABLE = 1u << 1, MI_SWAP_TOTAL = 1u << 2,
       MI_SWAP_FREE = 1u << 3 };
void linux_parse_meminfo(const char *buf, size_t len, struct meminfo_fields *f);

/* Parse a list of decimal pids separated by spaces/newlines (the children
 * file), calling fn(pid, arg) for each. Returns the number parsed. */
size_t linux_parse_pidlist(const char *buf, size_t len, void (*fn)(pid_t, void *), void *arg);

/* ppid from /proc/PID/stat text: field 4, parsed after the last ')'.
 * Returns 0 or -1. */
int linux_parse_stat_ppid(const char *buf, size_t len, pid_t *ppid);

/* ---- the fake backend's script (fake.c) --------------------------------- */

enum { FK_PEAK = 1u << 0, FK_GONE = 1u << 1, FK_TOTAL = 1u << 2, FK_PEAK_METRIC = 1u << 3 };
struct fake_line {
	struct trace_sample s;   /* s.fields: the SF_* keys present */
	unsigned extra;          /* FK_* */
	uint64_t peak, total;
	const char *peak_metric; /* FK_PEAK_METRIC: "rss", "footprint", or NULL for "none" */
};
/* Parse one script line ("footprint=100M rss=120M level=80"); a blank or
 * '#' line, or one holding only the peak_metric setting, sets *empty. Returns 0, or -1 with *why set (static string) and
 * *bad_key pointing at the offending word in `line`. */
int fake_parse_line(const char *line, struct fake_line *out, bool *empty,
		    const char **why, const char **bad_key);

/* ---- NVML pure logic (nvml.c) ------------------------------------------- */

#define NVML_ENTRY_ALLOC 32 /* bytes allocated per process entry (R535 trap) */
#define NVML_PATTERN 0xa5
/* Given a buffer of `cap` entries of NVML_ENTRY_ALLOC bytes, filled with
 * NVML_PATTERN before the call, into which the library wrote `count` entries,
 * infer the stride it used: 24 (nvmlProcessInfo_t) or 32 (R535 _v3). */
size_t nvml_infer_stride(const unsigned char *buf, size_t cap, unsigned count);
/* Sum usedGpuMemory (offset 8) of the entries whose pid (offset 0) is in
 * pids[], skipping NVML_VALUE_NOT_AVAILABLE (all ones). */
uint64_t nvml_sum_tree(const unsigned char *buf, unsigned count, size_t stride,
		       const pid_t *pids, size_t npids);

/* The NVML entry points used, as plain function pointers (return codes are
 * nvmlReturn_t values: 0 success, 7 insufficient size). Tests pass fakes to
 * nvml_open_api(); nvml_open() fills them from the dlopen'd library. */
struct nvml_api {
	int (*init)(void);                                   /* nvmlInit_v2 */
	int (*shutdown)(void);                               /* nvmlShutdown */
	int (*get_count)(unsigned *count);                   /* nvmlDeviceGetCount_v2 */
	int (*get_handle)(unsigned index, void **dev);       /* ..GetHandleByIndex_v2 */
	int (*get_procs)(void *dev, unsigned *count, void *infos); /* ..ComputeRunningProcesses_v3/_v2 */
};
struct nvml *nvml_open_api(const struct nvml_api *api);
struct nvml *nvml_open(void);   /* NULL, silently, when absent or failing */
void nvml_close(struct nvml *n); /* NULL ok */
int nvml_tree_bytes(struct nvml *n, const pid_t *pids, size_t npids, uint64_t *bytes);

#endif
