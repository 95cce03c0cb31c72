/* test_npy.c -- the .npy reader: each dtype, shape and version, and bad files */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/npy.h"

/* Build a .npy image as numpy does: magic, version, header length, the dict
 * padded with spaces to a multiple of 64 and ended by '\n', then the data. */
static size_t make_npy(uint8_t *out, int major, const char *dict, const void *data, size_t n)
{
	size_t pre = major == 1 ? 10 : 12;
	size_t hlen = strlen(dict) + 1;
	while ((pre + hlen) % 64)
		hlen++;
	memcpy(out, "\x93NUMPY", 6);
	out[6] = (uint8_t)major;
	out[7] = 0;
	out[8] = (uint8_t)(hlen & 0xff);
	out[9] = (uint8_t)(hlen >> 8);
	if (major != 1) {
		out[10] = (uint8_t)(hlen >> 16);
		out[11] = (uint8_t)(hlen >> 24);
	}
	memset(out + pre, ' ', hlen);
	memcpy(out + pre, dict, strlen(dict));
	out[pre + hlen - 1] = '\n';
	memcpy(out + pre + hlen, data, n);
	return pre + hlen + n;
}

static uint8_t img[4096];

Test(npy, float32_2x3_version_1_reads_shape_and_values)
{
	float v[6] = { 0.5f, -1.0f, 2.25f, 1e-30f, 3.0f, -0.0f };
	size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof(v));
	struct npy_array a = NPY_ARRAY_INIT;
	cr_assert_eq(npy_parse("t.npy", img, n, &a), 0);
	cr_assert_eq(a.version, 1);
	cr_assert_eq(a.dtype, NPY_F32);
	cr_assert_eq(a.itemsize, 4);
	cr_assert_eq(a.ndim, 2);
	cr_assert_eq(a.shape[0], 2);
	cr_assert_eq(a.shape[1], 3);
	cr_assert_eq(a.count, 6);
	cr_assert_eq(a.data_bytes, sizeof(v));
	cr_assert_eq(memcmp(a.data, v, sizeof(v)), 0);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(npy_get(&a, (uint64_t)i), (double)v[i], "element %d", i);
	cr_assert(signbit(npy_get(&a, 5)));
	npy_release(&a);
	cr_assert_null(a.data);
}

Test(npy, float16_values_are_decoded_exactly)
{
	/* 1.0, -2.0, 65504 (largest), 2^-24 (smallest subnormal), +inf, a NaN */
	uint16_t h[6] = { 0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x7e00 };
	size_t n = make_npy(img, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (6,), }", h, sizeof(h));
	struct npy_array a = NPY_ARRAY_INIT;
	cr_assert_eq(npy_parse("h.npy", img, n, &a), 0);
	cr_assert_eq(a.dtype, NPY_F16);
	cr_assert_eq(a.ndim, 1);
	cr_assert_eq(npy_get(&a, 0), 1.0);
	cr_assert_eq(npy_get(&a, 1), -2.0);
	cr_assert_eq(npy_get(&a, 2), 65504.0);
	cr_assert_eq(npy_get(&a, 3), ldexp(1.0, -24));
	cr_assert(isinf(npy_get(&a, 4)) && npy_get(&a, 4) > 0);
	cr_assert(isnan(npy_get(&a, 5)));
	npy_release(&a);
}

Test(npy, float64_zero_d_array_version_2)
{
	double d = 3.141592653589793;
	size_t n = make_npy(img, 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &d, sizeof(d));
	struct npy_array a = NPY_ARRAY_INIT;
	cr_assert_eq(npy_parse("d.npy", img, n, &a), 0);
	cr_assert_eq(a.version, 2);
	cr_assert_eq(a.ndim, 0);
	cr_assert_eq(a.count, 1);
	cr_assert_eq(npy_get(&a, 0), d);
	npy_release(&a);
}

Test(npy, version_3_header_and_zero_size_array)
{
	size_t n = make_npy(img, 3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (0, 4)}", "", 0);
	struct npy_array a = NPY_ARRAY_INIT;
	cr_assert_eq(npy_parse("z.npy", img, n, &a), 0);
	cr_assert_eq(a.version, 3);
	cr_assert_eq(a.ndim, 2);
	cr_assert_eq(a.shape[1], 4);
	cr_assert_eq(a.count, 0);
	cr_assert_eq(a.data_bytes, 0);
	npy_release(&a);
}

