/* meter.c -- the public meter interface: the backends and GPU meters as lists, dispatch */
#include "meter_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* Every GPU meter, tried in order; each that opens is sampled. */
static const struct gpu_meter *const gpu_meters[] = {
	&nvml_gpu_meter,
};

static void open_gpu_meters(struct meter *m)
{
	for (size_t i = 0; i < sizeof(gpu_meters) / sizeof(gpu_meters[0]); i++) {
		void *h = m->ngpu < METER_MAX_GPU ? gpu_meters[i]->open() : NULL;
		if (!h)
			continue;
		m->gpu[m->ngpu] = gpu_meters[i];
		m->gpu_h[m->ngpu++] = h;
	}
	if (m->ngpu) {
		m->info.gpu = true;
		m->info.fields |= SF_GPU;
	}
}

static int open_platform(struct meter *m, const char *arg)
{
	return meter_platform_init(m);
}

static int open_fake(struct meter *m, const char *arg)
{
	return meter_fake_init(m, arg);
}

/* The backends a spec names. The OS backends are all listed: the build holds
 * the one of its system (meter_platform_init(), platform/<os>/), and naming
 * another says it is not available here. */
static const struct meter_kind {
	const char *name; /* the spec's word; ending in ':', a prefix to an argument */
	int (*open)(struct meter *m, const char *arg);
	bool os;          /* an OS backend by name: it must be the one built */
	bool gpu;         /* the GPU meters are opened beside it */
} meter_kinds[] = {
	{ "default", open_platform, false, true },
	{ "linux", open_platform, true, true },
	{ "macos", open_platform, true, true },
	{ "fake:", open_fake, false, false },
};

static const struct meter_kind *meter_kind_of(const char *spec, const char **arg)
{
	for (size_t i = 0; i < sizeof(meter_kinds) / sizeof(meter_kinds[0]); i++) {
		const char *name = meter_kinds[i].name;
		size_t n = strlen(name);
		if (name[n - 1] == ':' ? !strncmp(spec, name, n) : !strcmp(spec, name)) {
			*arg = spec + n;
			return &meter_kinds[i];
		}
	}
	return NULL;
}

struct meter *meter_new(const char *spec)
{
	const char *arg = NULL;
	const struct meter_kind *k = meter_kind_of(spec && *spec ? spec : "default", &arg);
	if (!k) {
		error("unknown meter '%s' (expected nothing, 'default' or 'fake:FILE')", spec);
		return NULL;
	}
	struct meter *m = xcalloc(1, sizeof(*m));
	int rc = k->open(m, arg);
	if (!rc && k->os && strcmp(k->name, m->info.backend))
		rc = error("meter backend '%s' is not available here (this is %s)", spec,
			   m->info.backend);
	if (!rc && k->gpu)
		open_gpu_meters(m);
	if (rc) {
		meter_free(m);
		return NULL;
	}
	return m;
}

void meter_free(struct meter *m)
{
	if (!m)
		return;
	if (m->be && m->be->free)
		m->be->free(m);
	for (size_t i = 0; i < m->ngpu; i++)
		m->gpu[i]->close(m->gpu_h[i]);
	free(m);
}

const struct meter_info *meter_info(const struct meter *m)
{
	return &m->info;
}

void meter_track(struct meter *m, pid_t root)
{
	m->be->track(m, root);
}

void meter_ignore(struct meter *m, pid_t pid)
{
	if (m->be->ignore)
		m->be->ignore(m, pid);
}

int meter_enclose(struct meter *m)
{
	return m->be->enclose ? m->be->enclose(m) : -1;
}

const pid_t *meter_pids(struct meter *m, size_t *n)
{
	return m->be->pids(m, n);
}

int meter_sample(struct meter *m, struct trace_sample *s)
{
	double t = s->t;
	memset(s, 0, sizeof(*s));
	s->t = t;
	return m->be->sample(m, s);
}

int meter_system(struct meter *m, struct meter_system *sys)
{
	memset(sys, 0, sizeof(*sys));
	return m->be->system(m, sys);
}

int meter_peak_reset(struct meter *m)
{
	if (!m->info.peak_metric || !m->be->peak_reset)
		return -1;
	return m->be->peak_reset(m);
}

int meter_peak_read(struct meter *m, uint64_t *bytes)
{
	if (!m->info.peak_metric || !m->be->peak_read)
		return -1;
	return m->be->peak_read(m, bytes);
}

int meter_peak_exited(struct meter *m, pid_t pid, uint64_t maxrss)
{
	if (!m->info.peak_metric || !m->be->peak_exited)
		return -1;
	return m->be->peak_exited(m, pid, maxrss);
}

int meter_mapped_file(struct meter *m, const char **path, uint64_t *size)
{
	return m->be->mapped_file ? m->be->mapped_file(m, path, size) : 0;
}

int meter_gpu(struct meter *m, uint64_t *bytes)
{
	size_t n;
	const pid_t *pids;
	uint64_t sum = 0;

	if (m->be->gpu)
		return m->be->gpu(m, bytes);
	if (!m->ngpu)
		return -1;
	pids = meter_pids(m, &n);
	for (size_t i = 0; i < m->ngpu; i++) {
		uint64_t b;
		if (m->gpu[i]->tree_bytes(m->gpu_h[i], pids, n, &b))
			return -1;
		sum += b;
	}
	*bytes = sum;
	return 0;
}
