/* summary.c -- trace_read_summary(): a sink of the layered reader
 * (reader_int.h) that keeps only the samples the stage-window analysis needs
 * (see trace.h), the other records through reader.c's sink
 *
 * Every event time cuts the timeline into segments (also a release's t + 2 s
 * and a peak event's `from`): every window, release interval and kernel-peak
 * interval of the analysis is a run of whole segments, so per segment it is
 * enough to keep its extreme samples (the first largest footprint, the
 * smallest, the last, the largest rss, the first and the largest swap_used,
 * the lowest level, the largest devmem, gpu and mapped, and the same at exactly the segment's start for
 * intervals that end there); `merged` counts the samples dropped beside
 * them. The smallest footprint is read only within 2 s of a release (a
 * window's lowest footprint after its releases), so it is kept only in the
 * segments that start in [r, r + 2 s] of a release r: every release at or
 * before a segment's start is known when its first sample is placed (one
 * that comes later makes the reader fall back, as above). Samples are placed in t order through a reorder queue 10 s deep; an
 * event or sample that comes later than that makes the reader fall back to
 * a full read (trace_read), so the result is always exact. The events are
 * kept as briefs (trace.h, struct trace_brief): a plain one, such as a stage
 * event, in 24 bytes, the others whole.
 */
#include "reader_int.h"

#include <math.h>
#include <stdlib.h>

#define REORDER_S 10.0

enum {
	K_MAXFP, K_MINFP, K_LASTFP, K_MAXRSS, K_FIRSTSWAP, K_MAXSWAP, K_MINLEVEL, K_LASTNOFP,
	K_AT_MAXFP, K_AT_MINFP, K_AT_MAXRSS, K_MAXDEV, K_MAXGPU, K_MAXMAP, K_N
};

struct queued {
	struct trace_sample s;
	size_t seq;
};

struct trace_summary {
	struct trace_keep keep_sink; /* start, events, end, versions: kept whole */
	struct trace_sink sink;
	const struct trace_sink *also; /* every sample, mark and rollback too */
	struct trace *tr;
	struct queued *q;      /* samples not placed yet, sorted by t; q[qhead..qlen) */
	size_t qhead, qlen, qalloc;
	double newest;         /* the largest t seen */
	bool placed_any;
	double frontier;       /* t of the last sample placed */
	double *bounds;        /* segment starts, sorted */
	size_t nbounds, bounds_alloc;
	double *releases;      /* the releases' t, sorted */
	size_t nreleases, releases_alloc;
	double *twice;         /* bounds added more than once, sorted */
	size_t ntwice, twice_alloc;
	/* the segment emitted last: where it ended, its largest footprint and rss */
	bool has_prev;
	double prev_end;
	bool prev_fp, prev_rss;
	uint64_t prev_maxfp, prev_maxrss;
	bool fallback;
	size_t seq;            /* arrival order: stable among equal t */
	size_t nplaced;
	/* the segment being filled */
	size_t seg;            /* bounds at or before its samples */
	double seg_start, seg_end; /* [start, end): a sample there is in it */
	bool need_min;         /* the segment starts within 2 s after a release */
	bool has[K_N];
	struct queued keep[K_N];
	size_t n_fp, n_nofp;
};

