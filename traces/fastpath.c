/* fastpath.c -- the reader's JSON fast path: sample lines parsed in place
 *
 * A sample line the writer wrote (or stageload did) is a flat object of
 * numbers: it is parsed straight into a struct trace_sample, numbers exact
 * (the very double strtod would give). So is an event line of known keys
 * with values of the expected types. Anything else (other keys, nesting,
 * escapes, an odd number) returns 0 and goes to decode.c through jansson.
 */
#include "reader_int.h"

#include <stdlib.h>

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
	p = reader_skip_ws(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = reader_skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return reader_skip_ws(p + 1, end) == end ? 0 : -1;
	for (;;) {
		if (n == FAST_MAX_PAIRS || p >= end || *p != '"')
			return -1;
		struct pair *pr = &pairs[n++];
		if (!(p = fast_string(p, end, &pr->k, &pr->klen)))
			return -1;
		p = reader_skip_ws(p, end);
		if (p >= end || *p != ':')
			return -1;
		p = reader_skip_ws(p + 1, end);
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
		p = reader_skip_ws(p, end);
		if (p < end && *p == ',') {
			p = reader_skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}')
			return reader_skip_ws(p + 1, end) == end ? n : -1;
		return -1;
	}
}

/* k[0, len) is name: a compare of fixed size */
#define KEY_IS(k, end, name) \
	((size_t)((end) - (k)) > sizeof(name) - 1 && !memcmp((k), name "\"", sizeof(name)))


/*
 * The key after an opening quote at k when it is a sample key followed by
 * its closing quote (then the key is exactly that name: no escapes in it).
 * Returns its sample_key_index() with *klen, or -1 (look at it the long way).
 * One byte compare per field, then one fixed-size compare.
 */
static inline int known_sample_key(const char *k, const char *end, size_t *klen)
{
	if (k >= end)
		return -1;
	if (KEY_IS(k, end, "t")) {
		*klen = 1;
		return SK_T;
	}
#define X(UP, key, bit, kind, what) \
	if (*k == #key[0] && KEY_IS(k, end, #key)) { \
		*klen = sizeof(#key) - 1; \
		return SFI_##UP; \
	}
	TRACE_SAMPLE_FIELDS(X)
#undef X
	return -1;
}

/*
 * A byte count or process count as the writer writes it: "0", or up to 19
 * digits not starting with 0, followed by ',' or '}'. NULL for anything
 * else (a sign, a fraction, an exponent, more digits): fast_number() and
 * sample_key_apply() then see it, which give the same value for these.
 */
static inline const char *plain_uint(const char *p, const char *end, uint64_t *out)
{
	const char *q = p;
	uint64_t m = 0;
	if (*q == '0') {
		q++;
	} else {
		const char *lim = end - q > 19 ? q + 19 : end;
		if (end - q >= 8 && eight_digits(q, &m))
			q += 8;
		while (q < lim && is_digit(*q))
			m = m * 10 + (uint64_t)(*q++ - '0');
	}
	if (q >= end || (*q != ',' && *q != '}'))
		return NULL;
	*out = m;
	return q;
}

#define STORE_BYTES(key) \
	s->key = m; \
	break;
#define STORE_COUNT(key) \
	if (m > 2147483647) \
		return false; \
	s->key = (int)m; \
	break;
#define STORE_NUMBER(key) return false;

/* Field i (an SFI_*) of kind BYTES or COUNT set to m; false for a NUMBER
 * field or a count out of range (the general path reports it). */
static inline bool store_uint(struct trace_sample *s, int i, uint64_t m)
{
	switch (i) {
#define X(UP, key, bit, kind, what) \
	case SFI_##UP: \
		STORE_##kind(key)
	TRACE_SAMPLE_FIELDS(X)
#undef X
	default:
		return false;
	}
	s->fields |= trace_sample_fields[i].bit;
	return true;
}

/*
 * The writer's own sample lines (and stageload's) start with this: parse
 * the rest straight into the sample. 1 done, 0 use another path, -1 error.
 */
#define SAMPLE_PREFIX "{\"type\":\"sample\","
static int direct_sample(const char *p, const char *end, struct trace_sample *s, char *why,
			 size_t whylen)
{
	bool has_t = false;

	memset(s, 0, sizeof(*s));
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
		const char *q;
		uint64_t m;
		if (i >= 0 && i != SK_T && is_digit(*p) && (q = plain_uint(p, end, &m)) &&
		    store_uint(s, i, m)) {
			p = q; /* a byte or process count: no struct jv */
		} else if (*p == '-' || is_digit(*p)) {
			if (!(p = fast_number(p, end, &v)))
				return 0;
			if (sample_key_apply(s, &has_t, i, &v, why, whylen))
				return -1;
		} else {
			return 0; /* strings, null, ...: the general path */
		}
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}' && reader_skip_ws(p + 1, end) == end)
			break;
		return 0;
	}
	if (!has_t) {
		snprintf(why, whylen, "sample has no \"t\"");
		return -1;
	}
	return FAST_SAMPLE;
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

/* ---- events: the flat ones of known keys, as decode.c would read them ---- */

/* The event keys the fast path takes; any other key (one that would go to
 * extra_json, "shape", "versions", "mono") leaves the line to decode.c. */
enum { EK_TYPE, EK_KIND, EK_T, EK_STAGE, EK_NAME, EK_NOTE, EK_SHA256, EK_DTYPE, EK_FILE,
       EK_METRIC, EK_DEVICE, EK_ACTION, EK_REASON, EK_NBYTES, EK_BYTES, EK_MAX_BYTES,
       EK_SECONDS, EK_FROM, EK_N };

