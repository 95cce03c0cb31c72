/* reader.c -- trace reader: zstd or plain JSON lines into a struct trace */
#include "trace.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "../common/jsonw.h"
#include "../common/util.h"

/* ---- event kinds ------------------------------------------------------- */

static const char *const kind_names[] = {
	[EV_STAGE] = "stage",   [EV_LOAD] = "load",     [EV_RELOAD] = "reload",
	[EV_RELEASE] = "release", [EV_MARK] = "mark",   [EV_LATENT] = "latent",
	[EV_PEAK] = "peak",     [EV_GPU] = "gpu",       [EV_GUARD] = "guard",
};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

enum event_kind event_kind_from_name(const char *name)
{
	if (!name)
		return EV_OTHER;
	for (size_t i = 1; i < NKINDS; i++)
		if (kind_names[i] && !strcmp(kind_names[i], name))
			return (enum event_kind)i;
	return EV_OTHER;
}

const char *event_kind_name(enum event_kind kind)
{
	if ((size_t)kind >= NKINDS || kind == EV_OTHER)
		return NULL;
	return kind_names[kind];
}

void trace_event_release(struct trace_event *ev)
{
	if (!ev)
		return;
	free(ev->kind_name);
	free(ev->stage);
	free(ev->name);
	free(ev->note);
	free(ev->sha256);
	free(ev->dtype);
	free(ev->file);
	free(ev->metric);
	free(ev->device);
	free(ev->action);
	free(ev->reason);
	free(ev->extra_json);
	memset(ev, 0, sizeof(*ev));
	ev->ndim = -1;
}

static void start_release(struct trace_start *st)
{
	free(st->format);
	free(st->utc);
	free(st->mode);
	if (st->command)
		for (char **a = st->command; *a; a++)
			free(*a);
	free(st->command);
	free(st->host_os);
	free(st->host_kernel);
	free(st->host_machine);
	free(st->meter_backend);
	free(st->meter_footprint);
	for (size_t i = 0; i < st->nlabels; i++) {
		free(st->labels[i].key);
		free(st->labels[i].value);
	}
	free(st->labels);
	free(st->commit);
	free(st->extra_json);
	memset(st, 0, sizeof(*st));
}

static void records_release(struct trace *tr)
{
	start_release(&tr->start);
	tr->has_start = false;
	free(tr->samples);
	tr->samples = NULL;
	tr->nsamples = tr->samples_alloc = 0;
	for (size_t i = 0; i < tr->nevents; i++)
		trace_event_release(&tr->events[i]);
	free(tr->events);
	tr->events = NULL;
	tr->nevents = tr->events_alloc = 0;
	free(tr->end.reason);
	free(tr->end.extra_json);
	memset(&tr->end, 0, sizeof(tr->end));
	tr->has_end = false;
}

void trace_release(struct trace *tr)
{
	if (!tr)
		return;
	records_release(tr);
	free(tr->path);
	memset(tr, 0, sizeof(*tr));
}

/* ---- scalar values, from jansson or from the fast path ------------------ */

enum jv_kind { JV_NULL, JV_BOOL, JV_INT, JV_REAL, JV_STRING, JV_OTHER };

struct jv {
	enum jv_kind kind;
	bool neg;   /* JV_INT: negative; u holds the magnitude */
	uint64_t u; /* JV_INT */
	double d;   /* JV_INT and JV_REAL */
};

static void jv_from_json(const json_t *j, struct jv *v)
{
	memset(v, 0, sizeof(*v));
	switch (json_typeof(j)) {
	case JSON_INTEGER: {
		json_int_t x = json_integer_value(j);
		v->kind = JV_INT;
		v->neg = x < 0;
		v->u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
		v->d = (double)x;
		break;
	}
	case JSON_REAL:
		v->kind = JV_REAL;
		v->d = json_real_value(j);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		v->kind = JV_BOOL;
		break;
	case JSON_NULL:
		v->kind = JV_NULL;
		break;
	case JSON_STRING:
		v->kind = JV_STRING;
		break;
	default:
		v->kind = JV_OTHER;
	}
}

static bool jv_number(const struct jv *v, double *d)
{
	if ((v->kind != JV_INT && v->kind != JV_REAL) || !isfinite(v->d))
		return false;
	*d = v->d;
	return true;
}

/* A byte count: a non-negative integer (an integral real is accepted). */
static bool jv_bytes(const struct jv *v, uint64_t *u)
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

static bool jv_int(const struct jv *v, int64_t lo, int64_t hi, int64_t *out)
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

/* ---- samples ------------------------------------------------------------ */

static const struct {
	const char *name;
	size_t len;
	unsigned bit;
} sample_keys[] = {
	{ "footprint", 9, SF_FOOTPRINT }, { "rss", 3, SF_RSS },
	{ "swapped", 7, SF_SWAPPED },     { "swap_used", 9, SF_SWAP_USED },
	{ "swap_total", 10, SF_SWAP_TOTAL }, { "gpu", 3, SF_GPU },
	{ "level", 5, SF_LEVEL },         { "procs", 5, SF_PROCS },
};

static uint64_t *sample_slot(struct trace_sample *s, unsigned bit)
{
	switch (bit) {
	case SF_FOOTPRINT: return &s->footprint;
	case SF_RSS: return &s->rss;
	case SF_SWAPPED: return &s->swapped;
	case SF_SWAP_USED: return &s->swap_used;
	case SF_SWAP_TOTAL: return &s->swap_total;
	case SF_GPU: return &s->gpu;
	default: return NULL;
	}
}

#define SK_T 8 /* sample_key_index() for "t" */

/* The index in sample_keys of the key k[0, klen), SK_T for "t", or -1 for
 * another key: a switch on the length, at most two fixed-size compares. */