static size_t lower_index(const double *v, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* t into the sorted set v[0..n) */
static void set_add(double **v, size_t *n, size_t *alloc, double t)
{
	size_t at = lower_index(*v, *n, t);
	if (at < *n && (*v)[at] == t)
		return;
	ALLOC_GROW(*v, *n + 1, *alloc);
	memmove(*v + at + 1, *v + at, (*n - at) * sizeof(double));
	(*v)[at] = t;
	(*n)++;
}

static bool set_has(const double *v, size_t n, double t)
{
	size_t at = lower_index(v, n, t);
	return at < n && v[at] == t;
}

static bool is_bound(const struct trace_summary *m, double b, size_t *at)
{
	size_t lo = 0, hi = m->nbounds;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->bounds[mid] < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < m->nbounds && m->bounds[lo] == b;
}

static void add_bound(struct trace_summary *m, double b)
{
	size_t at;
	if (!isfinite(b))
		return;
	if (is_bound(m, b, &at)) {
		/* an interval may be [b, b]: b's own samples are its only ones */
		set_add(&m->twice, &m->ntwice, &m->twice_alloc, b);
		return;
	}
	if (m->placed_any && b <= m->frontier) {
		m->fallback = true; /* a sample already placed belongs past it */
		return;
	}
	if (m->placed_any && b < m->seg_end)
		m->seg_end = b; /* later samples from b on go to a new segment */
	ALLOC_GROW(m->bounds, m->nbounds + 1, m->bounds_alloc);
	memmove(m->bounds + at + 1, m->bounds + at, (m->nbounds - at) * sizeof(double));
	m->bounds[at] = b;
	m->nbounds++;
}

/* A release r with r <= start <= r + 2 s (the analysis's own sum): the
 * latest one at or before start has the latest r + 2 s. */
static bool after_release(const struct trace_summary *m, double start)
{
	size_t at = lower_index(m->releases, m->nreleases, start);
	if (at < m->nreleases && m->releases[at] == start)
		return true;
	return at > 0 && start <= m->releases[at - 1] + 2.0;
}

static void summary_event(struct trace_summary *m, const struct trace_event *ev)
{
	if (ev->t > m->newest)
		m->newest = ev->t;
	add_bound(m, ev->t);
	if (ev->kind == EV_RELEASE) {
		add_bound(m, ev->t + 2.0);
		if (isfinite(ev->t))
			set_add(&m->releases, &m->nreleases, &m->releases_alloc, ev->t);
	}
	if (ev->kind == EV_PEAK && ev->has_from)
		add_bound(m, ev->from);
}

/*
 * Samples kept for a reading that others give as well. At exactly the
 * segment's start: an interval that ends there and starts before it holds the
 * whole segment before (its bounds are bounds), so a footprint or rss there
 * no larger than that segment's largest changes no maximum; only an interval
 * [b, b] needs it, which only a bound added twice can be. The first swap_used:
 * another kept sample that comes first among the kept with the same value
 * gives the window the same first value.
 */
static void drop_redundant(struct trace_summary *m)
{
	bool after_prev = m->has_prev && m->prev_end == m->seg_start &&
			  !set_has(m->twice, m->ntwice, m->seg_start);
	if (after_prev && m->has[K_AT_MAXFP] && m->prev_fp &&
	    m->keep[K_AT_MAXFP].s.footprint <= m->prev_maxfp)
		m->has[K_AT_MAXFP] = false;
	if (after_prev && m->has[K_AT_MAXRSS] && m->prev_rss &&
	    m->keep[K_AT_MAXRSS].s.rss <= m->prev_maxrss)
		m->has[K_AT_MAXRSS] = false;
	if (!m->has[K_FIRSTSWAP])
		return;
	const struct queued *first = NULL;
	for (int k = 0; k < K_N; k++)
		if (k != K_FIRSTSWAP && m->has[k] && (m->keep[k].s.fields & SF_SWAP_USED) &&
		    (!first || m->keep[k].seq < first->seq))
			first = &m->keep[k];
	if (first && first->s.swap_used == m->keep[K_FIRSTSWAP].s.swap_used)
		m->has[K_FIRSTSWAP] = false;
}

/* The segment's kept samples into the trace, in t order, counts on the last ones. */
static void emit(struct trace_summary *m)
{
	drop_redundant(m);
	m->has_prev = true;
	m->prev_end = m->seg_end;
	m->prev_fp = m->has[K_MAXFP];
	m->prev_maxfp = m->keep[K_MAXFP].s.footprint;
	m->prev_rss = m->has[K_MAXRSS];
	m->prev_maxrss = m->keep[K_MAXRSS].s.rss;
	struct queued *out[K_N];
	size_t n = 0, kept_fp = 0, kept_nofp = 0;
	for (int k = 0; k < K_N; k++) {
		if (!m->has[k])
			continue;
		bool dup = false;
		for (size_t i = 0; i < n; i++)
			dup |= out[i]->seq == m->keep[k].seq;
		if (!dup)
			out[n++] = &m->keep[k];
	}
	for (size_t i = 1; i < n; i++) /* by placement order, which is t order */
		for (size_t j = i; j > 0 && out[j - 1]->seq > out[j]->seq; j--) {
			struct queued *x = out[j];
			out[j] = out[j - 1];
			out[j - 1] = x;
		}
	for (size_t i = 0; i < n; i++)
		if (out[i]->s.fields & SF_FOOTPRINT)
			kept_fp++;
		else
			kept_nofp++;
	struct trace *tr = m->tr;
	for (size_t i = 0; i < n; i++) {
		struct trace_sample s = out[i]->s;
		if (m->has[K_LASTFP] && out[i]->seq == m->keep[K_LASTFP].seq)
			s.merged = (unsigned)(m->n_fp - kept_fp);
		if (m->has[K_LASTNOFP] && out[i]->seq == m->keep[K_LASTNOFP].seq)
			s.merged = (unsigned)(m->n_nofp - kept_nofp);
		ALLOC_GROW(tr->samples, tr->nsamples + 1, tr->samples_alloc);
		tr->samples[tr->nsamples++] = s;
	}
	memset(m->has, 0, sizeof(m->has));
	m->n_fp = m->n_nofp = 0;
}

#define KEEP_IF(k, cond) \
	do { \
		if (!m->has[k] || (cond)) { \
			m->keep[k] = *q; \
			m->has[k] = true; \
		} \
	} while (0)

static void place(struct trace_summary *m, const struct queued *queued)
{
	struct queued placed = *queued;
	placed.seq = m->nplaced++; /* kept samples are emitted in this (t) order */
	const struct queued *q = &placed;
	const struct trace_sample *s = &q->s;
	if (!m->placed_any || s->t >= m->seg_end) { /* samples come in t order */
		size_t seg;
		is_bound(m, s->t, &seg);
		if (seg < m->nbounds && m->bounds[seg] == s->t)
			seg++; /* bounds at or before t */
		if (m->placed_any)
			emit(m);
		m->seg = seg;
		m->seg_start = seg ? m->bounds[seg - 1] : -INFINITY;
		m->seg_end = seg < m->nbounds ? m->bounds[seg] : INFINITY;
		m->need_min = after_release(m, m->seg_start);
	}
	m->placed_any = true;
	m->frontier = s->t;
	bool at_start = s->t == m->seg_start;
	if (s->fields & SF_FOOTPRINT) {
		m->n_fp++;
		KEEP_IF(K_MAXFP, s->footprint > m->keep[K_MAXFP].s.footprint);
		if (m->need_min)
			KEEP_IF(K_MINFP, s->footprint < m->keep[K_MINFP].s.footprint);
		KEEP_IF(K_LASTFP, true);
		if (at_start) {
			KEEP_IF(K_AT_MAXFP, s->footprint > m->keep[K_AT_MAXFP].s.footprint);
			if (m->need_min)
				KEEP_IF(K_AT_MINFP, s->footprint < m->keep[K_AT_MINFP].s.footprint);
		}
	} else {
		m->n_nofp++;
		KEEP_IF(K_LASTNOFP, true);
	}
	if (s->fields & SF_RSS) {
		KEEP_IF(K_MAXRSS, s->rss > m->keep[K_MAXRSS].s.rss);
		if (at_start)
			KEEP_IF(K_AT_MAXRSS, s->rss > m->keep[K_AT_MAXRSS].s.rss);
	}
	if (s->fields & SF_SWAP_USED) {
		KEEP_IF(K_FIRSTSWAP, false);
		/* the value only is read: the last of the largest, often kept anyway */
		KEEP_IF(K_MAXSWAP, s->swap_used >= m->keep[K_MAXSWAP].s.swap_used);
	}
	if (s->fields & SF_LEVEL)
		KEEP_IF(K_MINLEVEL, s->level < m->keep[K_MINLEVEL].s.level);
	if (s->fields & SF_DEVMEM)
		KEEP_IF(K_MAXDEV, s->devmem > m->keep[K_MAXDEV].s.devmem);
	if (s->fields & SF_GPU)
		KEEP_IF(K_MAXGPU, s->gpu > m->keep[K_MAXGPU].s.gpu);
	if (s->fields & SF_MAPPED)
		KEEP_IF(K_MAXMAP, s->mapped > m->keep[K_MAXMAP].s.mapped);
}

static void summary_sample(struct trace_summary *m, const struct trace_sample *s)
{
	if (m->fallback)
		return;
	if (m->placed_any && s->t < m->frontier) {
		m->fallback = true;
		return;
	}
	if (s->t > m->newest)
		m->newest = s->t;
	/* into the queue, after every sample of the same or an earlier t */
	if (m->qhead && m->qlen == m->qalloc && m->qhead * 2 >= m->qlen) {
		/* half of it placed: move the rest down (amortized O(1) a sample) */
		memmove(m->q, m->q + m->qhead, (m->qlen - m->qhead) * sizeof(*m->q));
		m->qlen -= m->qhead;
		m->qhead = 0;
	}
	ALLOC_GROW(m->q, m->qlen + 1, m->qalloc);
	size_t at = m->qlen;
	while (at > m->qhead && m->q[at - 1].s.t > s->t)
		at--;
	memmove(m->q + at + 1, m->q + at, (m->qlen - at) * sizeof(*m->q));
	m->q[at].s = *s;
	m->q[at].seq = m->seq++;
	m->qlen++;
	while (m->qhead < m->qlen && m->q[m->qhead].s.t < m->newest - REORDER_S && !m->fallback)
		place(m, &m->q[m->qhead++]);
}

/* ---- the sink ------------------------------------------------------------ */

static void sum_start(void *arg, struct trace_start *st)
{
	struct trace_summary *m = arg;
	m->keep_sink.sink.start(&m->keep_sink, st);
}

static void sum_end(void *arg, struct trace_end *end)
{
	struct trace_summary *m = arg;
	m->keep_sink.sink.end(&m->keep_sink, end);
}

static void sum_version(void *arg, const char *name, const char *value)
{
	struct trace_summary *m = arg;
	m->keep_sink.sink.version(&m->keep_sink, name, value);
}

static void sum_sample(void *arg, const struct trace_sample *s)
{
	struct trace_summary *m = arg;
	summary_sample(m, s);
	if (m->also && m->also->sample)
		m->also->sample(m->also->arg, s);
}

static void sum_event(void *arg, struct trace_event *ev)
{
	struct trace_summary *m = arg;
	summary_event(m, ev);
	m->keep_sink.sink.event(&m->keep_sink, ev);
}

static void sum_mark(void *arg)
{
	struct trace_summary *m = arg;
	m->keep_sink.sink.mark(&m->keep_sink);
	if (m->also && m->also->mark)
		m->also->mark(m->also->arg);
}

/* Only on a fault, after which the summary is not used (a full read is). */
static void sum_rollback(void *arg)
{
	struct trace_summary *m = arg;
	m->keep_sink.sink.rollback(&m->keep_sink);
	if (m->also && m->also->rollback)
		m->also->rollback(m->also->arg);
}

int trace_read_summary_also(const char *path, struct trace *tr, const struct trace_sink *also)
{
	struct trace_summary m;
	memset(&m, 0, sizeof(m));
	trace_keep_init(&m.keep_sink, tr, path);
	m.keep_sink.brief = true; /* plain events in 24 bytes (trace.h) */
	m.keep_sink.quiet = true; /* said by trace_read() when it falls back */
	m.sink = (struct trace_sink){ .arg = &m, .start = sum_start, .sample = sum_sample,
				      .event = sum_event, .end = sum_end, .version = sum_version,
				      .mark = sum_mark, .rollback = sum_rollback };
	m.tr = tr;
	m.also = also;
	m.newest = -INFINITY;
	int ret = trace_keep_finish(&m.keep_sink, trace_read_sink(path, &m.sink, TRACE_READ_QUIET));
	if (!ret && !m.fallback) {
		while (m.qhead < m.qlen && !m.fallback)
			place(&m, &m.q[m.qhead++]);
		if (m.placed_any)
			emit(&m);
		double first;
		if (reader_drop_stray_devmem(tr, &first))
			tr->stray_devmem = 1; /* read it all again, said then */
	}
	free(m.q);
	free(m.bounds);
	free(m.releases);
	free(m.twice);
	if (ret || m.fallback || tr->damaged || tr->stray_devmem) {
		/* a fault (reported now), records too far out of order or device
		 * readings outside the run: read it all */
		trace_release(tr);
		return trace_read(path, tr);
	}
	tr->summary = true;
	return 0;
}

int trace_read_summary(const char *path, struct trace *tr)
{
	return trace_read_summary_also(path, tr, NULL);
}
