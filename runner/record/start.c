/* start.c -- the trace's start record and the recorded command's environment */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/path.h"
#include "../../common/util.h"
#include "../../common/version.h"
#include "../git.h"
#include "record_int.h"
#include "../spawn.h"

char *record_default_trace_name(void)
{
	time_t now = time(NULL);
	struct tm tm;
	char buf[64];
	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "stagebench-%Y%m%d-%H%M%S.trace.jsonl.zst", &tm);
	return xstrdup(buf);
}

/* The start record's keys of this writer: how stage peaks are taken, which
 * stagebench wrote the trace, then the caller's (compare's cache state). */
static void start_fields(const struct run *r, struct trace_fields *f)
{
	if (run_kernel_peaks(r) || r->o->no_peak_reset)
		trace_fields_bool(f, "peak_reset", run_kernel_peaks(r));
	trace_fields_string(f, "peaks", run_kernel_peaks(r) ? "kernel" : "samples");
	trace_fields_object(f, "stagebench");
	trace_fields_string(f, "version", sb_version);
	trace_fields_string(f, "commit", sb_commit);
	trace_fields_end(f);
	trace_fields_append(f, r->o->start_fields);
}

void fill_start(struct run *r, struct trace_start *st, struct host_info *h)
{
	char utc[32];
	utc_iso8601(real_ns(), utc);
	st->format = (char *)TRACE_FORMAT;
	st->utc = xstrdup(utc);
	st->interval = (double)r->o->interval_ns / 1e9;
	st->mode = (char *)r->o->mode;
	st->command = r->argv;
	host_info_get(h);
	st->host_name = h->name[0] ? h->name : NULL;
	st->host_os = h->os;
	st->host_kernel = h->kernel;
	st->host_machine = h->machine;
	st->host_cpus = h->cpus;
	st->host_memory = h->memory;
	st->host_swap = h->swap;
	st->meter_backend = (char *)r->mi->backend;
	st->meter_footprint = (char *)r->mi->footprint;
	start_fields(r, &st->fields);
	st->labels = (struct trace_label *)r->o->labels;
	st->nlabels = r->o->nlabels;
	const char *dir = r->o->commit_dir;
	if (!dir || !*dir)
		dir = r->o->cwd ? r->o->cwd : ".";
	int dirty;
	st->commit = git_head(dir, false, &dirty);
	if (st->commit && dirty >= 0) {
		st->has_dirty = true;
		st->dirty = dirty > 0;
	}
}

/* The command's environment: the caller's env_set, then ours; r->env owns
 * the entries past the caller's. */
void start_build_env(struct run *r)
{
	const struct record_opts *o = r->o;
	size_t nenv = 0, k = 0;
	for (const char **e = o->env_set; e && *e; e++)
		nenv++;
	r->env_own = nenv;
	r->env = xcalloc(nenv + 6, sizeof(*r->env));
	for (const char **e = o->env_set; e && *e; e++)
		r->env[k++] = *e;
	r->env[k++] = xasprintf("STAGEBENCH_FD=%d", SPAWN_PROBE_FD);
	/* the probe reads device memory on the same interval */
	r->env[k++] = xasprintf("STAGEBENCH_INTERVAL=%.6g", (double)o->interval_ns / 1e9);
	if (o->mode)
		r->env[k++] = xasprintf("STAGEBENCH_MODE=%s", o->mode);
	if (o->latents_dir)
		r->env[k++] = xasprintf("STAGEBENCH_LATENTS=%s", o->latents_dir);
	if (o->trace_path) {
		r->trace_abs = path_absolute(o->trace_path);
		r->env[k++] = xasprintf("STAGEBENCH_TRACE=%s", r->trace_abs);
	}
	r->env[k] = NULL;
}
