/* reader_int.h -- what the reader's parts share: scalar values, the reader's
 * layers, the sample keys (generated from TRACE_SAMPLE_FIELDS)
 *
 * The reader in layers, each calling only the ones below it (and schema.c,
 * the tables and the releasing of records, below them all):
 *   bytes.c     bytes: a plain file, memory, or zstd decompressed a chunk ahead
 *               in a second thread
 *   lines.c     the bytes split into lines, marks at zstd frame ends
 *   records.c   lines into records (fastpath.c for samples, decode.c for the
 *               rest through jansson), handed to a sink (sink.h)
 *   reader.c    a sink: the whole trace in memory (trace_read)
 *   summary.c   a sink: the samples reduced for the analysis (trace_read_summary)
 */
#ifndef SB_READER_INT_H
#define SB_READER_INT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/util.h"
#include "sink.h"
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

static inline const char *reader_skip_ws(const char *p, const char *end)
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

/* ---- the layers, bottom first: each calls only the ones above it here ---- */

/* What every layer needs to report a fault: the name messages give the input. */
struct read_ctx {
	const char *name;
	bool quiet; /* errors make -1 without a message */
};

/* error() unless quiet; -1 either way. */
#define read_error(c, ...) ((c)->quiet ? -1 : error(__VA_ARGS__))

/* bytes.c: the input as chunks of text, plain or zstd (decompressed a chunk
 * ahead in a second thread). It calls nothing of the reader. */
struct bytes;
/* Open a file or memory (not copied). NULL after a message: it cannot be
 * opened or read, it is empty. */
struct bytes *bytes_open_path(const struct read_ctx *c, const char *path);
struct bytes *bytes_open_mem(const struct read_ctx *c, const void *data, size_t len);
enum bytes_status {
	BYTES_CHUNK,   /* *p, *len: the next text (the previous chunk is given back) */
	BYTES_END,     /* the input ended cleanly */
	BYTES_EREAD,   /* a read error (message printed) */
	BYTES_ECORRUPT,/* corrupt zstd data: bytes_error() names it (not printed) */
	BYTES_ETRUNC,  /* the input ends inside a zstd frame (not printed) */
};
/* *frame_end: a zstd frame (all of its text) ends with this chunk; always
 * true for plain text, which has no frames. */
enum bytes_status bytes_next(struct bytes *b, const char **p, size_t *len, bool *frame_end);
const char *bytes_error(const struct bytes *b); /* BYTES_ECORRUPT: what zstd said */
void bytes_close(struct bytes *b); /* NULL ok */
bool reader_is_zstd(const void *data, size_t len);

/* lines.c: the text split into lines, on top of bytes.c. */
struct lines {
	const struct read_ctx *c;
	struct bytes *b;
	const char *p, *end;  /* the rest of the current chunk */
	bool frame_end;       /* the current chunk ends a zstd frame */
	bool done;
	struct strbuf tail;   /* a line cut by the end of a chunk */
	bool tail_out;        /* the tail was handed out as a line */
	size_t line;          /* lines handed out: the number of the last one */
	size_t mark_line;     /* line at the end of the last complete frame */
};
enum line_kind {
	LINE_TEXT,  /* a line (without its newline) */
	LINE_MARK,  /* every line so far came from complete zstd frames */
	LINE_END,   /* no more lines */
	LINE_ERROR, /* a fault, printed */
	LINE_CUT,   /* a zstd frame cut short or corrupt, printed: the records
		     * since the last mark must be dropped */
};
void lines_init(struct lines *L, const struct read_ctx *c, struct bytes *b);
enum line_kind lines_next(struct lines *L, const char **p, const char **end);
void lines_release(struct lines *L);

/* fastpath.c: a sample or plain event line parsed in place. FAST_SAMPLE (*s
 * parsed), FAST_EVENT (*ev parsed, its strings the caller's); 0 not for the
 * fast path (decode.c reads it); -1 a bad sample (why). */
enum { FAST_SAMPLE = 1, FAST_EVENT = 2 };
int fast_record(const char *p, const char *end, struct trace_sample *s, struct trace_event *ev,
		char *why, size_t whylen);

/* decode.c: one line through jansson into *d. */
enum rec_kind { REC_NONE, REC_SAMPLE, REC_EVENT, REC_START, REC_END };
struct decoded {
	enum rec_kind kind; /* REC_NONE: a record type from a later revision */
	struct trace_sample sample;
	struct trace_event event;
	struct trace_start start;
	struct trace_end end;
	struct trace_label *versions; /* names and versions the record gives */
	size_t nversions;
};
/* skip_start, skip_end: a start (end) was read already: a repeated one is
 * not decoded. 0 ok (the records in *d are the caller's), -1 a bad record
 * (why), -2 an unknown format (why). */
int decode_line(const char *p, const char *end, bool skip_start, bool skip_end,
		struct decoded *d, char *why, size_t whylen);
void decoded_release_versions(struct decoded *d);
/* schema.c: a start or end record's strings freed, *st (*end) zeroed. */
void reader_start_release(struct trace_start *st);
void reader_end_release(struct trace_end *end);

/* records.c: lines into records handed to a sink (sink.h). */
int records_read(const struct read_ctx *c, struct bytes *b, const struct trace_sink *sink);

/* reader.c: the sink that keeps the records in a struct trace. */
struct trace_keep {
	struct trace_sink sink;
	struct trace *tr;
	bool samples_sorted, events_sorted;
	bool brief; /* events also as briefs, plain ones only so (trace.h) */
	double last_sample_t, last_event_t;
	size_t mark_samples, mark_events, mark_briefs;
	bool mark_start, mark_end;
};
/* *tr emptied, named path. */
void trace_keep_init(struct trace_keep *k, struct trace *tr, const char *path);
/* After reading with result ret (a trace_read_sink() return): sorted, a
 * fault marked. Returns trace_read()'s result. */
int trace_keep_finish(struct trace_keep *k, int ret);

#endif
