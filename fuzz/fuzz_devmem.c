/* fuzz_devmem.c -- devmem lines from the probe pipe, one per input line, as the recorder takes
 * them: parsed, made samples, kept by device and writer (devmem_table_take), then judged by
 * --max-device as a percentage and as a size. The guard never fails open: when a reading of a
 * device whose size is known is over the percentage cap, or any reading over the size cap,
 * guard_check() stops the run. */
#include "fuzz.h"

#include "common/util.h"
#include "runner/guard.h"
#include "traces/trace.h"

/* guard_check() on the pick of tab under --max-device ARG; whether it stopped. */
static bool stops(const char *arg, const struct devmem_table *tab)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	if (guard_parse_option(&g, GUARD_OPT_MAX_DEVICE, arg, NULL) != 1)
		abort();
	struct guard_readings r;
	memset(&r, 0, sizeof(r));
	r.avail_pct = 90;
	r.since_busy_ns = -1;
	guard_devmem_pick(&g, tab, &r);
	struct guard_state st;
	guard_state_start(&st, &r);
	bool stop = guard_check(&g, &st, &r, NULL);
	guard_opts_release(&g);
	return stop;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct devmem_table tab;
	memset(&tab, 0, sizeof(tab));
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		struct trace_event ev;
		struct trace_sample s;
		struct devmem_extra x;
		const char *why = NULL;
		if (trace_parse_probe_line(p, len, 0, &ev, &why) == 0 &&
		    trace_devmem_sample(&ev, &s, &x) == 0) {
			const struct devmem_reading *d = devmem_table_take(&tab, &ev, &s, &x);
			if (d->bytes != s.devmem || (x.total && d->total != x.total))
				abort(); /* the reading and the size it just gave */
		}
		trace_event_release(&ev);
		if (tab.n > DEVMEM_MAX_READINGS)
			abort();
		p += len + 1;
	}
	bool over_pct = false, over_size = false;
	for (size_t i = 0; i < tab.n; i++) {
		const struct devmem_reading *d = &tab.r[i];
		if (d->total && (double)d->bytes > (double)d->total * 0.8 * (1 + 1e-9) + 1)
			over_pct = true;
		if (d->bytes > (1ull << 30))
			over_size = true;
	}
	if (over_pct && !stops("80%", &tab))
		abort(); /* a device over 80% of its known size, and the guard let it be */
	if (over_size != stops("1G", &tab))
		abort();
	return 0;
}
