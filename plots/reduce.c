/* reduce.c -- plot_read_trace(): a trace read for the charts in one pass, its
 * samples reduced to what a chart can show while they are read
 *
 * A sink of the trace reader (traces/sink.h) beside the summary the analysis
 * needs (trace_read_summary_also). Each series keeps its points as they are
 * up to RAW_MAX of them (a chart of such a trace is what it was when the
 * whole trace was read); past that, on a grid of NBUCKETS time buckets, each
 * bucket's lowest and highest point (with their own times) and the series'
 * last point: every peak is kept, in memory that does not grow with the
 * trace. plot_gb() is here, below every file of plots/ that uses it. The grid starts over the time the raw points span, twice as wide,
 * and doubles its buckets' width (merging pairs) whenever a point falls
 * outside it, on either side: samples need not come in time order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../traces/sink.h"
#include "../traces/trace.h"
#include "plot.h"

double plot_gb(uint64_t bytes)
{
	return (double)bytes / (double)(1ull << 30);
}

#define RAW_MAX 65536
#define NBUCKETS 4096

struct bucket {
	bool used;
	double tmin, vmin, tmax, vmax;
};

struct reducer {
	double *t, *v; /* the raw points, in arrival order */
	size_t n, alloc;
	bool sorted;
	struct bucket *b; /* NBUCKETS; NULL while raw */
	double origin, width;
	bool has_last;
	double tlast, vlast; /* the point of the largest t (the latest of equal ones) */
	bool has_first;
	double tfirst, vfirst; /* of the smallest t (the earliest of equal ones) */
};

struct plot_reduce {
	struct trace_sink sink;
	struct reducer fp, gpu, dev, swap, mapped;
	bool any;
	double t_first, t_last;
	bool rolled_back;
};

static void bucket_merge(struct bucket *into, const struct bucket *a, const struct bucket *b)
{
	*into = *a;
	if (!b->used)
		return;
	if (!into->used) {
		*into = *b;
		return;
	}
	if (b->vmin < into->vmin) {
		into->vmin = b->vmin;
		into->tmin = b->tmin;
	}
	if (b->vmax > into->vmax) {
		into->vmax = b->vmax;
		into->tmax = b->tmax;
	}
}

/* Double the width, the grid keeping its origin (right) or ending where it
 * did (left: t lies before the origin). */
static void grid_grow(struct reducer *r, bool left)
{
	struct bucket half[NBUCKETS / 2];
	for (size_t i = 0; i < NBUCKETS / 2; i++)
		bucket_merge(&half[i], &r->b[2 * i], &r->b[2 * i + 1]);
	memset(r->b, 0, NBUCKETS * sizeof(*r->b));
	memcpy(r->b + (left ? NBUCKETS / 2 : 0), half, sizeof(half));
	if (left)
		r->origin -= NBUCKETS * r->width;
	r->width *= 2;
}

static void grid_add(struct reducer *r, double t, double v)
{
	while (t < r->origin)
		grid_grow(r, true);
	while (t >= r->origin + NBUCKETS * r->width)
		grid_grow(r, false);
	size_t i = (size_t)((t - r->origin) / r->width);
	if (i >= NBUCKETS)
		i = NBUCKETS - 1;
	struct bucket *b = &r->b[i];
	if (!b->used) {
		*b = (struct bucket){ true, t, v, t, v };
		return;
	}
	if (v < b->vmin || (v == b->vmin && t < b->tmin)) {
		b->vmin = v;
		b->tmin = t;
	}
	if (v > b->vmax || (v == b->vmax && t < b->tmax)) {
		b->vmax = v;
		b->tmax = t;
	}
}

/* Too many raw points: onto a grid over twice their span. */
static void to_grid(struct reducer *r)
{
	double lo = r->t[0], hi = r->t[0];
	for (size_t i = 1; i < r->n; i++) {
		lo = fmin(lo, r->t[i]);
		hi = fmax(hi, r->t[i]);
	}
	r->b = xcalloc(NBUCKETS, sizeof(*r->b));
	r->origin = lo;
	r->width = hi > lo ? 2 * (hi - lo) / NBUCKETS : 1e-3;
	for (size_t i = 0; i < r->n; i++)
		grid_add(r, r->t[i], r->v[i]);
	free(r->t);
	free(r->v);
	r->t = r->v = NULL;
	r->n = r->alloc = 0;
}

static void reducer_add(struct reducer *r, double t, double v)
{
	if (!r->has_last || t >= r->tlast) {
		r->tlast = t;
		r->vlast = v;
		r->has_last = true;
	}
	if (!r->has_first || t < r->tfirst) {
		r->tfirst = t;
		r->vfirst = v;
		r->has_first = true;
	}
	if (r->b) {
		grid_add(r, t, v);
		return;
	}
	if (!r->n)
		r->sorted = true;
	else if (t < r->t[r->n - 1])
		r->sorted = false;
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? r->alloc * 2 : 256;
		r->t = xrealloc(r->t, r->alloc * sizeof(*r->t));
		r->v = xrealloc(r->v, r->alloc * sizeof(*r->v));
	}
	r->t[r->n] = t;
	r->v[r->n++] = v;
	if (r->n > RAW_MAX)
		to_grid(r);
}

static void reducer_release(struct reducer *r)
{
	free(r->t);
	free(r->v);
	free(r->b);
	memset(r, 0, sizeof(*r));
}

static void out_add(struct plot_series *s, size_t *alloc, double t, double v)
{
	if (s->n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 256;
		s->t = xrealloc(s->t, *alloc * sizeof(*s->t));
		s->gb = xrealloc(s->gb, *alloc * sizeof(*s->gb));
	}
	s->t[s->n] = t;
	s->gb[s->n++] = v;
}

