/* reader_int.h -- what the reader's parts share: scalar values, the reader's
 * state, the sample keys (generated from TRACE_SAMPLE_FIELDS)
 *
 *   reader.c    entry points, line splitting, sorting, releasing records
 *   fastpath.c  the JSON fast path: sample lines parsed in place
 *   decode.c    every record through jansson (start, event, end, odd samples)
 *   zread.c     zstd: decompression a chunk ahead in a second thread
 */
#ifndef SB_READER_INT_H
#define SB_READER_INT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/util.h"
#include "trace.h"

/* ---- scalar values, from jansson or from the fast path ------------------ */

enum jv_kind { JV_NULL, JV_BOOL, JV_INT, JV_REAL, JV_STRING, JV_OTHER };

struct jv {
	enum jv_kind kind;
	bool neg;   /* JV_INT: negative; u holds the magnitude */
	uint64_t u; /* JV_INT */
	double d;   /* JV_INT and JV_REAL */
};

static inline bool jv_number(const struct jv *v, double *d)
{
	if ((v->kind != JV_INT && v->kind != JV_REAL) || !isfinite(v->d))
		return false;
	*d = v->d;
	return true;
}

/* A byte count: a non-negative integer (an integral real is accepted). */
static inline bool jv_bytes(const struct jv *v, uint64_t *u)
{
	if (v->kind == JV_INT && !v->neg) {
		*u = v->u;
		return true;
	}
	if (v->kind == JV_REAL && isfinite(v->d) && v->d >= 0 && v->d < 18446744073709551616.0 &&
	    v->d == floor(v->d)) {
		*u = (uint64_t)v->d;
		return true;
	}
	return false;
}

static inline bool jv_int(const struct jv *v, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t x;
	if (v->kind == JV_INT) {
		if (v->neg) {
			if (v->u > (uint64_t)INT64_MAX + 1)
				return false;
			x = v->u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v->u;
		} else {
			if (v->u > (uint64_t)INT64_MAX)
				return false;
			x = (int64_t)v->u;
		}
	} else if (v->kind == JV_REAL && isfinite(v->d) && v->d == floor(v->d) &&
		   fabs(v->d) < 9.0e18) {
		x = (int64_t)v->d;
	} else {
		return false;
	}
	if (x < lo || x > hi)
		return false;
	*out = x;
	return true;
}

/* ---- the reader's state -------------------------------------------------- */

struct trace_summary;

struct reader {
	const char *name;
	struct trace *tr;
	size_t line;
	bool samples_sorted, events_sorted;
	double last_sample_t, last_event_t;
	bool quiet;                 /* errors make -1 without a message */
	struct trace_summary *sum;  /* samples and events go there too (summary.c) */
};

/* error() unless the reader is quiet; -1 either way. */
#define reader_error(r, ...) ((r)->quiet ? -1 : error(__VA_ARGS__))

/* summary.c: a sample instead of keeping it; an event's times. */
void summary_sample(struct trace_summary *sum, const struct trace_sample *s);
void summary_event(struct trace_summary *sum, const struct trace_event *ev);

/* "NAME:LINE: why" on stderr, the trace marked damaged; returns -1. */
int reader_line_error(struct reader *r, const char *why);
/* The same for line r->line, longer than TRACE_MAX_LINE. */
int reader_line_too_long(struct reader *r);

static inline void add_sample(struct reader *r, const struct trace_sample *s)
{
	struct trace *tr = r->tr;
	if (r->sum) {
		summary_sample(r->sum, s);
		return;
	}
	if (tr->nsamples && s->t < r->last_sample_t)
		r->samples_sorted = false;
	r->last_sample_t = s->t;
	ALLOC_GROW(tr->samples, tr->nsamples + 1, tr->samples_alloc);
	tr->samples[tr->nsamples++] = *s;
}

static inline const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* ---- sample keys ---------------------------------------------------------- */

#define SK_T SAMPLE_NFIELDS /* sample_key_index() for "t" */

/* The index (SFI_*) of the sample key k[0, klen), SK_T for "t", or -1 for
 * another key. */
static inline int sample_key_index(const char *k, size_t klen)
{
	if (klen == 1)
		return k[0] == 't' ? SK_T : -1;
#define X(UP, key, bit, kind, what) \
	if (klen == sizeof(#key) - 1 && !memcmp(k, #key, sizeof(#key) - 1)) \
		return SFI_##UP;
	TRACE_SAMPLE_FIELDS(X)
#undef X
	return -1;
}

static inline bool jv_take_BYTES(const struct jv *v, uint64_t *out)
{
	return jv_bytes(v, out);
}

static inline bool jv_take_NUMBER(const struct jv *v, double *out)
{
	return jv_number(v, out);
}

static inline bool jv_take_COUNT(const struct jv *v, int *out)
{
	int64_t x;
	if (!jv_int(v, 0, 2147483647, &x))
		return false;
	*out = (int)x;
	return true;
}

/*
 * Apply the sample key of index i (SK_T: "t"; -1: an unknown key, ignored).
 * *has_t is set when "t" was seen. Returns 0, or -1 with a message in why.
 */
static inline int sample_key_apply(struct trace_sample *s, bool *has_t, int i,
				   const struct jv *v, char *why, size_t whylen)
{
	static const char *const want[] = {
		[SAMPLE_BYTES] = "a byte count", [SAMPLE_NUMBER] = "a number",
		[SAMPLE_COUNT] = "a process count",
	};
	if (i == SK_T) {
		if (v->kind == JV_NULL || !jv_number(v, &s->t)) {
			snprintf(why, whylen, "sample \"t\" is not a number");
			return -1;
		}
		*has_t = true;
		return 0;
	}
	if (i < 0)
		return 0; /* unknown keys are ignored */
	const struct sample_field_info *f = &trace_sample_fields[i];
	if (v->kind == JV_NULL) { /* absent */
		s->fields &= ~f->bit;
		return 0;
	}
	bool ok = false;
	switch (i) {
#define X(UP, key, bit, kind, what) \
	case SFI_##UP: \
		ok = jv_take_##kind(v, &s->key); \
		break;
	TRACE_SAMPLE_FIELDS(X)
#undef X
	}
	if (!ok) {
		snprintf(why, whylen, "sample \"%s\" is not %s", f->key, want[f->kind]);
		return -1;
	}
	s->fields |= f->bit;
	return 0;
}

/* ---- between the parts ----------------------------------------------------- */

/* 1: a sample line handled; 0: not for the fast path; -1: error printed. */
int reader_fast_line(struct reader *r, const char *p, const char *end);
/* One line through jansson. 0 ok, -1 error printed, -2 unknown format (printed). */
int reader_slow_line(struct reader *r, const char *p, const char *end);
/* Parse text[0, len) line by line. 0, -1 (printed), -2 unknown format. */
int reader_parse_text(struct reader *r, const char *text, size_t len);
bool reader_is_zstd(const void *data, size_t len);
/* Decompress and parse a zstd trace, from fd (data, len: what was read of it
 * already) or from memory (fd -1). 0, -1 (printed), -2 unknown format. */
int reader_read_zstd(struct reader *r, int fd, const void *data, size_t len);
/* Parse the complete lines of text[0, len); a line cut at the end waits in tail. */
int reader_parse_chunk(struct reader *r, struct strbuf *tail, const char *text, size_t len);
void reader_start_release(struct trace_start *st);
/* trace_read() without messages, the samples going to sum (summary.c). */
int reader_read_quiet(const char *path, struct trace *tr, struct trace_summary *sum);
void reader_end_release(struct trace_end *end);

#endif
