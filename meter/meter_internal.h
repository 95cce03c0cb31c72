/* meter_internal.h -- what the meter backends share: the handle, the GPU meter
 * list, and the process table (platform/proctab.h)
 *
 * Not for use outside meter/ and platform/ except by the unit tests.
 *
 * A backend fills a struct meter_backend and sets m->be, m->priv and m->info
 * in its init function: meter_platform_init() (platform/linux/meter.c, or
 * platform/darwin/sys.c, whichever the build compiles) or meter_fake_init()
 * (meter/fake.c). meter.c owns the public functions and dispatches through
 * m->be. Each backend's per-process entry extends struct mproc (its first
 * member), as htop's LinuxProcess extends Process; the OS-specific parts are
 * declared in platform/linux/linux.h and platform/darwin/darwin.h.
 * Adding a GPU meter: a struct gpu_meter in meter/gpu/, one line in meter.c's list.
 */
#ifndef SB_METER_INTERNAL_H
#define SB_METER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "meter.h"
#include "platform/proctab.h"

struct meter_backend {
	void (*track)(struct meter *m, pid_t root);
	const pid_t *(*pids)(struct meter *m, size_t *n);
	int (*sample)(struct meter *m, struct trace_sample *s);
	int (*system)(struct meter *m, struct meter_system *sys);
	int (*peak_reset)(struct meter *m);                    /* NULL: no exact peaks */
	int (*peak_read)(struct meter *m, uint64_t *bytes);    /* NULL: no exact peaks */
	int (*peak_exited)(struct meter *m, pid_t pid, uint64_t maxrss); /* NULL: no rule */
	int (*gpu)(struct meter *m, uint64_t *bytes);          /* NULL: the GPU meters */
	void (*ignore)(struct meter *m, pid_t pid);            /* NULL: nothing to do */
	int (*mapped_file)(struct meter *m, const char **path, uint64_t *size); /* NULL: none */
	int (*enclose)(struct meter *m);                       /* NULL: no whole-tree reader */
	void (*free)(struct meter *m);                         /* frees m->priv */
};

/* A GPU memory source for the tree's pids. open() returns a handle, or NULL
 * (silently) when the library or device is absent. */
struct gpu_meter {
	const char *name; /* "nvml" */
	void *(*open)(void);
	int (*tree_bytes)(void *h, const pid_t *pids, size_t npids, uint64_t *bytes);
	void (*close)(void *h);
};
extern const struct gpu_meter nvml_gpu_meter; /* meter/gpu/nvml.c */

#define METER_MAX_GPU 4
struct meter {
	const struct meter_backend *be;
	void *priv;
	struct meter_info info;
	const struct gpu_meter *gpu[METER_MAX_GPU]; /* the GPU meters that opened */
	void *gpu_h[METER_MAX_GPU];
	size_t ngpu;
};

int meter_platform_init(struct meter *m);                 /* platform/<os>/ */
int meter_fake_init(struct meter *m, const char *path);   /* fake.c */

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
