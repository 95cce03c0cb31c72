/* npy.c -- a strict reader for NumPy .npy files holding float arrays */
#include "npy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#include "../common/util.h"

static const char magic[6] = { '\x93', 'N', 'U', 'M', 'P', 'Y' };

/* A cursor over the header text, for messages that say where it went wrong. */
struct hdr {
	const char *name;
	const char *s, *p, *end;
};

static int hdr_error(struct hdr *h, const char *what)
{
	return error("%s: malformed .npy header at byte %zu of the header: %s",
		     h->name, (size_t)(h->p - h->s), what);
}

static void npy_skip_ws(struct hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

static bool eat(struct hdr *h, char c)
{
	npy_skip_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return true;
	}
	return false;
}

/* A Python string literal in ' or " without escapes; into out[cap]. */
static int parse_str(struct hdr *h, char *out, size_t cap)
{
	npy_skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return hdr_error(h, "expected a quoted string");
	char q = *h->p++;
	const char *start = h->p;
	while (h->p < h->end && *h->p != q) {
		if (*h->p == '\\' || *h->p == '\n')
			return hdr_error(h, "unexpected character in a string");
		h->p++;
	}
	if (h->p >= h->end)
		return hdr_error(h, "unterminated string");
	size_t n = (size_t)(h->p - start);
	h->p++;
	if (n + 1 > cap)
		return hdr_error(h, "string too long");
	memcpy(out, start, n);
	out[n] = '\0';
	return 0;
}

static int parse_bool(struct hdr *h, bool *v)
{
	npy_skip_ws(h);
	size_t left = (size_t)(h->end - h->p);
	if (left >= 4 && !memcmp(h->p, "True", 4)) {
		*v = true;
		h->p += 4;
		return 0;
	}
	if (left >= 5 && !memcmp(h->p, "False", 5)) {
		*v = false;
		h->p += 5;
		return 0;
	}
	return hdr_error(h, "expected True or False");
}

static int parse_shape(struct hdr *h, struct npy_array *a)
{
	if (!eat(h, '('))
		return hdr_error(h, "expected '(' for the shape");
	a->ndim = 0;
	for (;;) {
		if (eat(h, ')'))
			return 0;
		npy_skip_ws(h);
		if (h->p >= h->end || *h->p < '0' || *h->p > '9')
			return hdr_error(h, "expected a non-negative integer in the shape");
		int64_t v = 0;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return hdr_error(h, "shape dimension too large");
			v = v * 10 + (*h->p++ - '0');
		}
		if (h->p < h->end && *h->p == 'L') /* Python 2 longs */
			h->p++;
		if (a->ndim == NPY_MAX_DIMS)
			return hdr_error(h, "more than 32 dimensions");
		a->shape[a->ndim++] = v;
		if (eat(h, ','))
			continue;
		if (eat(h, ')'))
			return 0;
		return hdr_error(h, "expected ',' or ')' in the shape");
	}
}

static int set_dtype(const char *name, struct npy_array *a)
{
	const char *d = a->descr;
	if (d[0] == '>' && strlen(d) == 3 && d[2] != '1')
		return error("%s: big-endian dtype '%s' is not supported "
			     "(save with arr.astype(arr.dtype.newbyteorder('<')))", name, d);
	static const struct { const char *descr; enum npy_dtype t; size_t size; } known[] = {
		{ "<f2", NPY_F16, 2 }, { "<f4", NPY_F32, 4 }, { "<f8", NPY_F64, 8 },
		{ "<V2", NPY_RAW16, 2 }, { "|V2", NPY_RAW16, 2 },
		{ "<u2", NPY_RAW16, 2 }, { "<i2", NPY_RAW16, 2 },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (!strcmp(d, known[i].descr)) {
			a->dtype = known[i].t;
			a->itemsize = known[i].size;
			return 0;
		}
	}
	return error("%s: unsupported dtype '%s' (expected '<f2', '<f4', '<f8', "
		     "or 2-byte bfloat16 bits as '<u2', '<i2', '<V2')", name, d);
}