static inline int sample_key_index(const char *k, size_t klen)
{
	switch (klen) {
	case 1:
		return k[0] == 't' ? SK_T : -1;
	case 3:
		return !memcmp(k, "rss", 3) ? 1 : !memcmp(k, "gpu", 3) ? 5 : -1;
	case 5:
		return !memcmp(k, "level", 5) ? 6 : !memcmp(k, "procs", 5) ? 7 : -1;
	case 7:
		return !memcmp(k, "swapped", 7) ? 2 : -1;
	case 9:
		return !memcmp(k, "footprint", 9) ? 0 : !memcmp(k, "swap_used", 9) ? 3 : -1;
	case 10:
		return !memcmp(k, "swap_total", 10) ? 4 : -1;
	default:
		return -1;
	}
}

/*
 * Apply the key sample_keys[i] (SK_T: "t"; -1: an unknown key, ignored) of a
 * sample record. *has_t is set when "t" was seen. Returns 0, or -1 with a
 * message in why.
 */
static inline int sample_key_apply(struct trace_sample *s, bool *has_t, int i,
				   const struct jv *v, char *why, size_t whylen)
{
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
	unsigned bit = sample_keys[i].bit;
	if (v->kind == JV_NULL) { /* absent */
		s->fields &= ~bit;
		return 0;
	}
	bool ok;
	if (bit == SF_LEVEL) {
		ok = jv_number(v, &s->level);
	} else if (bit == SF_PROCS) {
		int64_t x;
		ok = jv_int(v, 0, 2147483647, &x);
		if (ok)
			s->procs = (int)x;
	} else {
		ok = jv_bytes(v, sample_slot(s, bit));
	}
	if (!ok) {
		snprintf(why, whylen, "sample \"%s\" is not %s", sample_keys[i].name,
			 bit == SF_LEVEL ? "a number" :
			 bit == SF_PROCS ? "a process count" : "a byte count");
		return -1;
	}
	s->fields |= bit;
	return 0;
}

/* The same, by name. */
static int sample_key(struct trace_sample *s, bool *has_t, const char *k, size_t klen,
		      const struct jv *v, char *why, size_t whylen)
{
	return sample_key_apply(s, has_t, sample_key_index(k, klen), v, why, whylen);
}

/* ---- the fast path: flat objects of plain scalars (sample lines) -------- */

#define FAST_MAX_PAIRS 32

struct pair {
	const char *k;
	size_t klen;
	const char *s; /* JV_STRING: the bytes between the quotes */
	size_t slen;
	struct jv v;
};

static const double pow10_tab[] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static inline bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* A string with no escapes, control or non-ASCII bytes; NULL = not simple. */
static const char *fast_string(const char *p, const char *end, const char **s, size_t *len)
{
	const char *q = ++p;
	while (q < end && *q != '"') {
		unsigned char c = (unsigned char)*q;
		if (c == '\\' || c < 0x20 || c >= 0x80)
			return NULL;
		q++;
	}
	if (q >= end)
		return NULL;
	*s = p;
	*len = (size_t)(q - p);
	return q + 1;
}

/* m = m * 10 + digit; 19 digits always fit, past that check. */
static inline void add_digit(uint64_t *m, int *nd, bool *overflow, char c)
{
	if (++*nd < 20) {
		*m = *m * 10 + (uint64_t)(c - '0');
		return;
	}
	if (__builtin_mul_overflow(*m, 10, m) ||
	    __builtin_add_overflow(*m, (uint64_t)(c - '0'), m))
		*overflow = true;
}

/* A JSON number. Exact: either an integer, or m * 10^e with m < 2^53 and
 * |e| <= 22 (one correctly rounded operation), else strtod. NULL = leave it
 * to jansson. */
static const char *number_general(const char *p, const char *end, struct jv *v)
{
	const char *start = p;
	bool neg = false, overflow = false, is_int = true;
	uint64_t m = 0;
	int exp10 = 0, nd = 0;

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || !is_digit(*p))
		return NULL;
	if (*p == '0') {
		p++;
	} else {
		while (p < end && is_digit(*p))
			add_digit(&m, &nd, &overflow, *p++);
	}
	if (p < end && *p == '.') {
		is_int = false;
		p++;
		if (p >= end || !is_digit(*p))
			return NULL;
		while (p < end && is_digit(*p)) {
			add_digit(&m, &nd, &overflow, *p++);
			exp10--;
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		is_int = false;
		p++;
		bool eneg = false;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p >= end || !is_digit(*p))
			return NULL;
		int e = 0;
		while (p < end && is_digit(*p)) {
			if (e < 100000)
				e = e * 10 + (*p - '0');
			p++;
		}
		exp10 += eneg ? -e : e;
	}
	memset(v, 0, sizeof(*v));
	if (is_int && !overflow) {
		v->kind = JV_INT;
		v->neg = neg && m;
		v->u = m;
		v->d = neg ? -(double)m : (double)m;
		return p;
	}
	if (is_int)
		return NULL; /* too big an integer: jansson reports it */
	v->kind = JV_REAL;
	if (!overflow && m <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
		double d = (double)m;
		d = exp10 < 0 ? d / pow10_tab[-exp10] : d * pow10_tab[exp10];
		v->d = neg ? -d : d;
		return p;
	}
	char buf[64];
	size_t n = (size_t)(p - start);
	if (n >= sizeof(buf))
		return NULL;
	memcpy(buf, start, n);
	buf[n] = '\0';
	v->d = strtod(buf, NULL);
	if (!isfinite(v->d))
		return NULL;
	return p;
}

