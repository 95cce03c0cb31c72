/* schema.c -- the trace schema's tables: event kinds, stopped_by, sample
 * fields (trace.h); releasing a record's strings (below the reader's layers,
 * which all use it) */
#include "reader_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
	[EV_STAGE] = "stage",   [EV_LOAD] = "load",     [EV_RELOAD] = "reload",
	[EV_RELEASE] = "release", [EV_MARK] = "mark",   [EV_LATENT] = "latent",
	[EV_PEAK] = "peak",     [EV_GPU] = "gpu",       [EV_GUARD] = "guard",
	[EV_VERSIONS] = "versions", [EV_MAPPED] = "mapped",
};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

enum event_kind event_kind_from_name(const char *name)
{
	if (!name)
		return EV_OTHER;
	for (size_t i = 1; i < NKINDS; i++)
		if (kind_names[i] && !strcmp(kind_names[i], name))
			return (enum event_kind)i;
	return EV_OTHER;
}

const char *event_kind_name(enum event_kind kind)
{
	if ((size_t)kind >= NKINDS || kind == EV_OTHER)
		return NULL;
	return kind_names[kind];
}

static const char *const stopped_by_names[] = {
	[STOPPED_NONE] = NULL, [STOPPED_GUARD] = "guard", [STOPPED_SIGNAL] = "signal",
	[STOPPED_LOST] = "lost",
	[STOPPED_RUNNING] = "running",
};

const char *stopped_by_name(enum stopped_by by)
{
	if ((size_t)by >= sizeof(stopped_by_names) / sizeof(stopped_by_names[0]))
		return NULL;
	return stopped_by_names[by];
}

bool stopped_by_parse(const char *name, enum stopped_by *by)
{
	for (size_t i = 0; name && i < sizeof(stopped_by_names) / sizeof(stopped_by_names[0]); i++)
		if (stopped_by_names[i] && !strcmp(stopped_by_names[i], name)) {
			*by = (enum stopped_by)i;
			return true;
		}
	return false;
}

const struct sample_field_info trace_sample_fields[SAMPLE_NFIELDS] = {
#define X(UP, key, bit, kind, what) \
	[SFI_##UP] = { #key, sizeof(#key) - 1, SF_##UP, SAMPLE_##kind, \
		       offsetof(struct trace_sample, key), what },
	TRACE_SAMPLE_FIELDS(X)
#undef X
};

const struct sample_field_info *trace_sample_field(const char *key, size_t len)
{
	for (size_t i = 0; i < SAMPLE_NFIELDS; i++)
		if (trace_sample_fields[i].len == len && !memcmp(trace_sample_fields[i].key, key, len))
			return &trace_sample_fields[i];
	return NULL;
}

/* ---- releasing records -------------------------------------------------- */

void trace_event_release(struct trace_event *ev)
{
	if (!ev)
		return;
	free(ev->kind_name);
	free(ev->stage);
	free(ev->name);
	free(ev->note);
	free(ev->sha256);
	free(ev->dtype);
	free(ev->file);
	free(ev->metric);
	free(ev->device);
	free(ev->action);
	free(ev->reason);
	free(ev->extra_json);
	memset(ev, 0, sizeof(*ev));
	ev->ndim = -1;
}

void reader_start_release(struct trace_start *st)
{
	free(st->format);
	free(st->utc);
	free(st->mode);
	if (st->command)
		for (char **a = st->command; *a; a++)
			free(*a);
	free(st->command);
	free(st->host_name);
	free(st->host_os);
	free(st->host_kernel);
	free(st->host_machine);
	free(st->meter_backend);
	free(st->meter_footprint);
	free(st->meter_mapped);
	for (size_t i = 0; i < st->nlabels; i++) {
		free(st->labels[i].key);
		free(st->labels[i].value);
	}
	free(st->labels);
	free(st->commit);
	free(st->extra_json);
	free(st->stop_at);
	memset(st, 0, sizeof(*st));
}

void reader_end_release(struct trace_end *end)
{
	free(end->reason);
	free(end->extra_json);
	memset(end, 0, sizeof(*end));
}