static int parse_header(const char *name, const char *text, size_t len, struct npy_array *a)
{
	struct hdr h = { name, text, text, text + len };
	bool have_descr = false, have_order = false, have_shape = false, fortran = false;

	if (!eat(&h, '{'))
		return hdr_error(&h, "expected '{'");
	for (;;) {
		if (eat(&h, '}'))
			break;
		char key[32];
		if (parse_str(&h, key, sizeof(key)))
			return -1;
		if (!eat(&h, ':'))
			return hdr_error(&h, "expected ':' after a key");
		if (!strcmp(key, "descr") && !have_descr) {
			npy_skip_ws(&h);
			if (h.p < h.end && *h.p == '[')
				return error("%s: structured dtypes are not supported", name);
			if (parse_str(&h, a->descr, sizeof(a->descr)))
				return -1;
			have_descr = true;
		} else if (!strcmp(key, "fortran_order") && !have_order) {
			if (parse_bool(&h, &fortran))
				return -1;
			have_order = true;
		} else if (!strcmp(key, "shape") && !have_shape) {
			if (parse_shape(&h, a))
				return -1;
			have_shape = true;
		} else {
			return hdr_error(&h, "unexpected or repeated key");
		}
		if (eat(&h, ','))
			continue;
		if (eat(&h, '}'))
			break;
		return hdr_error(&h, "expected ',' or '}'");
	}
	npy_skip_ws(&h);
	if (h.p != h.end)
		return hdr_error(&h, "junk after the header dict");
	if (!have_descr || !have_order || !have_shape)
		return error("%s: malformed .npy header: it lacks '%s'", name,
			     !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
	if (set_dtype(name, a))
		return -1;
	if (fortran)
		return error("%s: fortran_order True is not supported "
			     "(save with np.ascontiguousarray(arr))", name);
	return 0;
}

/* Parse a file image; on success *owned (may be NULL) becomes the array's
 * buffer, so npy_read keeps the file it read instead of copying the data. */
static int parse(const char *name, const void *bytes, size_t len, char **owned,
		 struct npy_array *a)
{
	npy_release(a);
	const uint8_t *b = bytes;
	if (len < 10 || memcmp(b, magic, sizeof(magic)))
		return error("%s: not a .npy file (no \\x93NUMPY magic)", name);
	int major = b[6], minor = b[7];
	size_t hlen, off;
	if (major == 1) {
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		off = 10;
	} else if (major == 2 || major == 3) {
		if (len < 12)
			return error("%s: truncated .npy file (%zu bytes)", name, len);
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		off = 12;
	} else {
		return error("%s: unsupported .npy format version %d.%d", name, major, minor);
	}
	if (minor != 0)
		return error("%s: unsupported .npy format version %d.%d", name, major, minor);
	if (hlen > len - off)
		return error("%s: truncated .npy file: the header says %zu header bytes, "
			     "the file has %zu", name, hlen, len - off);
	a->version = major;
	if (parse_header(name, (const char *)b + off, hlen, a))
		goto fail;

	uint64_t count = 1;
	for (int i = 0; i < a->ndim; i++) {
		uint64_t d = (uint64_t)a->shape[i];
		if (d && count > UINT64_MAX / d) {
			error("%s: shape too large", name);
			goto fail;
		}
		count *= d;
	}
	size_t have = len - off - hlen;
	if (count > (uint64_t)SIZE_MAX / a->itemsize) {
		error("%s: shape too large", name);
		goto fail;
	}
	size_t need = (size_t)(count * a->itemsize);
	if (have < need) {
		error("%s: truncated .npy file: %s shape needs %zu data bytes, the file has %zu",
		      name, npy_dtype_name(a->dtype), need, have);
		goto fail;
	}
	if (have > need) {
		error("%s: %zu unexpected bytes after the array data", name, have - need);
		goto fail;
	}
	a->count = count;
	a->data_bytes = need;
	if (owned) {
		a->buf_ = *owned;
		*owned = NULL;
		a->data = b + off + hlen;
	} else {
		a->buf_ = xmalloc(need ? need : 1);
		memcpy(a->buf_, b + off + hlen, need);
		a->data = (const uint8_t *)a->buf_;
	}
	return 0;
fail:
	npy_release(a);
	return -1;
}

int npy_parse(const char *name, const void *bytes, size_t len, struct npy_array *a)
{
	return parse(name, bytes, len, NULL, a);
}

int npy_read_fd(const char *name, int fd, struct npy_array *a)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	npy_release(a);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			strbuf_release(&sb);
			return error("cannot read '%s': %s", name, strerror(e));
		}
		if (!n)
			break;
		strbuf_add(&sb, buf, (size_t)n);
	}
	size_t len = sb.len;
	char *data = strbuf_detach(&sb);
	int rc = parse(name, data, len, &data, a);
	free(data); /* NULL when the array took it */
	return rc;
}