/* The 8 bytes at p are all digits: *out = their value (SWAR, little-endian). */
static inline bool eight_digits(const char *p, uint64_t *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t x;
	memcpy(&x, p, 8);
	uint64_t a = x - 0x3030303030303030ull; /* a byte under '0' sets its top bit */
	uint64_t b = x + 0x4646464646464646ull; /* a byte over '9' sets its top bit */
	if ((a | b) & 0x8080808080808080ull)
		return false;
	a = a * 10 + (a >> 8); /* pairs of digits */
	a = ((a & 0x000000FF000000FFull) * (100 + (1000000ull << 32)) +
	     ((a >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32))) >> 32;
	*out = (uint32_t)a;
	return true;
#else
	(void)p;
	(void)out;
	return false;
#endif
}

/*
 * The same, first trying the shapes sample lines have: an integer of at most
 * 19 digits, or one with a fraction and no exponent, 19 digits in all. Those
 * get the very value number_general() gives (the same m and 10^-f, the same
 * one division); anything else goes to it.
 */
static inline const char *fast_number(const char *p, const char *end, struct jv *v)
{
	const char *q = p;
	bool neg = false;
	uint64_t m;
	int nd;

	if (*q == '-') {
		neg = true;
		q++;
	}
	if (q >= end || !is_digit(*q))
		return NULL;
	if (*q == '0') {
		m = 0;
		nd = 0; /* a leading 0 counts for nothing */
		q++;
	} else {
		const char *lim = end - q > 19 ? q + 19 : end;
		m = 0;
		if (end - q >= 8 && eight_digits(q, &m))
			q += 8;
		else
			m = (uint64_t)(*q++ - '0');
		while (q < lim && is_digit(*q))
			m = m * 10 + (uint64_t)(*q++ - '0');
		nd = (int)(q - p) - neg;
	}
	if (q == end || (!is_digit(*q) && *q != '.' && *q != 'e' && *q != 'E')) {
		v->kind = JV_INT;
		v->neg = neg && m;
		v->u = m;
		v->d = neg ? -(double)m : (double)m;
		return q;
	}
	if (*q != '.' || q + 1 == end || !is_digit(q[1]))
		return number_general(p, end, v);
	const char *f = ++q;
	const char *lim = end - q > 19 - nd ? q + (19 - nd) : end;
	while (q < lim && is_digit(*q))
		m = m * 10 + (uint64_t)(*q++ - '0');
	if ((q < end && (is_digit(*q) || *q == 'e' || *q == 'E')) || m > (1ull << 53))
		return number_general(p, end, v);
	double d = (double)m / pow10_tab[q - f];
	v->kind = JV_REAL;
	v->neg = false;
	v->u = 0;
	v->d = neg ? -d : d;
	return q;
}

/* Parse a flat object of scalars. Returns the number of pairs, or -1 when
 * the line needs the full parser (nesting, escapes, anything odd). */
static int fast_object(const char *p, const char *end, struct pair *pairs)
{
	int n = 0;
	p = skip_ws(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return skip_ws(p + 1, end) == end ? 0 : -1;
	for (;;) {
		if (n == FAST_MAX_PAIRS || p >= end || *p != '"')
			return -1;
		struct pair *pr = &pairs[n++];
		if (!(p = fast_string(p, end, &pr->k, &pr->klen)))
			return -1;
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return -1;
		p = skip_ws(p + 1, end);
		if (p >= end)
			return -1;
		memset(&pr->v, 0, sizeof(pr->v));
		if (*p == '"') {
			pr->v.kind = JV_STRING;
			if (!(p = fast_string(p, end, &pr->s, &pr->slen)))
				return -1;
		} else if (*p == '-' || is_digit(*p)) {
			if (!(p = fast_number(p, end, &pr->v)))
				return -1;
		} else if (end - p >= 4 && !memcmp(p, "null", 4)) {
			pr->v.kind = JV_NULL;
			p += 4;
		} else if (end - p >= 4 && !memcmp(p, "true", 4)) {
			pr->v.kind = JV_BOOL;
			p += 4;
		} else if (end - p >= 5 && !memcmp(p, "false", 5)) {
			pr->v.kind = JV_BOOL;
			p += 5;
		} else {
			return -1;
		}
		p = skip_ws(p, end);
		if (p < end && *p == ',') {
			p = skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}')
			return skip_ws(p + 1, end) == end ? n : -1;
		return -1;
	}
}

/* ---- the reader's state -------------------------------------------------- */

struct reader {
	const char *name;
	struct trace *tr;
	size_t line;
	bool samples_sorted, events_sorted;
	double last_sample_t, last_event_t;
};

static int line_error(struct reader *r, const char *why)
{
	r->tr->damaged = true;
	return error("%s:%zu: %s", r->name, r->line, why);
}

static void add_sample(struct reader *r, const struct trace_sample *s)
{
	struct trace *tr = r->tr;
	if (tr->nsamples && s->t < r->last_sample_t)
		r->samples_sorted = false;
	r->last_sample_t = s->t;
	ALLOC_GROW(tr->samples, tr->nsamples + 1, tr->samples_alloc);
	tr->samples[tr->nsamples++] = *s;
}

/* k[0, len) is name: a compare of fixed size */
#define KEY_IS(k, end, name) \
	((size_t)((end) - (k)) > sizeof(name) - 1 && !memcmp((k), name "\"", sizeof(name)))

/*
 * The key after an opening quote at k when it is a sample key followed by
 * its closing quote (then the key is exactly that name: no escapes in it).
 * Returns its sample_key_index() with *klen, or -1 (look at it the long way).
 */
static inline int known_sample_key(const char *k, const char *end, size_t *klen)
{
	int i = -1;
	if (k >= end)
		return -1;
	switch (*k) {
	case 't':
		i = KEY_IS(k, end, "t") ? SK_T : -1;
		break;
	case 'f':
		i = KEY_IS(k, end, "footprint") ? 0 : -1;
		break;
	case 'r':
		i = KEY_IS(k, end, "rss") ? 1 : -1;
		break;
	case 's':
		i = KEY_IS(k, end, "swapped") ? 2 : KEY_IS(k, end, "swap_used") ? 3 :
		    KEY_IS(k, end, "swap_total") ? 4 : -1;
		break;
	case 'g':
		i = KEY_IS(k, end, "gpu") ? 5 : -1;
		break;
	case 'l':
		i = KEY_IS(k, end, "level") ? 6 : -1;
		break;
	case 'p':
		i = KEY_IS(k, end, "procs") ? 7 : -1;
		break;
	}
	if (i >= 0)
		*klen = i == SK_T ? 1 : sample_keys[i].len;
	return i;
}

/*
 * The writer's own sample lines (and stageload's) start with this: parse
 * the rest straight into the sample. 1 done, 0 use another path, -1 error.
 */
#define SAMPLE_PREFIX "{\"type\":\"sample\","
static int direct_sample(struct reader *r, const char *p, const char *end)
{
	struct trace_sample s;
	bool has_t = false;
	char why[128];

	memset(&s, 0, sizeof(s));
	p += sizeof(SAMPLE_PREFIX) - 1;
	for (;;) {
		const char *k;
		size_t klen;
		struct jv v;
		if (p >= end || *p != '"')
			return 0;
		int i = known_sample_key(p + 1, end, &klen);
		if (i != -1) {
			p += klen + 2;
		} else if (!(p = fast_string(p, end, &k, &klen))) {
			return 0;
		} else {
			i = sample_key_index(k, klen);
		}
		if (p >= end || *p != ':')
			return 0;
		p++;
		if (p >= end)
			return 0;
		if (*p == '-' || is_digit(*p)) {
			if (!(p = fast_number(p, end, &v)))
				return 0;
		} else {
			return 0; /* strings, null, ...: the general path */
		}
		if (sample_key_apply(&s, &has_t, i, &v, why, sizeof(why)))
			return line_error(r, why);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}' && skip_ws(p + 1, end) == end)
			break;
		return 0;
	}
	if (!has_t)
		return line_error(r, "sample has no \"t\"");
	add_sample(r, &s);
	return 1;
}

