/* test_latents.c -- latent comparison: array diffs, noise spread, missing and corrupt copies */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/latents.h"

/* ---- arrays in memory ---------------------------------------------------- */

static size_t make_npy(uint8_t *out, const char *descr, const char *shape, const void *data, size_t n)
{
	char dict[200];
	snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
	size_t hlen = strlen(dict) + 1;
	while ((10 + hlen) % 64)
		hlen++;
	memcpy(out, "\x93NUMPY\x01\x00", 8);
	out[8] = (uint8_t)hlen;
	out[9] = (uint8_t)(hlen >> 8);
	memset(out + 10, ' ', hlen);
	memcpy(out + 10, dict, strlen(dict));
	out[10 + hlen - 1] = '\n';
	memcpy(out + 10 + hlen, data, n);
	return 10 + hlen + n;
}

static void arr(struct npy_array *a, const char *descr, const char *shape, const void *data, size_t n)
{
	uint8_t img[1024];
	size_t len = make_npy(img, descr, shape, data, n);
	cr_assert_eq(npy_parse("mem.npy", img, len, a), 0);
}

Test(latents, identical_arrays_are_identical)
{
	float x[4] = { 1, 2, 3, 4 };
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT;
	arr(&a, "<f4", "(2, 2)", x, sizeof(x));
	arr(&b, "<f4", "(2, 2)", x, sizeof(x));
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_IDENTICAL);
	cr_assert_eq(d.max_abs_diff, 0);
	cr_assert_eq(d.ndiffer, 0);
	npy_release(&a);
	npy_release(&b);
}

Test(latents, one_ulp_float32_difference_is_exactly_2_to_the_minus_23)
{
	float x[3] = { 1.0f, 0.5f, -7.0f }, y[3] = { 1.0f, 0.5f, -7.0f };
	y[0] = nextafterf(1.0f, 2.0f); /* 1 + 2^-23 */
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT;
	arr(&a, "<f4", "(3,)", x, sizeof(x));
	arr(&b, "<f4", "(3,)", y, sizeof(y));
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_DIFFERS);
	cr_assert_eq(d.max_abs_diff, 1.1920928955078125e-07);
	cr_assert_eq(d.ndiffer, 1);
	npy_release(&a);
	npy_release(&b);
}

Test(latents, bfloat16_difference_uses_bfloat16_values)
{
	/* 0x3f80 = 1.0, 0x3f81 = 1.0078125 (one bfloat16 ulp at 1); read as
	 * uint16 the same bits would differ by 1, so this checks the decoding */
	uint16_t x[2] = { 0x3f80, 0x4000 }, y[2] = { 0x3f81, 0x4000 };
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT;
	arr(&a, "<u2", "(2,)", x, sizeof(x));
	arr(&b, "<V2", "(2,)", y, sizeof(y));
	cr_assert_eq(npy_as_bfloat16(&a), 0);
	cr_assert_eq(npy_as_bfloat16(&b), 0);
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_DIFFERS);
	cr_assert_eq(d.max_abs_diff, 0.0078125);
	cr_assert_eq(d.ndiffer, 1);
	npy_release(&a);
	npy_release(&b);
}

Test(latents, float16_difference_is_exact)
{
	uint16_t x[1] = { 0x3c00 }, y[1] = { 0x3c01 }; /* 1.0 and 1 + 2^-10 */
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT;
	arr(&a, "<f2", "()", x, sizeof(x));
	arr(&b, "<f2", "()", y, sizeof(y));
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_DIFFERS);
	cr_assert_eq(d.max_abs_diff, 0.0009765625);
	npy_release(&a);
	npy_release(&b);
}

Test(latents, shape_mismatch_with_same_element_count)
{
	float x[6] = { 0 };
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT;
	arr(&a, "<f4", "(2, 3)", x, sizeof(x));
	arr(&b, "<f4", "(3, 2)", x, sizeof(x));
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_SHAPE_DIFFERS);
	npy_release(&a);
	npy_release(&b);
}

Test(latents, dtype_mismatch_is_not_compared_elementwise)
{
	float x[1] = { 1 };
	double y[1] = { 1 };
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT;
	arr(&a, "<f4", "(1,)", x, sizeof(x));
	arr(&b, "<f8", "(1,)", y, sizeof(y));
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_DTYPE_DIFFERS);
	npy_release(&a);
	npy_release(&b);
}