struct tpoint {
	double t, v;
	size_t i;
};

static int cmp_tpoint(const void *a, const void *b)
{
	const struct tpoint *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The raw points in time order (stable), as trace_read() sorts samples. */
static void raw_out(const struct reducer *r, struct plot_series *s, size_t *alloc)
{
	struct tpoint *p = xmalloc((r->n ? r->n : 1) * sizeof(*p));
	for (size_t i = 0; i < r->n; i++)
		p[i] = (struct tpoint){ r->t[i], r->v[i], i };
	if (!r->sorted)
		qsort(p, r->n, sizeof(*p), cmp_tpoint);
	for (size_t i = 0; i < r->n; i++)
		out_add(s, alloc, p[i].t, p[i].v);
	free(p);
}

/* Each bucket's low and high point in time order, then the last point. */
static void grid_out(const struct reducer *r, struct plot_series *s, size_t *alloc)
{
	for (size_t i = 0; i < NBUCKETS; i++) {
		const struct bucket *b = &r->b[i];
		if (!b->used)
			continue;
		bool min_first = b->tmin <= b->tmax;
		out_add(s, alloc, min_first ? b->tmin : b->tmax, min_first ? b->vmin : b->vmax);
		if (b->tmin != b->tmax || b->vmin != b->vmax)
			out_add(s, alloc, min_first ? b->tmax : b->tmin, min_first ? b->vmax : b->vmin);
	}
	if (s->n && (s->t[s->n - 1] != r->tlast || s->gb[s->n - 1] != r->vlast))
		out_add(s, alloc, r->tlast, r->vlast);
}

/* The series drawn; `base` is taken off every value. */
static void reducer_out(const struct reducer *r, struct plot_series *s, double base)
{
	size_t alloc = 0;
	memset(s, 0, sizeof(*s));
	if (r->b)
		grid_out(r, s, &alloc);
	else
		raw_out(r, s, &alloc);
	if (base != 0)
		for (size_t i = 0; i < s->n; i++)
			s->gb[i] -= base;
}

static void reduce_sample(void *arg, const struct trace_sample *s)
{
	struct plot_reduce *p = arg;
	if (!p->any || s->t < p->t_first)
		p->t_first = s->t;
	if (!p->any || s->t > p->t_last)
		p->t_last = s->t;
	p->any = true;
	if (s->fields & SF_FOOTPRINT)
		reducer_add(&p->fp, s->t, plot_gb(s->footprint));
	if (s->fields & SF_GPU)
		reducer_add(&p->gpu, s->t, plot_gb(s->gpu));
	if (s->fields & SF_DEVMEM)
		reducer_add(&p->dev, s->t, plot_gb(s->devmem));
	if (s->fields & SF_SWAP_USED)
		reducer_add(&p->swap, s->t, plot_gb(s->swap_used));
	if (s->fields & SF_MAPPED)
		reducer_add(&p->mapped, s->t, plot_gb(s->mapped));
}

static void reduce_rollback(void *arg)
{
	((struct plot_reduce *)arg)->rolled_back = true;
}

static void reduce_release(struct plot_reduce *p)
{
	reducer_release(&p->fp);
	reducer_release(&p->gpu);
	reducer_release(&p->dev);
	reducer_release(&p->swap);
	reducer_release(&p->mapped);
}

/* The series of *p into *ps. */
static void reduce_out(const struct plot_reduce *p, struct plot_samples *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->any = p->any;
	ps->t_first = p->t_first;
	ps->t_last = p->t_last;
	reducer_out(&p->fp, &ps->footprint, 0);
	reducer_out(&p->gpu, &ps->gpu, 0);
	reducer_out(&p->dev, &ps->dev, 0);
	reducer_out(&p->mapped, &ps->mapped, 0);
	/* swap: the growth since the first sample that has it */
	reducer_out(&p->swap, &ps->swap, p->swap.has_first ? p->swap.vfirst : 0);
}

int plot_read_trace(const char *path, struct trace *tr, struct plot_samples *ps)
{
	struct plot_reduce p;
	memset(&p, 0, sizeof(p));
	p.sink = (struct trace_sink){ .arg = &p, .sample = reduce_sample,
				      .rollback = reduce_rollback };
	int ret = trace_read_summary_also(path, tr, &p.sink);
	if (!tr->summary || p.rolled_back) {
		/* the summary read it all again (a fault, samples far out of order):
		 * the samples are those of that read */
		reduce_release(&p);
		memset(&p, 0, sizeof(p));
		for (size_t i = 0; i < tr->nsamples; i++)
			reduce_sample(&p, &tr->samples[i]);
	}
	reduce_out(&p, ps);
	reduce_release(&p);
	return ret;
}

int plot_samples_of(const struct trace_sample *samples, size_t n, struct plot_samples *ps)
{
	struct plot_reduce p;
	memset(&p, 0, sizeof(p));
	for (size_t i = 0; i < n; i++)
		reduce_sample(&p, &samples[i]);
	reduce_out(&p, ps);
	reduce_release(&p);
	return 0;
}

static void series_free(struct plot_series *s)
{
	free(s->t);
	free(s->gb);
	memset(s, 0, sizeof(*s));
}

void plot_samples_release(struct plot_samples *ps)
{
	if (!ps)
		return;
	series_free(&ps->footprint);
	series_free(&ps->gpu);
	series_free(&ps->dev);
	series_free(&ps->swap);
	series_free(&ps->mapped);
	memset(ps, 0, sizeof(*ps));
}
