/* check_noise.c -- how noisy a metric is across a check's runs (see check.h, "The noise rule") */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
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

void check_noise_estimate(const struct check *c, const char *mode, char *const *stages,
			  size_t nstages, enum check_metric m, struct check_noise *out)
{
	memset(out, 0, sizeof(*out));
	out->shift = 1;
	double floor = check_floor(m), ss = 0;
	double *ratios = xcalloc(nstages + 1, sizeof(*ratios));
	size_t df = 0, nratios = 0;
	for (size_t s = 0; s < nstages; s++) {
		double *b, *cv;
		size_t nb = check_collect(&c->side[CHECK_BASELINE], mode, stages[s], m, &b);
		size_t nc = check_collect(&c->side[CHECK_CANDIDATE], mode, stages[s], m, &cv);
		pool_set(b, nb, CHECK_NOISE_MIN_FLOORS * floor, &ss, &df);
		pool_set(cv, nc, CHECK_NOISE_MIN_FLOORS * floor, &ss, &df);
		if (nb && nc) {
			double mb = median(b, nb), mc = median(cv, nc);
			if (mb >= CHECK_SHIFT_MIN_FLOORS * floor)
				ratios[nratios++] = mc / mb;
		}
		free(b);
		free(cv);
	}
	out->nsets = df;
	out->rel_sd = df ? sqrt(ss / (double)df) : 0;
	out->nshift = nratios;
	if (check_metric_is_time(m) && nratios >= CHECK_SHIFT_MIN_STAGES)
		out->shift = median(ratios, nratios);
	/* how far single stages wander from that shift between the two sessions: the
	 * median absolute deviation of the ratios, as a standard deviation (x 1.4826),
	 * relative to the shift; robust to the one stage that did change */
	if (check_metric_is_time(m) && nratios >= CHECK_WANDER_MIN_STAGES && out->shift > 0) {
		for (size_t i = 0; i < nratios; i++)
			ratios[i] = fabs(ratios[i] - out->shift);
		out->wander_sd = 1.4826 * median(ratios, nratios) / out->shift;
	}
	free(ratios);
}