Test(latents, nan_equal_only_when_bits_equal)
{
	uint32_t qnan = 0x7fc00000, other_nan = 0x7fc00001;
	float x[2], y[2], z[2];
	memcpy(&x[0], &qnan, 4);
	memcpy(&y[0], &qnan, 4);
	memcpy(&z[0], &other_nan, 4);
	x[1] = y[1] = z[1] = 2.0f;
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT, c = NPY_ARRAY_INIT;
	arr(&a, "<f4", "(2,)", x, sizeof(x));
	arr(&b, "<f4", "(2,)", y, sizeof(y));
	arr(&c, "<f4", "(2,)", z, sizeof(z));
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_IDENTICAL);
	latent_diff_arrays(&a, &c, &d);
	cr_assert_eq(d.result, LR_DIFFERS);
	cr_assert(isnan(d.max_abs_diff));
	npy_release(&a);
	npy_release(&b);
	npy_release(&c);
}

Test(latents, signed_zeros_differ_by_zero_but_are_not_identical)
{
	float x[1] = { 0.0f }, y[1] = { -0.0f };
	struct npy_array a = NPY_ARRAY_INIT, b = NPY_ARRAY_INIT;
	arr(&a, "<f4", "(1,)", x, sizeof(x));
	arr(&b, "<f4", "(1,)", y, sizeof(y));
	struct latent_diff d;
	latent_diff_arrays(&a, &b, &d);
	cr_assert_eq(d.result, LR_DIFFERS);
	cr_assert_eq(d.max_abs_diff, 0);
	cr_assert_eq(d.ndiffer, 1);
	npy_release(&a);
	npy_release(&b);
}

/* ---- whole sets, with .npy files on disk ---------------------------------- */

static char dir[64];

