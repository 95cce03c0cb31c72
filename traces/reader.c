/* reader.c -- trace_read(): a sink of the layered reader (reader_int.h) that
 * keeps every record in a struct trace, sorted by t (for trace_read_summary()
 * the events as briefs, trace.h); every event of a trace; releasing a trace */
#include "reader_int.h"

#include <stdlib.h>

/* ---- the events' strings, one copy of each ------------------------------ */

/* A trace's events repeat a few names (kind, stage, model, metric, device)
 * thousands of times: the kept events share one copy of each, owned by the
 * trace (open addressing, FNV-1a). */
struct trace_strings {
	char **slot;
	size_t cap, n;
};

static size_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static void strings_put(struct trace_strings *ts, char *s)
{
	size_t i = str_hash(s) & (ts->cap - 1);
	while (ts->slot[i])
		i = (i + 1) & (ts->cap - 1);
	ts->slot[i] = s;
	ts->n++;
}

/* The shared copy of s, which it takes (s is freed when one was there). */
static char *intern(struct trace *tr, char *s)
{
	if (!s)
		return NULL;
	struct trace_strings *ts = tr->strings;
	if (!ts)
		ts = tr->strings = xcalloc(1, sizeof(*ts));
	if (ts->cap) {
		for (size_t i = str_hash(s) & (ts->cap - 1); ts->slot[i]; i = (i + 1) & (ts->cap - 1))
			if (!strcmp(ts->slot[i], s)) {
				free(s);
				return ts->slot[i];
			}
	}
	if (2 * (ts->n + 1) > ts->cap) {
		struct trace_strings grown = { xcalloc(ts->cap ? 2 * ts->cap : 64, sizeof(char *)),
					       ts->cap ? 2 * ts->cap : 64, 0 };
		for (size_t i = 0; i < ts->cap; i++)
			if (ts->slot[i])
				strings_put(&grown, ts->slot[i]);
		free(ts->slot);
		*ts = grown;
	}
	strings_put(ts, s);
	return s;
}

static void intern_event(struct trace *tr, struct trace_event *ev)
{
	ev->kind_name = intern(tr, ev->kind_name);
	ev->stage = intern(tr, ev->stage);
	ev->name = intern(tr, ev->name);
	ev->metric = intern(tr, ev->metric);
	ev->device = intern(tr, ev->device);
}

/* A kept event's own strings (the shared ones are the trace's). */
static void kept_event_release(struct trace_event *ev)
{
	ev->kind_name = ev->stage = ev->name = ev->metric = ev->device = NULL;
	trace_event_release(ev);
}

static void strings_release(struct trace *tr)
{
	struct trace_strings *ts = tr->strings;
	if (!ts)
		return;
	for (size_t i = 0; i < ts->cap; i++)
		free(ts->slot[i]);
	free(ts->slot);
	free(ts);
	tr->strings = NULL;
}

/* ---- releasing ------------------------------------------------------------ */

static void records_release(struct trace *tr)
{
	reader_start_release(&tr->start);
	tr->has_start = false;
	free(tr->samples);
	tr->samples = NULL;
	tr->nsamples = tr->samples_alloc = 0;
	for (size_t i = 0; i < tr->nevents; i++)
		kept_event_release(&tr->events[i]);
	free(tr->events);
	free(tr->briefs);
	strings_release(tr);
	tr->events = NULL;
	tr->nevents = tr->events_alloc = 0;
	tr->briefs = NULL;
	tr->nbriefs = tr->briefs_alloc = 0;
	reader_end_release(&tr->end);
	tr->has_end = false;
	for (size_t i = 0; i < tr->nversions; i++) {
		free(tr->versions[i].key);
		free(tr->versions[i].value);
	}
	free(tr->versions);
	tr->versions = NULL;
	tr->nversions = 0;
}

void trace_release(struct trace *tr)
{
	if (!tr)
		return;
	records_release(tr);
	free(tr->path);
	memset(tr, 0, sizeof(*tr));
}

/* ---- sorting: stable, by t (the first member of both record types) ------ */

