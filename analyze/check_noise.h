/* check_noise.h -- check's noise model: how much a metric may move before it is a change
 *
 * The numbers of check.h's "The noise rule": the floors, the pooled relative
 * noise of a mode's stages, the machine-wide time shift and how far single
 * stages wander from it, and the allowed growth they add up to. Pure
 * arithmetic on values: this file reads no runs and calls no other check
 * file; the judging (check.c) collects each stage's values (check_collect())
 * and hands them over.
 */
#ifndef SB_CHECK_NOISE_H
#define SB_CHECK_NOISE_H

#include <stddef.h>

#include "check.h"

/* The noise of one metric of a mode, over its stages. */
struct check_noise {
	double rel_sd;       /* pooled relative standard deviation; 0 when unknown */
	size_t nsets;        /* degrees of freedom behind it */
	double shift;        /* machine-wide time shift, 1 when none */
	size_t nshift;       /* stages behind it */
	double wander_sd;    /* relative SD of single stages around the shift; 0 unknown */
};

/* The noise of a metric, built stage by stage:
 *   check_noise_pool_init(&p, m, nstages);
 *   check_noise_pool_add(&p, b, nb, c, nc)       once per stage of the baseline
 *   check_noise_pool_end(&p, &noise)             the estimate; frees the pool */
struct check_noise_pool {
	enum check_metric metric;
	double ss;           /* summed squared relative deviations */
	size_t df;           /* summed degrees of freedom */
	double *ratios;      /* per stage: median(c) / median(b) */
	size_t nratios, alloc;
};
void check_noise_pool_init(struct check_noise_pool *p, enum check_metric m, size_t nstages);
/* One stage's values: the baseline's B[NB] and the candidate's C[NC] (runs that
 * completed it). Sorts both arrays. */
void check_noise_pool_add(struct check_noise_pool *p, double *b, size_t nb, double *c, size_t nc);
void check_noise_pool_end(struct check_noise_pool *p, struct check_noise *out);

/* 64 MiB for memory, 0.5 s for times: a change smaller is never judged. */
double check_floor(enum check_metric m);

/* What a stage's change must pass (the noise rule's "fixed", "noise" and
 * "allowed"), and the machine-wide time shift applied to the baseline. */
struct check_allowance {
	double fixed;        /* max(threshold, floor) */
	double noise;        /* max(either side's spread, K x pooled, K x wander) x max(b) */
	double allowed;      /* max(fixed, noise) */
	double up, down;     /* the shift for regressions (>= 1) and improvements (<= 1) */
};
/* BASE_MAX: max(b); SPREAD and CAND_SPREAD: each side's max - min. */
void check_noise_allowance(const struct check_options *o, enum check_metric m,
			   const struct check_noise *nz, double base_max, double spread,
			   double cand_spread, struct check_allowance *out);

#endif