Test(npy, bfloat16_bits_as_u2_are_raw_until_the_event_says_bfloat16)
{
	/* 0x3f80 = 1.0, 0x4049 = 3.140625, 0xbf00 = -0.5 in bfloat16 */
	uint16_t b[3] = { 0x3f80, 0x4049, 0xbf00 };
	const char *descrs[] = { "<u2", "<i2", "<V2", "|V2" };
	for (size_t k = 0; k < 4; k++) {
		char dict[128];
		snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", descrs[k]);
		size_t n = make_npy(img, 1, dict, b, sizeof(b));
		struct npy_array a = NPY_ARRAY_INIT;
		cr_assert_eq(npy_parse("b.npy", img, n, &a), 0, "descr %s", descrs[k]);
		cr_assert_eq(a.dtype, NPY_RAW16);
		cr_assert_eq(npy_as_bfloat16(&a), 0);
		cr_assert_eq(a.dtype, NPY_BF16);
		cr_assert_eq(npy_get(&a, 0), 1.0);
		cr_assert_eq(npy_get(&a, 1), 3.140625);
		cr_assert_eq(npy_get(&a, 2), -0.5);
		npy_release(&a);
	}
}

Test(npy, bfloat16_reinterpretation_refused_for_float_data)
{
	float v = 1.0f;
	size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &v, sizeof(v));
	struct npy_array a = NPY_ARRAY_INIT;
	cr_assert_eq(npy_parse("f.npy", img, n, &a), 0);
	cr_assert_eq(npy_as_bfloat16(&a), -1);
	cr_assert_eq(a.dtype, NPY_F32);
	npy_release(&a);
}

Test(npy, dtype_names_from_events)
{
	cr_assert_eq(npy_dtype_from_name("float32"), NPY_F32);
	cr_assert_eq(npy_dtype_from_name("torch.bfloat16"), NPY_BF16);
	cr_assert_eq(npy_dtype_from_name("half"), NPY_F16);
	cr_assert_eq(npy_dtype_from_name("float64"), NPY_F64);
	cr_assert_eq(npy_dtype_from_name("int32"), NPY_NONE);
	cr_assert_eq(npy_dtype_from_name(NULL), NPY_NONE);
	cr_assert_str_eq(npy_dtype_name(NPY_BF16), "bfloat16");
}

/* A rejected image must give -1, exactly one message, and leave the array empty. */
static void expect_refused(const void *bytes, size_t n, const char *want_msg)
{
	struct npy_array a = NPY_ARRAY_INIT;
	cr_assert_eq(npy_parse("bad.npy", bytes, n, &a), -1);
	cr_assert_null(a.data);
	fflush(stderr);
	cr_assert_stderr_eq_str(want_msg);
}

Test(npy, truncated_data_is_refused_with_sizes, .init = cr_redirect_stderr)
{
	float v[6] = { 0 };
	size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof(v));
	expect_refused(img, n - 4, "stagebench: error: bad.npy: truncated .npy file: float32 shape "
				   "needs 24 data bytes, the file has 20\n");
}

Test(npy, truncated_header_is_refused, .init = cr_redirect_stderr)
{
	float v = 0;
	make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &v, sizeof(v));
	expect_refused(img, 30, "stagebench: error: bad.npy: truncated .npy file: the header says "
				"118 header bytes, the file has 20\n");
}

Test(npy, every_prefix_of_a_valid_file_is_refused_without_crashing)
{
	double d[4] = { 1, 2, 3, 4 };
	size_t n = make_npy(img, 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", d, sizeof(d));
	for (size_t len = 0; len < n; len++) {
		/* a heap copy of exactly len bytes, so ASan sees any overread */
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, img, len);
		struct npy_array a = NPY_ARRAY_INIT;
		FILE *saved = stderr;
		stderr = fopen("/dev/null", "w");
		int rc = npy_parse("p.npy", copy, len, &a);
		fclose(stderr);
		stderr = saved;
		cr_assert_eq(rc, -1, "prefix of %zu bytes accepted", len);
		free(copy);
	}
}

Test(npy, garbage_header_is_refused_with_its_position, .init = cr_redirect_stderr)
{
	size_t n = make_npy(img, 1, "{'descr': <f4', 'fortran_order': False, 'shape': (1,), }", "abcd", 4);
	expect_refused(img, n, "stagebench: error: bad.npy: malformed .npy header at byte 10 of "
			       "the header: expected a quoted string\n");
}

