/* nvml.c -- GPU memory of the process tree through NVML, dlopen'd at run time */
#include "meter/meter_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/*
 * Never linked: libnvidia-ml.so.1 exists only where a driver is installed.
 * Process lists are read into buffers of NVML_ENTRY_ALLOC (32) bytes per
 * entry: nvmlProcessInfo_t is 24 bytes, but the R535 driver wrote 32-byte
 * entries through the _v3 call. The buffer is filled with a pattern before
 * each call and the stride inferred from how far the library wrote.
 * usedGpuMemory sits at offset 8 in both layouts.
 */

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_MAX_DEVICES 64

struct nvml {
	void *lib;
	struct nvml_api api;
	void *dev[NVML_MAX_DEVICES];
	unsigned ndev;
	unsigned char *buf;
	size_t cap; /* entries */
	bool warned;
};

size_t nvml_infer_stride(const unsigned char *buf, size_t cap, unsigned count)
{
	size_t end = 0;
	if (!count)
		return 24;
	for (size_t i = cap * NVML_ENTRY_ALLOC; i > 0; i--) {
		if (buf[i - 1] != NVML_PATTERN) {
			end = i;
			break;
		}
	}
	return end > (size_t)count * 24 ? 32 : 24;
}

uint64_t nvml_sum_tree(const unsigned char *buf, unsigned count, size_t stride,
		       const pid_t *pids, size_t npids)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < count; i++) {
		const unsigned char *e = buf + (size_t)i * stride;
		unsigned int pid;
		unsigned long long used;
		memcpy(&pid, e, sizeof(pid));
		memcpy(&used, e + 8, sizeof(used));
		if (used == ~0ULL) /* NVML_VALUE_NOT_AVAILABLE */
			continue;
		for (size_t k = 0; k < npids; k++) {
			if ((pid_t)pid == pids[k]) {
				sum += used;
				break;
			}
		}
	}
	return sum;
}

struct nvml *nvml_open_api(const struct nvml_api *api)
{
	struct nvml *n;
	unsigned count = 0;

	if (api->init() != NVML_SUCCESS)
		return NULL;
	if (api->get_count(&count) != NVML_SUCCESS || !count) {
		api->shutdown();
		return NULL;
	}
	n = xcalloc(1, sizeof(*n));
	n->api = *api;
	if (count > NVML_MAX_DEVICES)
		count = NVML_MAX_DEVICES;
	for (unsigned i = 0; i < count; i++)
		if (api->get_handle(i, &n->dev[n->ndev]) == NVML_SUCCESS)
			n->ndev++;
	if (!n->ndev) {
		nvml_close(n);
		return NULL;
	}
	return n;
}

struct nvml *nvml_open(void)
{
	struct nvml_api api;
	struct nvml *n;
	/* STAGEBENCH_NVML_LIB: the tests' fake library (docs/platforms.md). */
	const char *path = getenv("STAGEBENCH_NVML_LIB");
	void *lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return NULL;
	/* dlsym returns void *; go through memcpy to stay within ISO C. */
#define SYM(field, name)                                                \
	do {                                                            \
		void *s_ = dlsym(lib, name);                            \
		memcpy(&api.field, &s_, sizeof(s_));                    \
	} while (0)
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(get_count, "nvmlDeviceGetCount_v2");
	SYM(get_handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(get_procs, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!api.get_procs)
		SYM(get_procs, "nvmlDeviceGetComputeRunningProcesses_v2");
#undef SYM
	if (!api.init || !api.shutdown || !api.get_count || !api.get_handle || !api.get_procs) {
		dlclose(lib);
		return NULL;
	}
	n = nvml_open_api(&api);
	if (!n) {
		dlclose(lib);
		return NULL;
	}
	n->lib = lib;
	return n;
}

void nvml_close(struct nvml *n)
{
	if (!n)
		return;
	n->api.shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n->buf);
	free(n);
}

static void grow(struct nvml *n, size_t cap)
{
	if (cap <= n->cap)
		return;
	n->buf = xrealloc(n->buf, cap * NVML_ENTRY_ALLOC);
	n->cap = cap;
}

/* The tree's share of one device. */
static int device_bytes(struct nvml *n, void *dev, const pid_t *pids, size_t npids,
			uint64_t *bytes)
{
	unsigned count = 0;
	int rc = n->api.get_procs(dev, &count, NULL);
	*bytes = 0;
	if (rc == NVML_SUCCESS && !count)
		return 0;
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE)
		return rc;
	/* Headroom: the list can grow between the two calls. */
	for (int attempt = 0; attempt < 4; attempt++) {
		size_t want = (size_t)count + 8 + (size_t)count / 2;
		grow(n, want);
		memset(n->buf, NVML_PATTERN, n->cap * NVML_ENTRY_ALLOC);
		count = (unsigned)n->cap;
		rc = n->api.get_procs(dev, &count, n->buf);
		if (rc == NVML_ERROR_INSUFFICIENT_SIZE)
			continue;
		if (rc != NVML_SUCCESS)
			return rc;
		if (count > n->cap)
			count = (unsigned)n->cap;
		size_t stride = nvml_infer_stride(n->buf, n->cap, count);
		*bytes = nvml_sum_tree(n->buf, count, stride, pids, npids);
		return 0;
	}
	return rc;
}

int nvml_tree_bytes(struct nvml *n, const pid_t *pids, size_t npids, uint64_t *bytes)
{
	uint64_t sum = 0;
	if (!n)
		return -1;
	for (unsigned d = 0; d < n->ndev; d++) {
		uint64_t b;
		int rc = device_bytes(n, n->dev[d], pids, npids, &b);
		if (rc) {
			if (!n->warned)
				warning("cannot read GPU %u processes through NVML (error %d); "
					"GPU figures are missing", d, rc);
			n->warned = true;
			return -1;
		}
		sum += b;
	}
	*bytes = sum;
	return 0;
}

static void *gpu_open(void)
{
	return nvml_open();
}

static int gpu_tree_bytes(void *h, const pid_t *pids, size_t npids, uint64_t *bytes)
{
	return nvml_tree_bytes(h, pids, npids, bytes);
}

static void gpu_close(void *h)
{
	nvml_close(h);
}

const struct gpu_meter nvml_gpu_meter = { "nvml", gpu_open, gpu_tree_bytes, gpu_close };
