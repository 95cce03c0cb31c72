/* check_noise.c -- check's noise model: floors, pooled noise, time shift, allowed growth
 * (see check_noise.h and check.h, "The noise rule") */
#include "check_noise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int noise_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), noise_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double check_floor(enum check_metric m)
{
	return check_metric_is_time(m) ? CHECK_TIME_FLOOR_S : (double)CHECK_MEM_FLOOR_BYTES;
}

/* Add one side's values of a stage to the pooled sums: squared relative
 * deviations from the set's mean, and the set's degrees of freedom. */
static void pool_set(const double *v, size_t n, double min_mean, double *ss, size_t *df)
{
	if (n < 2)
		return;
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += v[i] / (double)n;
	if (mean < min_mean || mean <= 0)
		return;
	for (size_t i = 0; i < n; i++)
		*ss += (v[i] / mean - 1) * (v[i] / mean - 1);
	*df += n - 1;
}

void check_noise_pool_init(struct check_noise_pool *p, enum check_metric m, size_t nstages)
{
	memset(p, 0, sizeof(*p));
	p->metric = m;
	p->alloc = nstages + 1;
	p->ratios = xcalloc(p->alloc, sizeof(*p->ratios));
}

void check_noise_pool_add(struct check_noise_pool *p, double *b, size_t nb, double *c, size_t nc)
{
	double floor = check_floor(p->metric);
	pool_set(b, nb, CHECK_NOISE_MIN_FLOORS * floor, &p->ss, &p->df);
	pool_set(c, nc, CHECK_NOISE_MIN_FLOORS * floor, &p->ss, &p->df);
	if (nb && nc) {
		double mb = median(b, nb), mc = median(c, nc);
		if (mb >= CHECK_SHIFT_MIN_FLOORS * floor) {
			ALLOC_GROW(p->ratios, p->nratios + 1, p->alloc);
			p->ratios[p->nratios++] = mc / mb;
		}
	}
}

void check_noise_pool_end(struct check_noise_pool *p, struct check_noise *out)
{
	memset(out, 0, sizeof(*out));
	out->shift = 1;
	bool time = check_metric_is_time(p->metric);
	out->nsets = p->df;
	out->rel_sd = p->df ? sqrt(p->ss / (double)p->df) : 0;
	out->nshift = p->nratios;
	if (time && p->nratios >= CHECK_SHIFT_MIN_STAGES)
		out->shift = median(p->ratios, p->nratios);
	/* how far single stages wander from that shift between the two sessions: the
	 * median absolute deviation of the ratios, as a standard deviation (x 1.4826),
	 * relative to the shift; robust to the one stage that did change */
	if (time && p->nratios >= CHECK_WANDER_MIN_STAGES && out->shift > 0) {
		for (size_t i = 0; i < p->nratios; i++)
			p->ratios[i] = fabs(p->ratios[i] - out->shift);
		out->wander_sd = 1.4826 * median(p->ratios, p->nratios) / out->shift;
	}
	free(p->ratios);
	memset(p, 0, sizeof(*p));
}

/* --max-growth, --max-time-growth: a percentage of max(b), or a size or duration. */
static double threshold(const struct check_options *o, enum check_metric m, double base_max)
{
	if (check_metric_is_time(m))
		return o->time_is_pct ? base_max * o->time_pct / 100.0 : o->time_s;
	return o->growth_is_pct ? base_max * o->growth_pct / 100.0 : (double)o->growth_bytes;
}

void check_noise_allowance(const struct check_options *o, enum check_metric m,
			   const struct check_noise *nz, double base_max, double spread,
			   double cand_spread, struct check_allowance *out)
{
	/* the fixed part: threshold and floor; the noise part: either side's own
	 * spread, or the pooled relative noise of the mode's stages */
	out->fixed = threshold(o, m, base_max);
	if (check_floor(m) > out->fixed)
		out->fixed = check_floor(m);
	out->noise = spread > cand_spread ? spread : cand_spread;
	if (CHECK_NOISE_K * nz->rel_sd * base_max > out->noise)
		out->noise = CHECK_NOISE_K * nz->rel_sd * base_max;
	double wander = CHECK_NOISE_K * nz->wander_sd * base_max * (nz->shift > 1 ? nz->shift : 1);
	if (wander > out->noise)
		out->noise = wander;
	out->allowed = out->fixed > out->noise ? out->fixed : out->noise;
	/* a machine-wide time shift (every stage slower now) is not a stage's regression */
	out->up = nz->shift > 1 ? nz->shift : 1;
	out->down = nz->shift < 1 ? nz->shift : 1;
}