struct sort_key {
	double t;
	size_t i;
};

static int cmp_key(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static void sort_by_t(void *base, size_t n, size_t size)
{
	char *b = base;
	if (n < 2)
		return;
	struct sort_key *keys = xmalloc(n * sizeof(*keys));
	for (size_t i = 0; i < n; i++) {
		memcpy(&keys[i].t, b + i * size, sizeof(double));
		keys[i].i = i;
	}
	qsort(keys, n, sizeof(*keys), cmp_key);
	char *tmp = xmalloc(n * size);
	for (size_t i = 0; i < n; i++)
		memcpy(tmp + i * size, b + keys[i].i * size, size);
	memcpy(b, tmp, n * size);
	free(tmp);
	free(keys);
}

/* ---- the sink ------------------------------------------------------------ */

static void take_start(void *arg, struct trace_start *st)
{
	struct trace_keep *k = arg;
	k->tr->start = *st;
	k->tr->has_start = true;
}

static void reader_take_sample(void *arg, const struct trace_sample *s)
{
	struct trace_keep *k = arg;
	struct trace *tr = k->tr;
	if (tr->nsamples && s->t < k->last_sample_t)
		k->samples_sorted = false;
	k->last_sample_t = s->t;
	ALLOC_GROW(tr->samples, tr->nsamples + 1, tr->samples_alloc);
	tr->samples[tr->nsamples++] = *s;
}

/* Whether ev has nothing but a known kind, t, stage and line (trace.h). */
static bool plain_event(const struct trace_event *ev)
{
	return ev->kind != EV_OTHER && ev->kind_name && event_kind_name(ev->kind) &&
	       !strcmp(ev->kind_name, event_kind_name(ev->kind)) && !ev->name && !ev->note &&
	       !ev->sha256 && !ev->dtype && !ev->file && ev->ndim == -1 && !ev->metric &&
	       !ev->device && !ev->action && !ev->reason && !ev->fields.n && !ev->extra_json &&
	       !ev->has_nbytes && !ev->has_seconds && !ev->has_bytes && !ev->has_max_bytes &&
	       !ev->has_from && ev->line < TRACE_BRIEF_FULL;
}

static void take_event(void *arg, struct trace_event *ev)
{
	struct trace_keep *k = arg;
	struct trace *tr = k->tr;
	size_t n = k->brief ? tr->nbriefs : tr->nevents;
	if (n && ev->t < k->last_event_t)
		k->events_sorted = false;
	k->last_event_t = ev->t;
	if (k->brief) {
		bool plain = plain_event(ev);
		ALLOC_GROW(tr->briefs, tr->nbriefs + 1, tr->briefs_alloc);
		struct trace_brief *b = &tr->briefs[tr->nbriefs++];
		b->t = ev->t;
		b->stage = NULL;
		b->kind = plain ? (uint32_t)ev->kind : TRACE_BRIEF_FULL;
		b->ref = plain ? (uint32_t)ev->line : (uint32_t)tr->nevents;
		if (plain) {
			b->stage = intern(tr, ev->stage);
			ev->stage = NULL;
			trace_event_release(ev);
			return;
		}
	}
	ALLOC_GROW(tr->events, tr->nevents + 1, tr->events_alloc);
	intern_event(tr, ev);
	tr->events[tr->nevents++] = *ev;
}

static void take_end(void *arg, struct trace_end *end)
{
	struct trace_keep *k = arg;
	k->tr->end = *end;
	k->tr->has_end = true;
}

/* The first value of each name, at most TRACE_MAX_VERSIONS names. */
static void take_version(void *arg, const char *name, const char *value)
{
	struct trace *tr = ((struct trace_keep *)arg)->tr;
	if (tr->nversions >= TRACE_MAX_VERSIONS)
		return;
	for (size_t i = 0; i < tr->nversions; i++)
		if (!strcmp(tr->versions[i].key, name))
			return;
	tr->versions = xrealloc(tr->versions, (tr->nversions + 1) * sizeof(*tr->versions));
	tr->versions[tr->nversions].key = xstrdup(name);
	tr->versions[tr->nversions].value = xstrdup(value);
	tr->nversions++;
}

static void take_mark(void *arg)
{
	struct trace_keep *k = arg;
	k->mark_samples = k->tr->nsamples;
	k->mark_events = k->tr->nevents;
	k->mark_briefs = k->tr->nbriefs;
	k->mark_start = k->tr->has_start;
	k->mark_end = k->tr->has_end;
}

/* Drop the records read after the mark (those of a frame cut short). The
 * versions stay: they come only from a start record and versions events,
 * and a name once seen keeps its first value. */
static void take_rollback(void *arg)
{
	struct trace_keep *k = arg;
	struct trace *tr = k->tr;
	tr->nsamples = k->mark_samples;
	while (tr->nevents > k->mark_events)
		kept_event_release(&tr->events[--tr->nevents]);
	tr->nbriefs = k->mark_briefs;
	if (tr->has_end && !k->mark_end) {
		reader_end_release(&tr->end);
		tr->has_end = false;
	}
	if (tr->has_start && !k->mark_start) {
		reader_start_release(&tr->start);
		tr->has_start = false;
	}
}

void trace_keep_init(struct trace_keep *k, struct trace *tr, const char *path)
{
	memset(k, 0, sizeof(*k));
	memset(tr, 0, sizeof(*tr));
	tr->path = xstrdup(path);
	k->tr = tr;
	k->samples_sorted = k->events_sorted = true;
	k->sink = (struct trace_sink){ .arg = k, .start = take_start, .sample = reader_take_sample,
				       .event = take_event, .end = take_end, .version = take_version,
				       .mark = take_mark, .rollback = take_rollback };
}

int trace_keep_finish(struct trace_keep *k, int ret)
{
	struct trace *tr = k->tr;
	if (ret == -2) { /* unknown format: refused with no records */
		records_release(tr);
		tr->damaged = true;
		return -1;
	}
	if (!k->samples_sorted)
		sort_by_t(tr->samples, tr->nsamples, sizeof(*tr->samples));
	if (!k->events_sorted) {
		/* the events kept whole come in the briefs' order: both sorts
		 * are stable */
		sort_by_t(tr->events, tr->nevents, sizeof(*tr->events));
		sort_by_t(tr->briefs, tr->nbriefs, sizeof(*tr->briefs));
		uint32_t whole = 0;
		for (size_t i = 0; i < tr->nbriefs; i++)
			if (tr->briefs[i].kind == TRACE_BRIEF_FULL)
				tr->briefs[i].ref = whole++;
	}
	if (ret)
		tr->damaged = true;
	return ret ? -1 : 0;
}

/* ---- every event, a summary's too ------------------------------------------ */

size_t trace_nevents(const struct trace *tr)
{
	return tr->briefs ? tr->nbriefs : tr->nevents;
}

const struct trace_event *trace_event_at(const struct trace *tr, size_t i, struct trace_event *tmp)
{
	if (!tr->briefs)
		return &tr->events[i];
	const struct trace_brief *b = &tr->briefs[i];
	if (b->kind == TRACE_BRIEF_FULL)
		return &tr->events[b->ref];
	tmp->t = b->t;
	tmp->kind = (enum event_kind)b->kind;
	tmp->kind_name = (char *)event_kind_name(tmp->kind);
	tmp->stage = (char *)b->stage;
	tmp->line = b->ref;
	return tmp;
}

/* ---- entry points ---------------------------------------------------------- */

int trace_read_mem(const char *name, const void *data, size_t len, struct trace *tr)
{
	struct trace_keep k;
	trace_keep_init(&k, tr, name);
	return trace_keep_finish(&k, trace_read_mem_sink(name, data, len, &k.sink, 0));
}

int trace_read(const char *path, struct trace *tr)
{
	struct trace_keep k;
	trace_keep_init(&k, tr, path);
	return trace_keep_finish(&k, trace_read_sink(path, &k.sink, 0));
}