/* p starts with SAMPLE_PREFIX (17 bytes there): two 8-byte loads, one byte. */
static inline bool has_sample_prefix(const char *p)
{
	static const char want[] = SAMPLE_PREFIX;
	uint64_t a, b, x, y;
	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	memcpy(&x, want, 8);
	memcpy(&y, want + 8, 8);
	return a == x && b == y && p[16] == want[16];
}

/* 1: a sample line handled; 0: not for the fast path; -1: error printed. */
static int fast_line(struct reader *r, const char *p, const char *end)
{
	if ((size_t)(end - p) > sizeof(SAMPLE_PREFIX) && has_sample_prefix(p)) {
		int rc = direct_sample(r, p, end);
		if (rc)
			return rc;
	}
	struct pair pairs[FAST_MAX_PAIRS];
	int n = fast_object(p, end, pairs);
	if (n < 0)
		return 0;
	const struct pair *type = NULL;
	for (int i = 0; i < n; i++)
		if (pairs[i].klen == 4 && !memcmp(pairs[i].k, "type", 4))
			type = &pairs[i];
	if (!type || type->v.kind != JV_STRING || type->slen != 6 || memcmp(type->s, "sample", 6))
		return 0;

	struct trace_sample s;
	bool has_t = false;
	char why[128];
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < n; i++) {
		if (sample_key(&s, &has_t, pairs[i].k, pairs[i].klen, &pairs[i].v, why, sizeof(why)))
			return line_error(r, why);
	}
	if (!has_t)
		return line_error(r, "sample has no \"t\"");
	add_sample(r, &s);
	return 1;
}

/* ---- records through jansson -------------------------------------------- */

static void extra_add(struct strbuf *extra, const char *k, const json_t *v)
{
	char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (extra->len)
		strbuf_addch(extra, ',');
	json_escape(extra, k);
	strbuf_addch(extra, ':');
	strbuf_addstr(extra, d ? d : "null");
	free(d);
}

static char *extra_detach(struct strbuf *extra)
{
	if (!extra->len) {
		strbuf_release(extra);
		return NULL;
	}
	return strbuf_detach(extra);
}

/* Take a string value into *dst (replacing it); false when v is not a string. */
static bool take_str(char **dst, const json_t *v)
{
	if (!json_is_string(v))
		return false;
	free(*dst);
	*dst = xstrndup(json_string_value(v), json_string_length(v));
	return true;
}

static int sample_from_json(json_t *o, struct trace_sample *s, char *why, size_t whylen)
{
	const char *k;
	json_t *v;
	bool has_t = false;
	memset(s, 0, sizeof(*s));
	json_object_foreach(o, k, v) {
		struct jv x;
		jv_from_json(v, &x);
		if (sample_key(s, &has_t, k, strlen(k), &x, why, whylen))
			return -1;
	}
	if (!has_t) {
		snprintf(why, whylen, "sample has no \"t\"");
		return -1;
	}
	return 0;
}

/*
 * An event object into *ev (which the caller has zeroed). probe: the probe
 * line protocol ("type" optional, time from "mono" - origin).
 * Returns 0, or -1 with *why set to a static message.
 */