static const struct {
	const char *name;
	size_t off; /* of the string member (EK_STAGE .. EK_REASON) */
} event_keys[EK_N] = {
	[EK_TYPE] = { "type", 0 }, [EK_KIND] = { "kind", 0 }, [EK_T] = { "t", 0 },
	[EK_STAGE] = { "stage", offsetof(struct trace_event, stage) },
	[EK_NAME] = { "name", offsetof(struct trace_event, name) },
	[EK_NOTE] = { "note", offsetof(struct trace_event, note) },
	[EK_SHA256] = { "sha256", offsetof(struct trace_event, sha256) },
	[EK_DTYPE] = { "dtype", offsetof(struct trace_event, dtype) },
	[EK_FILE] = { "file", offsetof(struct trace_event, file) },
	[EK_METRIC] = { "metric", offsetof(struct trace_event, metric) },
	[EK_DEVICE] = { "device", offsetof(struct trace_event, device) },
	[EK_ACTION] = { "action", offsetof(struct trace_event, action) },
	[EK_REASON] = { "reason", offsetof(struct trace_event, reason) },
	[EK_NBYTES] = { "nbytes", 0 }, [EK_BYTES] = { "bytes", 0 },
	[EK_MAX_BYTES] = { "max_bytes", 0 }, [EK_SECONDS] = { "seconds", 0 },
	[EK_FROM] = { "from", 0 },
};

static int event_key(const struct pair *pr)
{
	for (int i = 0; i < EK_N; i++)
		if (strlen(event_keys[i].name) == pr->klen && !memcmp(event_keys[i].name, pr->k, pr->klen))
			return i;
	return -1;
}

/* A number jansson reads too: an integer it holds (int64_t), or a real. */
static bool jansson_number(const struct jv *v)
{
	return v->kind == JV_REAL || (v->kind == JV_INT && v->u <= (uint64_t)INT64_MAX);
}

/* One pair into ev; false when it is not what decode.c would take as is. */
static bool event_pair(struct trace_event *ev, int k, const struct pair *pr, bool *has_t)
{
	const struct jv *v = &pr->v;
	if (k >= EK_STAGE && k <= EK_REASON) {
		if (v->kind != JV_STRING)
			return false;
		*(char **)((char *)ev + event_keys[k].off) = xstrndup(pr->s, pr->slen);
		return true;
	}
	if (k == EK_TYPE)
		return true; /* "event": the caller saw it */
	if (k == EK_KIND) {
		if (v->kind != JV_STRING)
			return false;
		ev->kind_name = xstrndup(pr->s, pr->slen);
		return true;
	}
	if (!jansson_number(v))
		return false;
	switch (k) {
	case EK_T:
		return *has_t = jv_number(v, &ev->t);
	case EK_NBYTES:
		return ev->has_nbytes = jv_bytes(v, &ev->nbytes);
	case EK_BYTES:
		return ev->has_bytes = jv_bytes(v, &ev->bytes);
	case EK_MAX_BYTES:
		return ev->has_max_bytes = jv_bytes(v, &ev->max_bytes);
	case EK_SECONDS:
		return ev->has_seconds = jv_number(v, &ev->seconds);
	default: /* EK_FROM */
		return ev->has_from = jv_number(v, &ev->from);
	}
}

/* An event line of n pairs into *ev: 1, or 0 (released) for decode.c to
 * read, which it does in the same way or with the message of a fault. */
static int event_from_pairs(const struct pair *pairs, int n, struct trace_event *ev)
{
	unsigned seen = 0;
	bool has_t = false;
	memset(ev, 0, sizeof(*ev));
	ev->ndim = -1;
	for (int i = 0; i < n; i++) {
		int k = event_key(&pairs[i]);
		if (k < 0 || (seen & 1u << k) || !event_pair(ev, k, &pairs[i], &has_t))
			goto other;
		seen |= 1u << k;
	}
	if (!ev->kind_name || !has_t)
		goto other;
	ev->kind = event_kind_from_name(ev->kind_name);
	if (ev->kind != EV_VERSIONS)
		return 1;
other:
	trace_event_release(ev);
	return 0;
}

/* The record type of a flat object: its "type" string, or NULL. */
static const struct pair *type_of(const struct pair *pairs, int n)
{
	const struct pair *type = NULL;
	for (int i = 0; i < n; i++)
		if (pairs[i].klen == 4 && !memcmp(pairs[i].k, "type", 4))
			type = &pairs[i];
	return type && type->v.kind == JV_STRING ? type : NULL;
}

int fast_record(const char *p, const char *end, struct trace_sample *s, struct trace_event *ev,
		char *why, size_t whylen)
{
	if ((size_t)(end - p) > sizeof(SAMPLE_PREFIX) && has_sample_prefix(p)) {
		int rc = direct_sample(p, end, s, why, whylen);
		if (rc)
			return rc;
	}
	struct pair pairs[FAST_MAX_PAIRS];
	int n = fast_object(p, end, pairs);
	if (n < 0)
		return 0;
	const struct pair *type = type_of(pairs, n);
	if (type && type->slen == 5 && !memcmp(type->s, "event", 5))
		return event_from_pairs(pairs, n, ev) ? FAST_EVENT : 0;
	if (!type || type->slen != 6 || memcmp(type->s, "sample", 6))
		return 0;

	bool has_t = false;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < n; i++) {
		if (sample_key_apply(s, &has_t, sample_key_index(pairs[i].k, pairs[i].klen), &pairs[i].v,
				     why, whylen))
			return -1;
	}
	if (!has_t) {
		snprintf(why, whylen, "sample has no \"t\"");
		return -1;
	}
	return FAST_SAMPLE;
}

