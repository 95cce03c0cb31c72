/* meter.c -- the public meter interface: backend choice and dispatch */
#include "meter_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct meter *meter_new(const char *spec)
{
	struct meter *m = xcalloc(1, sizeof(*m));
	int rc;

	if (spec && str_starts_with(spec, "fake:")) {
		rc = meter_fake_init(m, spec + 5);
	} else if (!spec || !*spec || !strcmp(spec, "default") || !strcmp(spec, "linux") ||
		   !strcmp(spec, "macos")) {
		rc = meter_platform_init(m);
		if (!rc && spec && *spec && strcmp(spec, "default") &&
		    strcmp(spec, m->info.backend)) {
			rc = error("meter backend '%s' is not available here (this is %s)",
				   spec, m->info.backend);
		}
		if (!rc) {
			m->nvml = nvml_open();
			if (m->nvml) {
				m->info.gpu = true;
				m->info.fields |= SF_GPU;
			}
		}
	} else {
		rc = error("unknown meter '%s' (expected nothing, 'default' or 'fake:FILE')", spec);
	}
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
	nvml_close(m->nvml);
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

int meter_gpu(struct meter *m, uint64_t *bytes)
{
	size_t n;
	const pid_t *pids;

	if (m->be->gpu)
		return m->be->gpu(m, bytes);
	if (!m->nvml)
		return -1;
	pids = meter_pids(m, &n);
	return nvml_tree_bytes(m->nvml, pids, n, bytes);
}