Test(npy, random_bytes_after_the_magic_are_refused_without_crashing)
{
	srand(7);
	for (int round = 0; round < 500; round++) {
		size_t len = 10 + (size_t)(rand() % 120);
		uint8_t *b = malloc(len);
		memcpy(b, "\x93NUMPY\x01\x00", 8);
		b[8] = (uint8_t)(rand() % 130);
		b[9] = 0;
		for (size_t i = 10; i < len; i++)
			b[i] = (uint8_t)(rand() % 4 ? "{}'():, <f4TrueFalsedescrshape"[rand() % 30] : rand());
		struct npy_array a = NPY_ARRAY_INIT;
		FILE *saved = stderr;
		char msg[512] = "";
		stderr = tmpfile();
		cr_assert_not_null(stderr);
		int rc = npy_parse("r.npy", b, len, &a);
		rewind(stderr);
		size_t got = fread(msg, 1, sizeof(msg) - 1, stderr);
		msg[got] = '\0';
		fclose(stderr);
		stderr = saved;
		/* a random header is never a valid one: refused, with its reason */
		cr_assert_eq(rc, -1, "round %d: random bytes accepted", round);
		cr_assert(!strncmp(msg, "stagebench: error: r.npy: ", 26) && strchr(msg, '\n'),
			  "round %d: no message naming the file: '%s'", round, msg);
		npy_release(&a);
		free(b);
	}
}

Test(npy, not_a_npy_file, .init = cr_redirect_stderr)
{
	expect_refused("PK\x03\x04 this is a zip archive", 24,
		       "stagebench: error: bad.npy: not a .npy file (no \\x93NUMPY magic)\n");
}

Test(npy, big_endian_is_refused_clearly, .init = cr_redirect_stderr)
{
	size_t n = make_npy(img, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd", 4);
	expect_refused(img, n, "stagebench: error: bad.npy: big-endian dtype '>f4' is not supported "
			       "(save with arr.astype(arr.dtype.newbyteorder('<')))\n");
}

Test(npy, fortran_order_is_refused_clearly, .init = cr_redirect_stderr)
{
	size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "abcd", 4);
	expect_refused(img, n, "stagebench: error: bad.npy: fortran_order True is not supported "
			       "(save with np.ascontiguousarray(arr))\n");
}

Test(npy, integer_dtype_is_refused, .init = cr_redirect_stderr)
{
	size_t n = make_npy(img, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", "abcd", 4);
	expect_refused(img, n, "stagebench: error: bad.npy: unsupported dtype '<i4' (expected '<f2', "
			       "'<f4', '<f8', or 2-byte bfloat16 bits as '<u2', '<i2', '<V2')\n");
}

Test(npy, trailing_bytes_are_refused, .init = cr_redirect_stderr)
{
	float v[2] = { 1, 2 };
	size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", v, sizeof(v));
	expect_refused(img, n, "stagebench: error: bad.npy: 4 unexpected bytes after the array data\n");
}

Test(npy, shape_overflow_is_refused, .init = cr_redirect_stderr)
{
	size_t n = make_npy(img, 1, "{'descr': '<f8', 'fortran_order': False, "
				    "'shape': (1099511627776, 1099511627776, 1099511627776), }", "", 0);
	expect_refused(img, n, "stagebench: error: bad.npy: shape too large\n");
}

Test(npy, missing_file_names_the_path, .init = cr_redirect_stderr)
{
	struct npy_array a = NPY_ARRAY_INIT;
	cr_assert_eq(npy_read("/nonexistent/x.npy", &a), -1);
	npy_release(&a);
	npy_release(NULL);
	fflush(stderr);
	cr_assert_stderr_neq_str("");
}

Test(npy, reads_a_file_from_disk)
{
	float v[2] = { 1.5f, -2.5f };
	size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, sizeof(v));
	char path[] = "/tmp/test_npy_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, img, n), (ssize_t)n);
	close(fd);
	struct npy_array a = NPY_ARRAY_INIT;
	int rc = npy_read(path, &a);
	unlink(path);
	cr_assert_eq(rc, 0);
	cr_assert_eq(npy_get(&a, 1), -2.5);
	npy_release(&a);
}