int npy_read(const char *path, struct npy_array *a)
{
	char *data;
	size_t len;
	npy_release(a);
	if (read_file(path, &data, &len))
		return -1;
	int rc = parse(path, data, len, &data, a);
	free(data); /* NULL when the array took it */
	return rc;
}

void npy_release(struct npy_array *a)
{
	if (!a)
		return;
	free(a->buf_);
	memset(a, 0, sizeof(*a));
}

int npy_as_bfloat16(struct npy_array *a)
{
	if (a->dtype != NPY_RAW16 && a->dtype != NPY_BF16)
		return -1;
	a->dtype = NPY_BF16;
	return 0;
}

double npy_half_to_double(uint16_t h)
{
	int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	double v;
	if (exp == 0)
		v = ldexp(mant, -24);
	else if (exp == 31)
		v = mant ? NAN : INFINITY;
	else
		v = ldexp(mant | 0x400, exp - 25);
	return sign ? -v : v;
}

double npy_bfloat16_to_double(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

double npy_get(const struct npy_array *a, uint64_t i)
{
	const uint8_t *p = a->data + i * a->itemsize;
	switch (a->dtype) {
	case NPY_F16:
		return npy_half_to_double((uint16_t)(p[0] | p[1] << 8));
	case NPY_BF16:
		return npy_bfloat16_to_double((uint16_t)(p[0] | p[1] << 8));
	case NPY_F32: {
		uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			     (uint32_t)p[3] << 24;
		float f;
		memcpy(&f, &u, sizeof(f));
		return f;
	}
	case NPY_F64: {
		uint64_t u = 0;
		for (int k = 7; k >= 0; k--)
			u = u << 8 | p[k];
		double d;
		memcpy(&d, &u, sizeof(d));
		return d;
	}
	case NPY_RAW16:
	case NPY_NONE:
		break;
	}
	BUG("npy_get on an array of dtype %s", npy_dtype_name(a->dtype));
}

const char *npy_dtype_name(enum npy_dtype t)
{
	switch (t) {
	case NPY_F16: return "float16";
	case NPY_BF16: return "bfloat16";
	case NPY_F32: return "float32";
	case NPY_F64: return "float64";
	case NPY_RAW16: return "raw16";
	case NPY_NONE: break;
	}
	return "none";
}

enum npy_dtype npy_dtype_from_name(const char *name)
{
	if (!name)
		return NPY_NONE;
	if (str_starts_with(name, "torch."))
		name += 6;
	static const struct { const char *n; enum npy_dtype t; } names[] = {
		{ "float16", NPY_F16 }, { "half", NPY_F16 },
		{ "bfloat16", NPY_BF16 },
		{ "float32", NPY_F32 }, { "float", NPY_F32 },
		{ "float64", NPY_F64 }, { "double", NPY_F64 },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i].n))
			return names[i].t;
	return NPY_NONE;
}