static int event_from_json(json_t *o, struct trace_event *ev, bool probe, double origin,
			   const char **why)
{
	static const struct {
		const char *name;
		size_t off;
	} strs[] = {
		{ "stage", offsetof(struct trace_event, stage) },
		{ "name", offsetof(struct trace_event, name) },
		{ "note", offsetof(struct trace_event, note) },
		{ "sha256", offsetof(struct trace_event, sha256) },
		{ "dtype", offsetof(struct trace_event, dtype) },
		{ "file", offsetof(struct trace_event, file) },
		{ "metric", offsetof(struct trace_event, metric) },
		{ "device", offsetof(struct trace_event, device) },
		{ "action", offsetof(struct trace_event, action) },
		{ "reason", offsetof(struct trace_event, reason) },
	};
	struct strbuf extra = STRBUF_INIT;
	bool has_t = false, has_mono = false;
	double t = 0, mono = 0;
	const char *k;
	json_t *v;

	ev->ndim = -1;
	json_object_foreach(o, k, v) {
		struct jv x;
		jv_from_json(v, &x);
		if (!strcmp(k, "type"))
			continue;
		if (!strcmp(k, "kind")) {
			if (!take_str(&ev->kind_name, v)) {
				*why = "event \"kind\" is not a string";
				goto fail;
			}
			ev->kind = event_kind_from_name(ev->kind_name);
			continue;
		}
		if (!strcmp(k, "t")) {
			if (!jv_number(&x, &t)) {
				*why = "event \"t\" is not a number";
				goto fail;
			}
			has_t = true;
			continue;
		}
		if (probe && !strcmp(k, "mono")) {
			if (!jv_number(&x, &mono)) {
				*why = "event \"mono\" is not a number";
				goto fail;
			}
			has_mono = true;
			continue;
		}
		bool known = false, ok = false;
		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
			if (strcmp(k, strs[i].name))
				continue;
			known = true;
			ok = take_str((char **)((char *)ev + strs[i].off), v);
			break;
		}
		if (!known) {
			known = true;
			if (!strcmp(k, "nbytes"))
				ok = ev->has_nbytes = jv_bytes(&x, &ev->nbytes);
			else if (!strcmp(k, "bytes"))
				ok = ev->has_bytes = jv_bytes(&x, &ev->bytes);
			else if (!strcmp(k, "max_bytes"))
				ok = ev->has_max_bytes = jv_bytes(&x, &ev->max_bytes);
			else if (!strcmp(k, "seconds"))
				ok = ev->has_seconds = jv_number(&x, &ev->seconds);
			else if (!strcmp(k, "from"))
				ok = ev->has_from = jv_number(&x, &ev->from);
			else if (!strcmp(k, "shape")) {
				size_t i;
				json_t *d;
				/* more dimensions than fit: kept as it was, in extra */
				ok = json_is_array(v) && json_array_size(v) <= EVENT_MAX_DIMS;
				if (ok) {
					json_array_foreach(v, i, d) {
						if (!json_is_integer(d)) {
							ok = false;
							break;
						}
						ev->shape[i] = json_integer_value(d);
					}
				}
				ev->ndim = ok ? (int)json_array_size(v) : -1;
			} else
				known = false;
		}
		/* unknown keys, and known ones of an unexpected type, are kept
		 * as they were; a known key that is null is absent */
		if (!known || (!ok && !json_is_null(v)))
			extra_add(&extra, k, v);
	}
	if (!ev->kind_name) {
		*why = "event has no \"kind\"";
		goto fail;
	}
	if (probe && has_mono)
		ev->t = mono - origin;
	else if (has_t)
		ev->t = t;
	else {
		*why = probe ? "event has no \"mono\"" : "event has no \"t\"";
		goto fail;
	}
	if (!isfinite(ev->t)) {
		*why = "event time is out of range";
		goto fail;
	}
	ev->extra_json = extra_detach(&extra);
	return 0;
fail:
	strbuf_release(&extra);
	trace_event_release(ev);
	return -1;
}

