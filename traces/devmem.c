/* devmem.c -- a probe's `devmem` line (device memory read on the interval) as a sample (trace.h) */
#include "reader_int.h"

#include <jansson.h>

static bool extra_u64(const json_t *o, const char *key, uint64_t *v)
{
	const json_t *j = json_object_get(o, key);
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

int trace_devmem_sample(const struct trace_event *ev, struct trace_sample *s,
			struct devmem_extra *x)
{
	memset(s, 0, sizeof(*s));
	x->total = 0;
	x->pid = -1;
	if (ev->kind != EV_OTHER || !ev->kind_name || strcmp(ev->kind_name, "devmem") || !ev->has_bytes)
		return -1;
	s->t = ev->t;
	s->devmem = ev->bytes;
	s->fields = SF_DEVMEM;
	if (!ev->extra_json)
		return 0;
	size_t n = strlen(ev->extra_json);
	char *obj = xmalloc(n + 3);
	obj[0] = '{';
	memcpy(obj + 1, ev->extra_json, n);
	obj[n + 1] = '}';
	obj[n + 2] = '\0';
	json_t *o = json_loads(obj, 0, NULL);
	free(obj);
	if (o && extra_u64(o, "allocated", &s->devmem_allocated))
		s->fields |= SF_DEVMEM_ALLOCATED;
	uint64_t pid;
	if (o) {
		extra_u64(o, "total", &x->total);
		if (extra_u64(o, "pid", &pid) && pid <= INT32_MAX)
			x->pid = (int64_t)pid;
	}
	json_decref(o);
	return 0;
}

/* ---- the readings of a run, by device and writer -------------------------- */

static struct devmem_reading *find_or_add(struct devmem_table *tab, const char *device,
					  int64_t pid)
{
	struct devmem_reading *least = NULL;
	for (size_t i = 0; i < tab->n; i++) {
		struct devmem_reading *d = &tab->r[i];
		if (d->pid == pid && !strcmp(d->device, device))
			return d;
		if (!least || d->bytes < least->bytes)
			least = d;
	}
	struct devmem_reading *d = tab->n < DEVMEM_MAX_READINGS ? &tab->r[tab->n++] : least;
	if (d == least)
		tab->evicted++;
	memset(d, 0, sizeof(*d));
	snprintf(d->device, sizeof(d->device), "%s", device);
	d->pid = pid;
	return d;
}

const struct devmem_reading *devmem_table_take(struct devmem_table *tab, const struct trace_event *ev,
					       const struct trace_sample *s,
					       const struct devmem_extra *x)
{
	/* names as kept: cut to the table's width, so that a long name finds itself */
	char device[sizeof(tab->r[0].device)];
	snprintf(device, sizeof(device), "%s", ev->device && ev->device[0] ? ev->device : "?");
	struct devmem_reading *d = find_or_add(tab, device, x->pid);
	uint64_t total = x->total;
	for (size_t i = 0; !total && i < tab->n; i++)
		if (!strcmp(tab->r[i].device, device))
			total = tab->r[i].total; /* the size known before */
	d->bytes = s->devmem;
	d->t = s->t;
	d->seq = ++tab->seq;
	/* every reading of the device judged against its last size */
	for (size_t i = 0; i < tab->n; i++)
		if (!strcmp(tab->r[i].device, device))
			tab->r[i].total = total;
	return d;
}
