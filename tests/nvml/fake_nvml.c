/* fake_nvml.c -- a stand-in libnvidia-ml.so for the tests (selected with STAGEBENCH_NVML_LIB)
 *
 * Exports the entry points meter/gpu/nvml.c loads. Built twice:
 *   libnvidia-ml-fake.so     with ..ComputeRunningProcesses_v3 (and _v2); _v3 writes
 *                            32-byte entries, as the R535 driver did
 *   libnvidia-ml-fake-v2.so  with _v2 only (24-byte nvmlProcessInfo_t entries)
 * What the devices hold comes from the directory $FAKE_NVML_DIR: a file named
 * "D.PID" says that process PID uses the bytes written in it on device D ("na"
 * for NVML_VALUE_NOT_AVAILABLE). $FAKE_NVML_DEVICES (default 1) devices.
 * Between the counting call and the filling call the list grows by
 * $FAKE_NVML_GROW entries (default 1; pid 1, 1 GiB each): the caller must
 * leave headroom or retry on NVML_ERROR_INSUFFICIENT_SIZE. $FAKE_NVML_LOG, when set, gets one line per
 * call ("init", "count", "procs D N->M rc", "shutdown").
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUCCESS 0
#define INSUFFICIENT_SIZE 7
#define MAXE 256

struct entry {
	unsigned pid;
	unsigned long long used;
};

static void log_line(const char *line)
{
	const char *path = getenv("FAKE_NVML_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	fprintf(f, "%s\n", line);
	fclose(f);
}

static unsigned devices(void)
{
	const char *d = getenv("FAKE_NVML_DEVICES");
	return d && *d ? (unsigned)atoi(d) : 1;
}

/* The entries of device dev now (the list as the driver sees it). */
static unsigned scan(unsigned dev, struct entry *e, unsigned cap)
{
	const char *dir = getenv("FAKE_NVML_DIR");
	DIR *d = dir ? opendir(dir) : NULL;
	unsigned n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) && n < cap) {
		unsigned dv, pid;
		char path[4096], buf[64];
		if (sscanf(de->d_name, "%u.%u", &dv, &pid) != 2 || dv != dev)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		e[n].pid = pid;
		e[n].used = !strncmp(buf, "na", 2) ? ~0ULL : strtoull(buf, NULL, 10);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

int nvmlInit_v2(void)
{
	log_line("init");
	return SUCCESS;
}

int nvmlShutdown(void)
{
	log_line("shutdown");
	return SUCCESS;
}

const char *nvmlErrorString(int rc)
{
	return rc ? "fake error" : "success";
}

int nvmlDeviceGetCount_v2(unsigned *count)
{
	*count = devices();
	log_line("count");
	return SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **dev)
{
	if (index >= devices())
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*dev = (void *)(size_t)(index + 1);
	return SUCCESS;
}

static unsigned calls[64];

static int procs(void *dev, unsigned *count, void *infos, size_t stride)
{
	unsigned d = (unsigned)(size_t)dev - 1;
	struct entry e[MAXE];
	unsigned n = scan(d, e, MAXE - 1);
	const char *g = getenv("FAKE_NVML_GROW");
	unsigned grow = g && *g ? (unsigned)atoi(g) : 1;
	for (unsigned k = 0; calls[d % 64] > 0 && k < grow && n < MAXE; k++) {
		e[n].pid = 1; /* it grew since the caller counted */
		e[n].used = 1ULL << 30;
		n++;
	}
	calls[d % 64]++;
	unsigned asked = *count;
	char line[96];
	if (asked < n || !infos) {
		*count = n;
		snprintf(line, sizeof(line), "procs %u %u->%u rc %d", d, asked, n, INSUFFICIENT_SIZE);
		log_line(line);
		return n ? INSUFFICIENT_SIZE : SUCCESS;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned char *p = (unsigned char *)infos + i * stride;
		memset(p, 0, stride);
		memcpy(p, &e[i].pid, sizeof(e[i].pid));
		memcpy(p + 8, &e[i].used, sizeof(e[i].used));
	}
	*count = n;
	snprintf(line, sizeof(line), "procs %u %u->%u rc %d", d, asked, n, SUCCESS);
	log_line(line);
	return SUCCESS;
}

int nvmlDeviceGetComputeRunningProcesses_v2(void *dev, unsigned *count, void *infos)
{
	return procs(dev, count, infos, 24);
}

#ifndef FAKE_NVML_NO_V3
int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *count, void *infos)
{
	return procs(dev, count, infos, 32);
}
#endif