/* 0, -1 with why, -2 for an unknown format (message in why). */
static int start_from_json(json_t *o, struct trace_start *st, char *why, size_t whylen)
{
	struct strbuf extra = STRBUF_INIT;
	const char *k;
	json_t *v;
	bool port_commit = false;

	json_object_foreach(o, k, v) {
		struct jv x;
		int64_t i64;
		bool ok = true, known = true;
		jv_from_json(v, &x);
		if (!strcmp(k, "type"))
			continue;
		if (!strcmp(k, "format")) {
			if (!json_is_string(v)) {
				snprintf(why, whylen, "start \"format\" is not a string");
				strbuf_release(&extra);
				return -1;
			}
			if (strcmp(json_string_value(v), TRACE_FORMAT)) {
				snprintf(why, whylen,
					 "unknown trace format '%s' (this stagebench reads %s and stageload traces)",
					 json_string_value(v), TRACE_FORMAT);
				strbuf_release(&extra);
				return -2;
			}
			take_str(&st->format, v);
		} else if (!strcmp(k, "utc")) {
			ok = take_str(&st->utc, v);
		} else if (!strcmp(k, "mode")) {
			ok = take_str(&st->mode, v);
		} else if (!strcmp(k, "interval")) {
			ok = jv_number(&x, &st->interval) && st->interval >= 0;
			if (!ok)
				st->interval = 0;
		} else if (!strcmp(k, "seed")) {
			ok = st->has_seed = jv_int(&x, INT64_MIN, INT64_MAX, &i64);
			if (ok)
				st->seed = i64;
		} else if (!strcmp(k, "commit")) {
			ok = take_str(&st->commit, v);
		} else if (!strcmp(k, "port_commit")) {
			/* stageload's name; "commit" wins when both are there */
			if (!st->commit || port_commit)
				ok = port_commit = take_str(&st->commit, v);
		} else if (!strcmp(k, "dirty") || !strcmp(k, "port_dirty")) {
			ok = json_is_boolean(v);
			if (ok && (!st->has_dirty || !strcmp(k, "dirty"))) {
				st->has_dirty = true;
				st->dirty = json_is_true(v);
			}
		} else if (!strcmp(k, "command")) {
			size_t i;
			json_t *a;
			ok = json_is_array(v);
			json_array_foreach(v, i, a)
				if (!json_is_string(a))
					ok = false;
			if (ok) {
				st->command = xcalloc(json_array_size(v) + 1, sizeof(char *));
				json_array_foreach(v, i, a)
					st->command[i] = xstrdup(json_string_value(a));
			}
		} else if (!strcmp(k, "host")) {
			const char *hk;
			json_t *hv;
			ok = json_is_object(v);
			json_object_foreach(v, hk, hv) {
				struct jv hx;
				jv_from_json(hv, &hx);
				if (!strcmp(hk, "os"))
					take_str(&st->host_os, hv);
				else if (!strcmp(hk, "kernel"))
					take_str(&st->host_kernel, hv);
				else if (!strcmp(hk, "machine"))
					take_str(&st->host_machine, hv);
				else if (!strcmp(hk, "cpus") && jv_int(&hx, 0, 1 << 30, &i64))
					st->host_cpus = (int)i64;
				else if (!strcmp(hk, "memory"))
					jv_bytes(&hx, &st->host_memory);
				else if (!strcmp(hk, "swap"))
					jv_bytes(&hx, &st->host_swap);
			}
		} else if (!strcmp(k, "meter")) {
			const char *mk;
			json_t *mv;
			ok = json_is_object(v);
			json_object_foreach(v, mk, mv) {
				if (!strcmp(mk, "backend"))
					take_str(&st->meter_backend, mv);
				else if (!strcmp(mk, "footprint"))
					take_str(&st->meter_footprint, mv);
			}
		} else if (!strcmp(k, "labels")) {
			const char *lk;
			json_t *lv;
			ok = json_is_object(v) && !st->labels;
			if (!ok)
				goto next;
			st->labels = xcalloc(json_object_size(v), sizeof(*st->labels));
			json_object_foreach(v, lk, lv) {
				struct trace_label *l = &st->labels[st->nlabels++];
				l->key = xstrdup(lk);
				if (json_is_string(lv))
					l->value = xstrdup(json_string_value(lv));
				else
					l->value = json_dumps(lv, JSON_COMPACT | JSON_ENCODE_ANY);
			}
		} else {
			ok = known = false;
		}
next:
		if (!ok && !(known && json_is_null(v)))
			extra_add(&extra, k, v);
	}
	st->extra_json = extra_detach(&extra);
	return 0;
}

static void end_from_json(json_t *o, struct trace_end *end)
{
	struct strbuf extra = STRBUF_INIT;
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v) {
		struct jv x;
		int64_t i64;
		bool ok = true, known = true;
		jv_from_json(v, &x);
		if (!strcmp(k, "type"))
			continue;
		if (!strcmp(k, "exit")) {
			ok = end->has_exit = jv_int(&x, INT32_MIN, INT32_MAX, &i64);
			if (ok)
				end->exit_code = (int)i64;
		} else if (!strcmp(k, "signal")) {
			ok = jv_int(&x, 0, 1024, &i64);
			if (ok)
				end->signal = (int)i64;
		} else if (!strcmp(k, "stopped_by")) {
			const char *s = json_string_value(v);
			if (s && !strcmp(s, "guard"))
				end->stopped_by = STOPPED_GUARD;
			else if (s && !strcmp(s, "signal"))
				end->stopped_by = STOPPED_SIGNAL;
			else
				ok = json_is_null(v);
		} else if (!strcmp(k, "reason")) {
			ok = take_str(&end->reason, v);
		} else if (!strcmp(k, "wall")) {
			ok = end->has_wall = jv_number(&x, &end->wall);
		} else if (!strcmp(k, "cpu")) {
			ok = end->has_cpu = jv_number(&x, &end->cpu);
		} else {
			ok = known = false;
		}
		if (!ok && !(known && json_is_null(v)))
			extra_add(&extra, k, v);
	}
	end->extra_json = extra_detach(&extra);
}

/* One line. 0 ok, -1 error printed, -2 unknown format (printed). */
static int slow_line(struct reader *r, const char *p, const char *end)
{
	struct trace *tr = r->tr;
	json_error_t jerr;
	char why[512];
	const char *cwhy;
	int ret = 0;

	json_t *o = json_loadb(p, (size_t)(end - p), 0, &jerr);
	if (!o) {
		snprintf(why, sizeof(why), "malformed line: %s (column %d)", jerr.text, jerr.column);
		return line_error(r, why);
	}
	if (!json_is_object(o)) {
		json_decref(o);
		return line_error(r, "malformed line: not a JSON object");
	}
	json_t *type = json_object_get(o, "type");
	const char *ts = json_string_value(type);
	if (!type) {
		ret = line_error(r, "record has no \"type\"");
	} else if (!ts) {
		ret = line_error(r, "record \"type\" is not a string");
	} else if (!strcmp(ts, "sample")) {
		struct trace_sample s;
		if (sample_from_json(o, &s, why, sizeof(why)))
			ret = line_error(r, why);
		else
			add_sample(r, &s);
	} else if (!strcmp(ts, "event")) {
		struct trace_event ev;
		memset(&ev, 0, sizeof(ev));
		if (event_from_json(o, &ev, false, 0, &cwhy)) {
			ret = line_error(r, cwhy);
		} else {
			ev.line = r->line;
			if (tr->nevents && ev.t < r->last_event_t)
				r->events_sorted = false;
			r->last_event_t = ev.t;
			ALLOC_GROW(tr->events, tr->nevents + 1, tr->events_alloc);
			tr->events[tr->nevents++] = ev;
		}
	} else if (!strcmp(ts, "start")) {
		if (!tr->has_start) { /* a repeated start is ignored */
			int rc = start_from_json(o, &tr->start, why, sizeof(why));
			if (rc) {
				start_release(&tr->start);
				line_error(r, why);
				ret = rc;
			} else {
				tr->has_start = true;
			}
		}
	} else if (!strcmp(ts, "end")) {
		if (!tr->has_end) {
			end_from_json(o, &tr->end);
			tr->has_end = true;
		}
	}
	/* other record types: from a later minor revision, ignored */
	json_decref(o);
	return ret;
}