static void setup_dir(void)
{
	strcpy(dir, "/tmp/test_latents_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Write DIR/<file> holding `n` float32 values shaped (n,); returns the data sha256. */
static char *write_f32(const char *file, const float *v, size_t n, char *sha)
{
	uint8_t img[1024];
	char shape[32];
	snprintf(shape, sizeof(shape), "(%zu,)", n);
	size_t len = make_npy(img, "<f4", shape, v, n * sizeof(float));
	char *path = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(img, 1, len, f), len);
	fclose(f);
	free(path);
	sha256_hex(v, n * sizeof(float), sha);
	return sha;
}

struct ev { const char *name, *sha, *file; int n; };

/* A trace in memory whose latent events are evs[0..nev). */
static void add_run(struct latent_set *s, const char *id, const char *mode, const struct ev *evs, size_t nev)
{
	struct trace tr = TRACE_INIT;
	tr.path = xasprintf("%s/%s.trace.jsonl", dir, id);
	tr.has_end = true;
	tr.events = xcalloc(nev ? nev : 1, sizeof(*tr.events));
	for (size_t i = 0; i < nev; i++) {
		struct trace_event *e = &tr.events[i];
		e->kind = EV_LATENT;
		e->t = (double)i;
		e->name = (char *)evs[i].name;
		e->stage = (char *)evs[i].name;
		e->sha256 = (char *)evs[i].sha;
		e->dtype = (char *)"float32";
		e->file = (char *)evs[i].file;
		e->ndim = 1;
		e->shape[0] = evs[i].n;
		e->line = i + 2;
	}
	tr.nevents = nev;
	latent_set_add_trace(s, id, mode, NULL, &tr);
	free(tr.events);
	free(tr.path);
}

static const struct latent_pair *pair(const struct latent *l, size_t a, size_t b)
{
	for (size_t k = 0; k < l->npairs; k++)
		if (l->pairs[k].a == a && l->pairs[k].b == b)
			return &l->pairs[k];
	cr_assert_fail("no pair %zu,%zu", a, b);
	return NULL;
}

TestSuite(latent_set, .init = setup_dir, .fini = teardown_dir);

Test(latent_set, differences_within_the_baseline_spread_are_noise)
{
	char h1[65], h2[65], h3[65], h4[65];
	float e1[2] = { 1.0f, 2.0f }, e2[2] = { 1.0f, 2.0f + 0.25f }, s1[2] = { 1.125f, 2.0f },
	      s2[2] = { 1.5f, 2.0f };
	struct ev r1[] = { { "x", write_f32("e1.npy", e1, 2, h1), "e1.npy", 2 } };
	struct ev r2[] = { { "x", write_f32("e2.npy", e2, 2, h2), "e2.npy", 2 } };
	struct ev r3[] = { { "x", write_f32("s1.npy", s1, 2, h3), "s1.npy", 2 } };
	struct ev r4[] = { { "x", write_f32("s2.npy", s2, 2, h4), "s2.npy", 2 } };
	struct latent_set s = LATENT_SET_INIT;
	/* added alternately, as compare runs them; the set groups them by mode */
	add_run(&s, "eager-1", "eager", r1, 1);
	add_run(&s, "staged-1", "staged", r3, 1);
	add_run(&s, "eager-2", "eager", r2, 1);
	add_run(&s, "staged-2", "staged", r4, 1);
	cr_assert_eq(latent_compare(&s, NULL), 0);
	cr_assert_str_eq(s.baseline, "eager");
	cr_assert_str_eq(s.runs[1].id, "eager-2");
	cr_assert_str_eq(s.runs[2].id, "staged-1");
	cr_assert_eq(s.nlatents, 1);
	const struct latent *l = &s.latents[0];
	cr_assert_eq(l->spread_pairs, 1);
	cr_assert_eq(l->spread, 0.25);
	/* eager-1 vs staged-1: 0.125 <= 0.25 -> within */
	cr_assert_eq(pair(l, 0, 2)->diff.max_abs_diff, 0.125);
	cr_assert_eq(pair(l, 0, 2)->noise, NOISE_WITHIN);
	/* eager-1 vs staged-2: 0.5 > 0.25 -> beyond */
	cr_assert_eq(pair(l, 0, 3)->diff.max_abs_diff, 0.5);
	cr_assert_eq(pair(l, 0, 3)->noise, NOISE_BEYOND);
	/* the baseline pair defines the spread, so it is within */
	cr_assert_eq(pair(l, 0, 1)->noise, NOISE_WITHIN);
	/* staged-2 differs beyond noise from eager-1, eager-2 (0.5) and staged-1 (0.375) */
	cr_assert_eq(latent_findings(&s), 3);
	latent_set_release(&s);
	latent_set_release(NULL);
}

Test(latent_set, one_baseline_run_means_no_spread_and_any_difference_is_a_finding)
{
	char h1[65], h2[65];
	float e1[1] = { 1.0f }, s1[1] = { nextafterf(1.0f, 0.0f) };
	struct ev r1[] = { { "x", write_f32("e1.npy", e1, 1, h1), "e1.npy", 1 } };
	struct ev r2[] = { { "x", write_f32("s1.npy", s1, 1, h2), "s1.npy", 1 } };
	struct latent_set s = LATENT_SET_INIT;
	add_run(&s, "eager-1", "eager", r1, 1);
	add_run(&s, "staged-1", "staged", r2, 1);
	cr_assert_eq(latent_compare(&s, NULL), 0);
	const struct latent *l = &s.latents[0];
	cr_assert_eq(l->spread_pairs, 0);
	cr_assert_eq(l->baseline_copies, 1);
	cr_assert_eq(l->pairs[0].diff.max_abs_diff, 5.9604644775390625e-08); /* 2^-24 */
	cr_assert_eq(l->pairs[0].noise, NOISE_UNKNOWN);
	cr_assert_eq(latent_findings(&s), 1);
	struct strbuf md = STRBUF_INIT;
	latents_render_md(&s, &md);
	cr_assert_not_null(strstr(md.buf, "no spread known: only one eager run has this latent"), "%s", md.buf);
	cr_assert_not_null(strstr(md.buf, "5.96e-08 (no spread)"), "%s", md.buf);
	strbuf_release(&md);
	latent_set_release(&s);
}

Test(latent_set, missing_latent_and_merged_order)
{
	char ha[65], hb[65], hc[65];
	float v[1] = { 1.0f };
	struct ev r1[] = { { "a", write_f32("a.npy", v, 1, ha), "a.npy", 1 },
			   { "c", write_f32("c.npy", v, 1, hc), "c.npy", 1 } };
	struct ev r2[] = { { "a", ha, "a.npy", 1 },
			   { "b", write_f32("b.npy", v, 1, hb), "b.npy", 1 },
			   { "c", hc, "c.npy", 1 } };
	struct latent_set s = LATENT_SET_INIT;
	add_run(&s, "eager-1", "eager", r1, 2);
	add_run(&s, "staged-1", "staged", r2, 3);
	cr_assert_eq(latent_compare(&s, NULL), 0);
	cr_assert_eq(s.nlatents, 3);
	cr_assert_str_eq(s.latents[0].name, "a");
	cr_assert_str_eq(s.latents[1].name, "b"); /* after a, where staged-1 has it */
	cr_assert_str_eq(s.latents[2].name, "c");
	cr_assert_eq(s.latents[0].pairs[0].diff.result, LR_IDENTICAL);
	cr_assert_eq(s.latents[1].pairs[0].diff.result, LR_MISSING);
	cr_assert_eq(s.latents[2].pairs[0].diff.result, LR_IDENTICAL);
	cr_assert_eq(latent_findings(&s), 1);
	latent_set_release(&s);
}

Test(latent_set, corrupt_copy_is_reported_not_compared)
{
	char h1[65], h2[65];
	float v[2] = { 1.0f, 2.0f }, w[2] = { 1.0f, 2.0f };
	struct ev r1[] = { { "x", write_f32("e1.npy", v, 2, h1), "e1.npy", 2 } };
	write_f32("s1.npy", w, 2, h2);
	h2[0] = h2[0] == '0' ? '1' : '0'; /* the event's digest no longer matches the data */
	struct ev r2[] = { { "x", h2, "s1.npy", 2 } };
	struct latent_set s = LATENT_SET_INIT;
	add_run(&s, "eager-1", "eager", r1, 1);
	add_run(&s, "staged-1", "staged", r2, 1);
	cr_assert_eq(latent_compare(&s, NULL), 0);
	const struct latent *l = &s.latents[0];
	cr_assert_eq(l->copies[1]->state, COPY_CORRUPT);
	cr_assert_not_null(strstr(l->copies[1]->problem, "sha256 of its array data is"));
	/* the data are equal, but a corrupt copy is never called identical */
	cr_assert_eq(l->pairs[0].diff.result, LR_CORRUPT);
	cr_assert_eq(latent_findings(&s), 1);
	latent_set_release(&s);
}

Test(latent_set, unreadable_copy_fails_the_comparison)
{
	struct ev r1[] = { { "x", "00", "nonexistent.npy", 1 } };
	struct latent_set s = LATENT_SET_INIT;
	add_run(&s, "eager-1", "eager", r1, 1);
	add_run(&s, "eager-2", "eager", r1, 1);
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	int rc = latent_compare(&s, NULL);
	fclose(stderr);
	stderr = saved;
	cr_assert_eq(rc, -1);
	latent_set_release(&s);
}

Test(latent_set, clashing_ids_from_two_dirs_get_prefixed)
{
	struct latent_set s = LATENT_SET_INIT;
	struct trace tr = TRACE_INIT;
	tr.path = (char *)"/x/before/eager-1.trace.jsonl";
	latent_set_add_trace(&s, "eager-1", "eager", "/x/before/", &tr);
	tr.path = (char *)"/x/after/eager-1.trace.jsonl";
	latent_set_add_trace(&s, "eager-1", "eager", "/x/after", &tr);
	cr_assert_eq(latent_compare(&s, NULL), 0);
	cr_assert_str_eq(s.runs[0].id, "before/eager-1");
	cr_assert_str_eq(s.runs[1].id, "after/eager-1");
	cr_assert_eq(s.nlatents, 0);
	latent_set_release(&s);
}

Test(latent_set, a_directory_adds_its_runs_in_runs_json_order_then_by_version)
{
	const char *names[] = { "eager-10", "eager-2", "staged-1" };
	for (size_t i = 0; i < 3; i++) {
		char *p = xasprintf("%s/%s.trace.jsonl", dir, names[i]);
		char *body = xasprintf("{\"type\":\"start\",\"utc\":\"2026-10-06T10:00:00+00:00\","
				       "\"interval\":0.5,\"mode\":\"%.*s\",\"seed\":7}\n{\"type\":\"end\"}\n",
				       (int)(strchr(names[i], '-') - names[i]), names[i]);
		cr_assert_eq(write_file(p, body, strlen(body)), 0);
		free(body);
		free(p);
	}
	char *rj = xasprintf("%s/runs.json", dir);
	const char *runs = "[{\"mode\":\"staged\",\"run\":1,\"exit\":3,\"stopped_by\":\"guard\"}]\n";
	cr_assert_eq(write_file(rj, runs, strlen(runs)), 0);
	free(rj);
	struct latent_set s = LATENT_SET_INIT;
	cr_assert_eq(latent_set_add_path(&s, dir), 3);
	cr_assert_str_eq(s.runs[0].id, "staged-1");
	cr_expect_str_eq(s.runs[0].note, "stopped by the guard", "runs.json says how it ended");
	cr_assert_str_eq(s.runs[1].id, "eager-2");
	cr_expect_null(s.runs[1].note);
	cr_assert_str_eq(s.runs[2].id, "eager-10");
	cr_expect_str_eq(s.runs[2].mode, "eager");
	latent_set_release(&s);
}

/* latent_compare with stderr captured into msg (truncated to its size). */
static int compare_quietly(struct latent_set *s, char *msg, size_t size)
{
	FILE *saved = stderr;
	stderr = tmpfile();
	cr_assert_not_null(stderr);
	int rc = latent_compare(s, NULL);
	rewind(stderr);
	size_t n = fread(msg, 1, size - 1, stderr);
	msg[n] = '\0';
	fclose(stderr);
	stderr = saved;
	return rc;
}

/* A latent event's "file" is read only inside the run directory: a valid .npy
 * outside it, reached by an absolute path, a '..' or a symlink, is refused; a
 * FIFO is refused at once instead of hanging, /dev/zero is not read; a file in a
 * subdirectory is read. */
Test(latent_set, latent_files_are_read_only_inside_the_run_directory, .timeout = 20)
{
	char out[64] = "/tmp/test_latents_out_XXXXXX", sha[65], msg[1024];
	cr_assert_not_null(mkdtemp(out));
	const float v[2] = { 1, 2 };
	/* a valid copy outside the run directory, and one inside it, in a subdirectory */
	char *outside = xasprintf("%s/z.npy", out);
	char *rel = xasprintf("../%s/z.npy", strrchr(out, '/') + 1);
	write_f32("ok.npy", v, 2, sha);
	char *cmd = xasprintf("mkdir -p '%s/sub' && cp '%s/ok.npy' '%s/sub/ok.npy' && cp '%s/ok.npy' '%s' && "
			      "ln -s '%s' '%s/link.npy' && mkfifo '%s/fifo.npy'",
			      dir, dir, dir, dir, outside, outside, dir, dir);
	cr_assert_eq(system(cmd), 0);
	const struct { const char *file, *why; } bad[] = {
		{ outside, "is an absolute path" },
		{ rel, "has a '..' component" },
		{ "sub/../../x.npy", "has a '..' component" },
		{ "link.npy", "leads outside the run directory" },
		{ "fifo.npy", "is not a regular file" },
		{ "/dev/zero", "is an absolute path" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ev r1[] = { { "x", sha, bad[i].file, 2 } };
		struct latent_set s = LATENT_SET_INIT;
		add_run(&s, "eager-1", "eager", r1, 1);
		add_run(&s, "eager-2", "eager", r1, 1);
		cr_expect_eq(compare_quietly(&s, msg, sizeof(msg)), -1, "%s was read", bad[i].file);
		cr_expect(strstr(msg, bad[i].why), "%s: %s", bad[i].file, msg);
		latent_set_release(&s);
	}
	struct ev good[] = { { "x", sha, "sub/ok.npy", 2 } };
	struct latent_set s = LATENT_SET_INIT;
	add_run(&s, "eager-1", "eager", good, 1);
	add_run(&s, "eager-2", "eager", good, 1);
	cr_expect_eq(compare_quietly(&s, msg, sizeof(msg)), 0, "%s", msg);
	cr_expect_eq(latent_findings(&s), 0);
	latent_set_release(&s);
	free(cmd);
	cmd = xasprintf("rm -rf '%s'", out);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(outside);
	free(rel);
}
