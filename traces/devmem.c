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

int trace_devmem_sample(const struct trace_event *ev, struct trace_sample *s, uint64_t *total)
{
	memset(s, 0, sizeof(*s));
	*total = 0;
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
	if (o)
		extra_u64(o, "total", total);
	json_decref(o);
	return 0;
}