/* Parse text[0, len) line by line. 0, -1 (printed), -2 unknown format. */
static int parse_text(struct reader *r, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		r->line++;
		const char *q = skip_ws(p, le);
		if (q < le) {
			int rc = fast_line(r, q, le);
			if (rc < 0)
				return -1;
			if (rc == 0 && (rc = slow_line(r, q, le)) < 0)
				return rc;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
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

/* ---- zstd ------------------------------------------------------------------ */

/* A zstd frame (or a skippable frame) starts here: the magic, not the name. */
static bool is_zstd(const void *data, size_t len)
{
	const unsigned char *b = data;
	if (len < 4)
		return false;
	uint32_t magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
			 (uint32_t)b[3] << 24;
	return magic == ZSTD_MAGICNUMBER || (magic & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START;
}

/* What the reader had at the end of the last complete zstd frame. */
struct mark {
	size_t nsamples, nevents, line;
	bool has_start, has_end;
};

static void take_mark(const struct reader *r, struct mark *m)
{
	m->nsamples = r->tr->nsamples;
	m->nevents = r->tr->nevents;
	m->line = r->line;
	m->has_start = r->tr->has_start;
	m->has_end = r->tr->has_end;
}

/* Drop the records read after the mark (those of a frame cut short). */
static void back_to_mark(struct reader *r, const struct mark *m)
{
	struct trace *tr = r->tr;
	tr->nsamples = m->nsamples;
	while (tr->nevents > m->nevents)
		trace_event_release(&tr->events[--tr->nevents]);
	if (tr->has_end && !m->has_end) {
		free(tr->end.reason);
		free(tr->end.extra_json);
		memset(&tr->end, 0, sizeof(tr->end));
		tr->has_end = false;
	}
	if (tr->has_start && !m->has_start) {
		start_release(&tr->start);
		tr->has_start = false;
	}
}

/*
 * Decompression runs in a second thread, a chunk ahead of the parser: one
 * producer, one consumer, two chunk buffers handed back and forth under a
 * mutex. Without the thread (pthread_create failed) the parser decompresses
 * each chunk itself; the chunks and what is done with them are the same.
 */
#define ZSTD_CHUNK (256u << 10)

struct zchunk {
	char *buf;  /* ZSTD_CHUNK bytes */
	size_t len; /* text in buf */
	size_t z;   /* what ZSTD_decompressStream() returned */
	bool last;  /* nothing follows: an error, or the input is all used */
};

struct zsource {
	ZSTD_DStream *ds;
	ZSTD_inBuffer in;
	struct zchunk chunk[2];
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool full[2]; /* chunk[i] holds text the parser has not given back */
	bool quit;    /* the parser stopped: the producer stops too */
};

static void decompress_chunk(struct zsource *src, struct zchunk *c)
{
	ZSTD_outBuffer ob = { c->buf, ZSTD_CHUNK, 0 };
	c->z = ZSTD_decompressStream(src->ds, &ob, &src->in);
	c->len = ob.pos;
	c->last = ZSTD_isError(c->z) || (src->in.pos == src->in.size && ob.pos < ob.size);
}

static void *zproducer(void *arg)
{
	struct zsource *src = arg;
	for (int i = 0;; i ^= 1) {
		pthread_mutex_lock(&src->mu);
		while (src->full[i] && !src->quit)
			pthread_cond_wait(&src->cond, &src->mu);
		bool quit = src->quit;
		pthread_mutex_unlock(&src->mu);
		if (quit)
			break;
		decompress_chunk(src, &src->chunk[i]);
		bool last = src->chunk[i].last;
		pthread_mutex_lock(&src->mu);
		src->full[i] = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->mu);
		if (last)
			break;
	}
	return NULL;
}

/* Chunk i (0, 1, 0, ...) of the text, in order. */
static struct zchunk *next_chunk(struct zsource *src, int i)
{
	if (!src->threaded) {
		decompress_chunk(src, &src->chunk[i]);
		return &src->chunk[i];
	}
	pthread_mutex_lock(&src->mu);
	while (!src->full[i])
		pthread_cond_wait(&src->cond, &src->mu);
	pthread_mutex_unlock(&src->mu);
	return &src->chunk[i];
}

/* The parser is done with chunk i: the producer may fill it again. */
static void give_back_chunk(struct zsource *src, int i)
{
	if (!src->threaded)
		return;
	pthread_mutex_lock(&src->mu);
	src->full[i] = false;
	pthread_cond_broadcast(&src->cond);
	pthread_mutex_unlock(&src->mu);
}

static int zsource_start(struct zsource *src, const void *data, size_t len)
{
	memset(src, 0, sizeof(*src));
	if (!(src->ds = ZSTD_createDStream()))
		return -1;
	ZSTD_initDStream(src->ds);
	src->in = (ZSTD_inBuffer){ data, len, 0 };
	src->chunk[0].buf = xmalloc(ZSTD_CHUNK);
	src->chunk[1].buf = xmalloc(ZSTD_CHUNK);
	pthread_mutex_init(&src->mu, NULL);
	pthread_cond_init(&src->cond, NULL);
	src->threaded = !pthread_create(&src->thread, NULL, zproducer, src);
	return 0;
}

static void zsource_stop(struct zsource *src)
{
	if (src->threaded) {
		pthread_mutex_lock(&src->mu);
		src->quit = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->mu);
		pthread_join(src->thread, NULL);
	}
	pthread_cond_destroy(&src->cond);
	pthread_mutex_destroy(&src->mu);
	free(src->chunk[0].buf);
	free(src->chunk[1].buf);
	ZSTD_freeDStream(src->ds);
}

/*
 * Parse the complete lines of text[0, len), in place; a line cut by the end
 * of the chunk waits in tail for the rest.
 */
static int parse_chunk(struct reader *r, struct strbuf *tail, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	const char *nl;
	int ret;

	if (tail->len) {
		if (!(nl = memchr(p, '\n', len))) {
			strbuf_add(tail, p, len);
			return 0;
		}
		strbuf_add(tail, p, (size_t)(nl + 1 - p));
		ret = parse_text(r, tail->buf, tail->len);
		strbuf_reset(tail);
		if (ret)
			return ret;
		p = nl + 1;
	}
	if (p < end && (nl = memrchr(p, '\n', (size_t)(end - p)))) {
		if ((ret = parse_text(r, p, (size_t)(nl + 1 - p))))
			return ret;
		p = nl + 1;
	}
	strbuf_add(tail, p, (size_t)(end - p));
	return 0;
}

/*
 * Decompress and parse as the text comes, a chunk at a time (the text of a
 * long trace never sits in memory whole). Only the records of complete
 * frames are kept: a frame cut short (the writer killed inside write(2)) or
 * corrupt is reported at the line after the last complete one.
 */
static int read_zstd(struct reader *r, const void *data, size_t len)
{
	struct zsource src;
	struct strbuf tail = STRBUF_INIT;
	struct mark mark;
	size_t z = 0;
	int ret = 0;

	if (zsource_start(&src, data, len))
		return error("%s: cannot allocate a zstd context", r->name);
	take_mark(r, &mark);
	for (int i = 0;; i ^= 1) {
		struct zchunk *c = next_chunk(&src, i);
		bool last = c->last;
		z = c->z;
		if (ZSTD_isError(z))
			break;
		ret = parse_chunk(r, &tail, c->buf, c->len);
		give_back_chunk(&src, i);
		if (ret)
			break;
		if (z == 0) /* a frame ended and all of its text is out */
			take_mark(r, &mark);
		if (last)
			break;
	}
	zsource_stop(&src);
	if (!ret && ZSTD_isError(z)) {
		back_to_mark(r, &mark);
		r->tr->damaged = true;
		ret = error("%s:%zu: corrupt zstd data: %s (the %zu lines before it are kept)",
			    r->name, mark.line + 1, ZSTD_getErrorName(z), mark.line);
	} else if (!ret && z != 0) {
		back_to_mark(r, &mark);
		r->tr->damaged = true;
		ret = error("%s:%zu: truncated zstd frame (the recording was cut off here; "
			    "the %zu lines before it are kept)", r->name, mark.line + 1, mark.line);
	} else if (!ret && tail.len) { /* a last line with no newline */
		ret = parse_text(r, tail.buf, tail.len);
	}
	strbuf_release(&tail);
	return ret;
}

/* ---- entry points ---------------------------------------------------------- */

int trace_read_mem(const char *name, const void *data, size_t len, struct trace *tr)
{
	struct reader r = { .name = name, .tr = tr, .samples_sorted = true, .events_sorted = true };
	int ret;

	memset(tr, 0, sizeof(*tr));
	tr->path = xstrdup(name);
	if (!len) {
		tr->damaged = true;
		return error("%s: empty file (no trace records)", name);
	}
	if (is_zstd(data, len))
		ret = read_zstd(&r, data, len);
	else
		ret = parse_text(&r, data, len);

	if (ret == -2) { /* unknown format: refused with no records */
		records_release(tr);
		tr->damaged = true;
		return -1;
	}
	if (!r.samples_sorted)
		sort_by_t(tr->samples, tr->nsamples, sizeof(*tr->samples));
	if (!r.events_sorted)
		sort_by_t(tr->events, tr->nevents, sizeof(*tr->events));
	if (!ret && !tr->has_start) {
		tr->damaged = true;
		ret = error("%s: no start record (not a stagebench or stageload trace?)", name);
	}
	return ret ? -1 : 0;
}

int trace_read(const char *path, struct trace *tr)
{
	char *data;
	size_t len;
	if (read_file(path, &data, &len)) {
		memset(tr, 0, sizeof(*tr));
		tr->path = xstrdup(path);
		tr->damaged = true;
		return -1;
	}
	int ret = trace_read_mem(path, data, len, tr);
	free(data);
	return ret;
}

int trace_parse_probe_line(const char *line, size_t len, double mono_origin_s,
			   struct trace_event *ev, const char **errmsg)
{
	json_error_t jerr;
	const char *why = NULL;

	memset(ev, 0, sizeof(*ev));
	ev->ndim = -1;
	json_t *o = json_loadb(line, len, 0, &jerr);
	if (!o) {
		*errmsg = "not valid JSON";
		return -1;
	}
	if (!json_is_object(o)) {
		why = "not a JSON object";
	} else {
		json_t *type = json_object_get(o, "type");
		if (type && (!json_is_string(type) || strcmp(json_string_value(type), "event")))
			why = "not an event record";
		else if (event_from_json(o, ev, true, mono_origin_s, &why))
			; /* why set */
		else
			why = NULL;
	}
	json_decref(o);
	if (why) {
		*errmsg = why;
		return -1;
	}
	return 0;
}
