/* test_check.c -- the check rules: growth against threshold and spread, too few runs, outcomes, improvements, latents */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/check.h"
#include "analyze/check_noise.h"
#include "analyze/rundir.h"
#include "platform/sha256.h"
#include "traces/trace.h"

#define MiB (1024.0 * 1024.0)

/*
 * A hand-built run of stages setup, load, work, save. Stage k (setup = 0)
 * lasts dur[k] seconds (default 10) and has one footprint sample mib[k] MiB in
 * the middle of its window, a kernel `peak` event (rss) of mib[k] + 1 MiB and
 * system swap rising by swap[k] MiB over the window. `entered` stages after
 * setup are entered (3 = all); how: 'c' completed, 'g' stopped by the guard.
 * `latent` (optional) is a JSON fragment of latent events appended.
 */
struct spec {
	double mib[4];
	double dur[4];
	double swap[4];
	double dev[4];   /* MiB of MPS driver memory read on the interval (0: no device) */
	double map[4];   /* MiB of mapped data files in the stage's middle sample (0: no key) */
	double load_s;   /* seconds of one load event in "load" */
	int entered;     /* 0 = all three */
	char how;        /* 0 = 'c' */
	const char *latent;
};

static const char *const stage_names[4] = { "setup", "load", "work", "save" };

static char *jsonl(const char *mode, const struct spec *sp)
{
	struct strbuf sb = STRBUF_INIT;
	int entered = sp->entered ? sp->entered : 3;
	strbuf_addf(&sb, "{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"%s\"}\n", mode);
	double t = 0;
	for (int k = 0; k <= entered; k++) {
		double d = sp->dur[k] > 0 ? sp->dur[k] : 10;
		if (k > 0)
			strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"%s\",\"t\":%g}\n",
				    stage_names[k], t);
		uint64_t fp = (uint64_t)(sp->mib[k] * MiB);
		uint64_t sw0 = 1ull << 30, sw1 = sw0 + (uint64_t)(sp->swap[k] * MiB);
		strbuf_addf(&sb, "{\"type\":\"sample\",\"t\":%g,\"footprint\":%llu,\"swap_used\":%llu}\n",
			    t + 0.01, (unsigned long long)(fp / 2), (unsigned long long)sw0);
		if (sp->map[k] > 0)
			strbuf_addf(&sb, "{\"type\":\"sample\",\"t\":%g,\"footprint\":%llu,"
					 "\"swap_used\":%llu,\"mapped\":%llu}\n", t + d / 2,
				    (unsigned long long)fp, (unsigned long long)sw1,
				    (unsigned long long)(sp->map[k] * MiB));
		else
			strbuf_addf(&sb, "{\"type\":\"sample\",\"t\":%g,\"footprint\":%llu,"
					 "\"swap_used\":%llu}\n", t + d / 2, (unsigned long long)fp,
				    (unsigned long long)sw1);
		strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"peak\",\"stage\":\"%s\",\"metric\":\"rss\","
				 "\"bytes\":%llu,\"from\":%g,\"t\":%g}\n",
			    stage_names[k], (unsigned long long)(fp + (1u << 20)), t, t + d * 0.9);
		if (sp->dev[k] > 0)
			strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"gpu\",\"stage\":\"%s\","
					 "\"device\":\"mps\",\"metric\":\"mps_driver\",\"bytes\":%llu,\"t\":%g}\n"
					 "{\"type\":\"sample\",\"t\":%g,\"devmem\":%llu}\n",
				    stage_names[k], (unsigned long long)(sp->dev[k] * MiB / 4), t + 0.02,
				    t + d / 3, (unsigned long long)(sp->dev[k] * MiB));
		if (k == 1 && sp->load_s > 0)
			strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"load\",\"name\":\"m\",\"stage\":\"load\","
					 "\"nbytes\":1000,\"seconds\":%g,\"t\":%g}\n", sp->load_s, t + 0.5);
		t += d;
	}
	if (sp->latent)
		strbuf_addstr(&sb, sp->latent);
	char how = sp->how ? sp->how : 'c';
	if (how == 'c')
		strbuf_addf(&sb, "{\"type\":\"end\",\"exit\":0,\"wall\":%g}\n", t);
	else
		strbuf_addf(&sb, "{\"type\":\"end\",\"exit\":137,\"signal\":9,\"stopped_by\":\"guard\","
				 "\"reason\":\"swap grew\",\"wall\":%g}\n", t);
	return strbuf_detach(&sb);
}

static char dir[64] = ".";

static void add(struct check *c, enum check_side_id side, const char *id, const char *mode,
		const struct spec *sp)
{
	char *text = jsonl(mode, sp);
	char *name = xasprintf("%s/%s.trace.jsonl", dir, id);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read_mem(name, text, strlen(text), &tr), 0, "%s", text);
	cr_assert_eq(check_add_trace(c, side, id, &tr, NULL), 0);
	trace_release(&tr);
	free(name);
	free(text);
}

/* Two baseline and two candidate runs of mode "m". */
static void four(struct check *c, const struct spec *b1, const struct spec *b2,
		 const struct spec *c1, const struct spec *c2)
{
	add(c, CHECK_BASELINE, "m-1", "m", b1);
	add(c, CHECK_BASELINE, "m-2", "m", b2);
	add(c, CHECK_CANDIDATE, "m-1", "m", c1);
	if (c2)
		add(c, CHECK_CANDIDATE, "m-2", "m", c2);
	cr_assert_eq(check_run(c), 0);
}

static void only_regressions_in(const struct check *c, const char *stage)
{
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct check_finding *f = &c->findings[i];
		if (f->kind == CK_REGRESSION)
			cr_expect_str_eq(f->stage, stage, "unexpected regression: %s %s",
					 f->stage, check_metric_name(f->metric));
	}
}

Test(check, growth_beyond_threshold_and_spread_is_a_regression_in_that_stage_only)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 150, 300, 120 } }, b2 = { .mib = { 102, 152, 310, 121 } };
	struct spec c1 = { .mib = { 101, 151, 600, 120 } }, c2 = { .mib = { 100, 150, 620, 122 } };
	four(&c, &b1, &b2, &c1, &c2);
	const struct check_finding *f = check_find(&c, CK_REGRESSION, "m", "work", CM_PEAK);
	cr_assert_not_null(f);
	cr_expect_eq(f->nbase, 2);
	cr_expect_eq(f->ncand, 2);
	cr_expect_float_eq(f->base_max, 310 * MiB, 1);
	cr_expect_float_eq(f->cand_min, 600 * MiB, 1);
	cr_expect_float_eq(f->change, 290 * MiB, 1);
	cr_expect_float_eq(f->spread, 10 * MiB, 1);
	cr_expect_float_eq(f->allowed, 64 * MiB, 1); /* the floor beats 5% of 310 MiB and the spread */
	cr_expect_not_null(check_find(&c, CK_REGRESSION, "m", "work", CM_KPEAK_RSS));
	cr_expect_eq(check_regressions(&c), 2);
	only_regressions_in(&c, "work");
	check_release(&c);
}

Test(check, growth_inside_the_baseline_spread_is_not_a_regression)
{
	struct check c = CHECK_INIT;
	/* baseline work: 1000 and 1400 MiB (spread 400); candidate 1380 and 1390:
	 * more than 5% above 1000 but inside what the baseline does on its own */
	struct spec b1 = { .mib = { 100, 150, 1000, 120 } }, b2 = { .mib = { 100, 150, 1400, 120 } };
	struct spec c1 = { .mib = { 100, 150, 1380, 120 } }, c2 = { .mib = { 100, 150, 1390, 120 } };
	four(&c, &b1, &b2, &c1, &c2);
	cr_expect_eq(check_regressions(&c), 0);
	/* beyond the spread (1400 + 400 < 1850) but within 3 pooled SDs (the pool: work's
	 * runs, 1000 and 1400 around 1200, relative SD 1/6; 3/6 of 1400 is 700): too noisy */
	struct check e = CHECK_INIT;
	struct spec e1 = { .mib = { 100, 150, 1850, 120 } };
	four(&e, &b1, &b2, &e1, &e1);
	cr_expect_eq(check_regressions(&e), 0);
	cr_expect_not_null(check_find(&e, CK_NOT_JUDGED, "m", "work", CM_PEAK));
	/* and beyond that (1400 + 700 < 2200) it is one */
	struct check d = CHECK_INIT;
	struct spec d1 = { .mib = { 100, 150, 2200, 120 } };
	four(&d, &b1, &b2, &d1, &d1);
	const struct check_finding *f = check_find(&d, CK_REGRESSION, "m", "work", CM_PEAK);
	cr_assert_not_null(f);
	cr_expect_float_eq(f->allowed, 700 * MiB, 1);
	check_release(&c);
	check_release(&d);
	check_release(&e);
}

Test(check, growth_under_threshold_or_floor_is_not_judged_a_regression)
{
	struct check c = CHECK_INIT;
	/* 4000 -> 4150 MiB: +3.75%, under 5% of 4000 (200 MiB) */
	struct spec b = { .mib = { 100, 150, 4000, 120 } }, n = { .mib = { 100, 150, 4150, 120 } };
	four(&c, &b, &b, &n, &n);
	cr_expect_eq(check_regressions(&c), 0);
	/* the same growth with --max-growth 100M is a regression */
	struct check d = CHECK_INIT;
	d.opt.growth_is_pct = false;
	d.opt.growth_bytes = 100ull << 20;
	four(&d, &b, &b, &n, &n);
	cr_expect_not_null(check_find(&d, CK_REGRESSION, "m", "work", CM_PEAK));
	/* 10 -> 60 MiB (+500%) stays under the 64 MiB floor */
	struct check e = CHECK_INIT;
	struct spec s = { .mib = { 100, 150, 10, 120 } }, l = { .mib = { 100, 150, 60, 120 } };
	four(&e, &s, &s, &l, &l);
	cr_expect_eq(check_regressions(&e), 0);
	check_release(&c);
	check_release(&d);
	check_release(&e);
}

Test(check, one_candidate_run_below_the_baseline_max_is_not_a_regression)
{
	struct check c = CHECK_INIT;
	struct spec b = { .mib = { 100, 150, 300, 120 } };
	struct spec hi = { .mib = { 100, 150, 900, 120 } }, same = { .mib = { 100, 150, 300, 120 } };
	four(&c, &b, &b, &hi, &same); /* min(c) = 300: not every candidate run is worse */
	cr_expect_eq(check_regressions(&c), 0);
	check_release(&c);
}

Test(check, one_baseline_run_is_too_few_to_judge_and_says_so)
{
	struct check c = CHECK_INIT;
	struct spec b = { .mib = { 100, 150, 300, 120 } }, n = { .mib = { 100, 150, 3000, 120 } };
	add(&c, CHECK_BASELINE, "m-1", "m", &b);
	add(&c, CHECK_CANDIDATE, "m-1", "m", &n);
	add(&c, CHECK_CANDIDATE, "m-2", "m", &n);
	cr_assert_eq(check_run(&c), 0);
	cr_expect_eq(check_regressions(&c), 0);
	/* one row for the stages in the same state */
	const struct check_finding *f =
		check_find(&c, CK_NOT_JUDGED, "m", "setup, load, work, save", CM_PEAK);
	cr_assert_not_null(f);
	cr_expect(strstr(f->detail, "1 baseline run") != NULL, "%s", f->detail);
	cr_expect(strstr(f->now_text, "peak footprint") && strstr(f->now_text, "stage time"),
		  "%s", f->now_text);
	struct strbuf md = STRBUF_INIT;
	check_render_md(&c, &md);
	cr_expect(strstr(md.buf, "## Not judged") != NULL, "%s", md.buf);
	strbuf_release(&md);
	check_release(&c);
}

Test(check, a_stage_no_longer_completed_is_a_regression)
{
	struct check c = CHECK_INIT;
	struct spec b = { .mib = { 100, 150, 300, 120 } };
	struct spec stopped = { .mib = { 100, 150, 300, 120 }, .entered = 2, .how = 'g' };
	four(&c, &b, &b, &b, &stopped);
	/* work: stopped there; save: never reached */
	const struct check_finding *w = check_find(&c, CK_REGRESSION, "m", "work", CM_OUTCOME);
	const struct check_finding *s = check_find(&c, CK_REGRESSION, "m", "save", CM_OUTCOME);
	cr_assert_not_null(w);
	cr_assert_not_null(s);
	cr_expect_str_eq(w->base_text, "completed 2 of 2");
	cr_expect_str_eq(w->now_text, "completed 1 of 2");
	cr_expect(strstr(w->detail, "m-2 stopped here (stopped by the guard)") != NULL, "%s", w->detail);
	cr_expect(strstr(s->detail, "m-2 never reached it (ended in work") != NULL, "%s", s->detail);
	cr_expect_null(check_find(&c, CK_REGRESSION, "m", "load", CM_OUTCOME));
	cr_expect_eq(check_regressions(&c), 2);
	check_release(&c);
}

Test(check, a_stage_reached_again_is_an_improvement)
{
	struct check c = CHECK_INIT;
	struct spec b = { .mib = { 100, 150, 300, 120 } };
	struct spec stopped = { .mib = { 100, 150, 300, 120 }, .entered = 2, .how = 'g' };
	four(&c, &b, &stopped, &b, &b);
	cr_expect_eq(check_regressions(&c), 0);
	cr_expect_not_null(check_find(&c, CK_IMPROVEMENT, "m", "work", CM_OUTCOME));
	cr_expect_not_null(check_find(&c, CK_IMPROVEMENT, "m", "save", CM_OUTCOME));
	check_release(&c);
}

Test(check, a_lighter_or_faster_stage_is_an_improvement)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 150, 2000, 120 }, .dur = { 10, 10, 20, 10 } };
	struct spec b2 = { .mib = { 100, 150, 2010, 120 }, .dur = { 10, 10, 20.5, 10 } };
	struct spec n = { .mib = { 100, 150, 1000, 120 }, .dur = { 10, 10, 12, 10 } };
	four(&c, &b1, &b2, &n, &n);
	cr_expect_eq(check_regressions(&c), 0);
	const struct check_finding *f = check_find(&c, CK_IMPROVEMENT, "m", "work", CM_PEAK);
	cr_assert_not_null(f);
	cr_expect_float_eq(f->change, -1000 * MiB, 1);
	const struct check_finding *t = check_find(&c, CK_IMPROVEMENT, "m", "work", CM_TIME);
	cr_assert_not_null(t);
	cr_expect_float_eq(t->change, -8.0, 1e-9);
	cr_expect_eq(check_count(&c, CK_IMPROVEMENT), 3); /* peak, kernel peak, time */
	check_release(&c);
}

Test(check, slower_stage_and_load_and_swap_rise_are_regressions)
{
	struct check c = CHECK_INIT;
	struct spec b = { .mib = { 100, 150, 300, 120 }, .load_s = 2, .swap = { 0, 0, 10, 0 } };
	struct spec n = { .mib = { 100, 150, 300, 120 }, .load_s = 5, .swap = { 0, 0, 500, 0 },
			  .dur = { 10, 10, 10, 14 } };
	four(&c, &b, &b, &n, &n);
	const struct check_finding *l = check_find(&c, CK_REGRESSION, "m", "load", CM_LOAD);
	cr_assert_not_null(l);
	cr_expect_float_eq(l->change, 3.0, 1e-9);
	const struct check_finding *s = check_find(&c, CK_REGRESSION, "m", "work", CM_SWAP);
	cr_assert_not_null(s);
	cr_expect_float_eq(s->change, 490 * MiB, 1);
	cr_expect_not_null(check_find(&c, CK_REGRESSION, "m", "save", CM_TIME));
	cr_expect_eq(check_regressions(&c), 3);
	check_release(&c);
}

Test(check, time_threshold_takes_a_duration)
{
	struct check c = CHECK_INIT;
	c.opt.time_is_pct = false;
	c.opt.time_s = 5;
	struct spec b = { .dur = { 10, 10, 10, 10 } }, n = { .dur = { 10, 10, 14, 10 } };
	four(&c, &b, &b, &n, &n); /* +4 s: over 10% but under 5 s */
	cr_expect_eq(check_regressions(&c), 0);
	check_release(&c);
}

Test(check, modes_on_one_side_only_are_notes)
{
	struct check c = CHECK_INIT;
	struct spec b = { .mib = { 100, 150, 300, 120 } };
	add(&c, CHECK_BASELINE, "eager-1", "eager", &b);
	add(&c, CHECK_CANDIDATE, "staged-1", "staged", &b);
	cr_assert_eq(check_run(&c), 0);
	cr_expect_eq(check_regressions(&c), 0);
	cr_expect_not_null(check_find(&c, CK_NOTE, "eager", NULL, CM_OUTCOME));
	cr_expect_not_null(check_find(&c, CK_NOTE, "staged", NULL, CM_OUTCOME));
	check_release(&c);
}

/* ---- latents, with .npy files on disk -------------------------------------- */

static void setup_dir(void)
{
	strcpy(dir, "/tmp/test_check_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown_dir(void)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* Write DIR/FILE: float32 (2,) holding a, b; returns a latent event line (caller frees). */
static char *latent(const char *file, float a, float b)
{
	float v[2] = { a, b };
	char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
	uint8_t img[256];
	size_t hlen = strlen(dict) + 1;
	while ((10 + hlen) % 64)
		hlen++;
	memcpy(img, "\x93NUMPY\x01\x00", 8);
	img[8] = (uint8_t)hlen;
	img[9] = 0;
	memset(img + 10, ' ', hlen);
	memcpy(img + 10, dict, strlen(dict));
	img[10 + hlen - 1] = '\n';
	memcpy(img + 10 + hlen, v, sizeof(v));
	char *path = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(img, 1, 10 + hlen + sizeof(v), f), 10 + hlen + sizeof(v));
	fclose(f);
	free(path);
	char sha[SHA256_HEX_BYTES];
	sha256_hex(v, sizeof(v), sha);
	return xasprintf("{\"type\":\"event\",\"kind\":\"latent\",\"name\":\"x\",\"stage\":\"work\","
			 "\"sha256\":\"%s\",\"dtype\":\"float32\",\"shape\":[2],\"file\":\"%s\",\"t\":25}\n",
			 sha, file);
}

static void latent_runs(struct check *c, float b1, float b2, float c1, float c2)
{
	char *l[4] = { latent("b1.npy", 1, b1), latent("b2.npy", 1, b2), latent("c1.npy", 1, c1),
		       latent("c2.npy", 1, c2) };
	struct spec s[4];
	for (int i = 0; i < 4; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].latent = l[i];
	}
	four(c, &s[0], &s[1], &s[2], &s[3]);
	for (int i = 0; i < 4; i++)
		free(l[i]);
}

TestSuite(check_latents, .init = setup_dir, .fini = teardown_dir);

Test(check_latents, identical_before_and_different_now_is_a_regression)
{
	struct check c = CHECK_INIT;
	latent_runs(&c, 2, 2, 2, 2.5f);
	const struct check_finding *f = check_find(&c, CK_REGRESSION, "m", "work", CM_LATENT);
	cr_assert_not_null(f);
	cr_expect_str_eq(f->latent, "x");
	cr_expect_str_eq(f->detail, "identical before, different now");
	cr_expect(strstr(f->now_text, "max diff 0.5 (candidate/m-2)") != NULL, "%s", f->now_text);
	cr_expect_eq(check_regressions(&c), 1);
	check_release(&c);
}

Test(check_latents, allow_latent_change_turns_it_into_a_note)
{
	struct check c = CHECK_INIT;
	c.opt.allow_latent_change = true;
	latent_runs(&c, 2, 2, 2, 2.5f);
	cr_expect_eq(check_regressions(&c), 0);
	const struct check_finding *f = check_find(&c, CK_NOTE, "m", "work", CM_LATENT);
	cr_assert_not_null(f);
	cr_expect(strstr(f->detail, "(allowed)") != NULL, "%s", f->detail);
	check_release(&c);
}

Test(check_latents, differences_within_the_baseline_spread_pass_and_beyond_it_fail)
{
	struct check c = CHECK_INIT;
	latent_runs(&c, 2, 2.5f, 2.25f, 2.4f); /* baseline spread 0.5 */
	cr_expect_eq(check_regressions(&c), 0);
	struct check d = CHECK_INIT;
	latent_runs(&d, 2, 2.5f, 2.25f, 3.5f); /* 1.5 from b1 */
	const struct check_finding *f = check_find(&d, CK_REGRESSION, "m", "work", CM_LATENT);
	cr_assert_not_null(f);
	cr_expect_str_eq(f->detail, "outside the baseline's spread");
	check_release(&c);
	check_release(&d);
}

Test(check_latents, identical_everywhere_is_clean)
{
	struct check c = CHECK_INIT;
	latent_runs(&c, 2, 2, 2, 2);
	cr_expect_eq(c.nfindings, 0);
	check_release(&c);
}

/* Write DIR/FILE as a .npy of `descr` (e.g. "<f8") and SHAPE (Python tuple text, e.g.
 * "(3,)") holding DATA; returns a latent event line for DTYPE and SHAPE_JSON (caller frees). */
static char *latent_npy(const char *file, const char *descr, const char *shape,
			const char *dtype, const char *shape_json, const void *data, size_t nbytes)
{
	char *dict = xasprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
			       shape);
	uint8_t img[512];
	size_t hlen = strlen(dict) + 1;
	while ((10 + hlen) % 64)
		hlen++;
	cr_assert_lt(10 + hlen + nbytes, sizeof(img));
	memcpy(img, "\x93NUMPY\x01\x00", 8);
	img[8] = (uint8_t)hlen;
	img[9] = 0;
	memset(img + 10, ' ', hlen);
	memcpy(img + 10, dict, strlen(dict));
	img[10 + hlen - 1] = '\n';
	memcpy(img + 10 + hlen, data, nbytes);
	char *path = xasprintf("%s/%s", dir, file);
	cr_assert_eq(write_file(path, img, 10 + hlen + nbytes), 0);
	free(path);
	free(dict);
	char sha[SHA256_HEX_BYTES];
	sha256_hex(data, nbytes, sha);
	return xasprintf("{\"type\":\"event\",\"kind\":\"latent\",\"name\":\"x\",\"stage\":\"work\","
			 "\"sha256\":\"%s\",\"dtype\":\"%s\",\"shape\":%s,\"file\":\"%s\",\"t\":25}\n",
			 sha, dtype, shape_json, file);
}

/* Baseline m-1, m-2 and candidate m-1 hold x = float32 [1, 2]; candidate m-2's latent
 * is `last` (NULL: no latent event at all). */
static void latent_runs_last(struct check *c, char *last)
{
	char *l[3] = { latent("b1.npy", 1, 2), latent("b2.npy", 1, 2), latent("c1.npy", 1, 2) };
	struct spec s[4];
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 3; i++)
		s[i].latent = l[i];
	s[3].latent = last;
	four(c, &s[0], &s[1], &s[2], &s[3]);
	for (int i = 0; i < 3; i++)
		free(l[i]);
	free(last);
}

/* The one latent finding of C: a regression on x in stage work, WHY in its detail and
 * its now column, naming candidate m-2. */
static void expect_latent_regression(const struct check *c, const char *why)
{
	const struct check_finding *f = check_find(c, CK_REGRESSION, "m", "work", CM_LATENT);
	cr_assert_not_null(f, "no latent regression for '%s'", why);
	cr_expect_str_eq(f->latent, "x");
	cr_expect_str_eq(f->detail, why);
	char *want = xasprintf("%s (candidate/m-2)", why);
	cr_expect_str_eq(f->now_text, want);
	free(want);
	cr_expect_str_eq(f->base_text, "identical (2 copies)");
	cr_expect_eq(check_regressions(c), 1);
}

Test(check_latents, a_latent_the_baseline_had_and_a_candidate_lacks_is_missing)
{
	struct check c = CHECK_INIT;
	latent_runs_last(&c, NULL);
	expect_latent_regression(&c, "missing");
	check_release(&c);
	/* --allow-latent-change does not excuse a latent that is gone */
	struct check d = CHECK_INIT;
	d.opt.allow_latent_change = true;
	latent_runs_last(&d, NULL);
	const struct check_finding *f = check_find(&d, CK_NOTE, "m", "work", CM_LATENT);
	cr_assert_not_null(f);
	cr_expect_str_eq(f->detail, "missing (allowed)");
	check_release(&d);
}

Test(check_latents, a_candidate_latent_of_another_shape_is_shape_differs)
{
	struct check c = CHECK_INIT;
	float v[3] = { 1, 2, 3 };
	latent_runs_last(&c, latent_npy("c2.npy", "<f4", "(3,)", "float32", "[3]", v, sizeof(v)));
	expect_latent_regression(&c, "shape differs");
	check_release(&c);
	/* same element count, another rank */
	struct check d = CHECK_INIT;
	float w[2] = { 1, 2 };
	latent_runs_last(&d, latent_npy("c2.npy", "<f4", "(1, 2)", "float32", "[1,2]", w, sizeof(w)));
	expect_latent_regression(&d, "shape differs");
	check_release(&d);
}

Test(check_latents, a_candidate_latent_of_another_dtype_is_dtype_differs)
{
	struct check c = CHECK_INIT;
	double v[2] = { 1, 2 }; /* the same values, float64 */
	latent_runs_last(&c, latent_npy("c2.npy", "<f8", "(2,)", "float64", "[2]", v, sizeof(v)));
	expect_latent_regression(&c, "dtype differs");
	check_release(&c);
}

/* ---- run directories ----------------------------------------------------- */

Test(check_latents, rundir_lists_traces_in_runs_json_order_then_by_version)
{
	const char *files[] = { "b-10.trace.jsonl", "b-2.trace.jsonl", "a-1.trace.jsonl.zst",
				"notes.txt", "runs.json" };
	for (size_t i = 0; i < 5; i++) {
		char *p = xasprintf("%s/%s", dir, files[i]);
		const char *body = i == 4 ? "[{\"mode\":\"b\",\"run\":10,\"exit\":0}]\n" : "";
		cr_assert_eq(write_file(p, body, strlen(body)), 0);
		free(p);
	}
	struct rundir rd = RUNDIR_INIT;
	cr_assert_eq(rundir_open(dir, &rd), 3);
	cr_expect_str_eq(rd.traces[0].stem, "b-10");
	cr_expect_not_null(rd.traces[0].entry);
	cr_expect_str_eq(rd.traces[1].stem, "a-1");
	cr_expect_str_eq(rd.traces[2].stem, "b-2");
	cr_expect_null(rd.traces[2].entry);
	rundir_release(&rd);
	char *f = xasprintf("%s/notes.txt", dir);
	cr_expect_eq(rundir_open(f, &rd), -1);
	rundir_release(&rd);
	free(f);
}

Test(check_latents, a_directory_without_traces_is_an_error)
{
	struct check c = CHECK_INIT;
	cr_expect_eq(check_add_dir(&c, CHECK_BASELINE, dir), -1);
	check_release(&c);
}

/* Every stage 30% slower in the candidate: the machine was busier, no stage regressed.
 * The old rule (threshold and the baseline's spread alone) flagged all four. */
Test(check, a_machine_wide_time_shift_is_no_stage_regression)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 100, 100, 100 }, .dur = { 10, 10, 10, 10 } };
	struct spec b2 = { .mib = { 100, 100, 100, 100 }, .dur = { 10.2, 10, 10.1, 10 } };
	struct spec c1 = { .mib = { 100, 100, 100, 100 }, .dur = { 13, 13, 13, 13 } };
	struct spec c2 = { .mib = { 100, 100, 100, 100 }, .dur = { 13.1, 13, 13.2, 13 } };
	four(&c, &b1, &b2, &c1, &c2);
	cr_assert_eq(check_regressions(&c), 0);
	check_release(&c);
}

/* ... and on top of that shift, work 50% slower than the rest: work only. */
Test(check, a_stage_slower_than_the_machine_wide_shift_is_flagged_alone)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 100, 100, 100 }, .dur = { 10, 10, 10, 10 } };
	struct spec b2 = { .mib = { 100, 100, 100, 100 }, .dur = { 10.2, 10, 10.1, 10 } };
	struct spec c1 = { .mib = { 100, 100, 100, 100 }, .dur = { 13, 13, 19.5, 13 } };
	struct spec c2 = { .mib = { 100, 100, 100, 100 }, .dur = { 13.1, 13, 19.7, 13 } };
	four(&c, &b1, &b2, &c1, &c2);
	const struct check_finding *f = check_find(&c, CK_REGRESSION, "m", "work", CM_TIME);
	cr_assert_not_null(f);
	cr_assert_float_eq(f->shift, 1.3, 0.01);
	only_regressions_in(&c, "work");
	check_release(&c);
}

/* Stages whose runs spread by 30-40%: two close work values in the baseline do not make
 * work's +18% a regression; it is not judged, too noisy, and says how noisy. */
Test(check, a_change_within_the_pooled_noise_is_not_judged_too_noisy)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 100, 100, 100 }, .dur = { 10, 10, 10, 14 } };
	struct spec b2 = { .mib = { 100, 100, 100, 100 }, .dur = { 14, 13.5, 10.1, 10 } };
	struct spec c1 = { .mib = { 100, 100, 100, 100 }, .dur = { 14, 10, 11.8, 10 } };
	struct spec c2 = { .mib = { 100, 100, 100, 100 }, .dur = { 10, 13.5, 12, 14 } };
	four(&c, &b1, &b2, &c1, &c2);
	cr_assert_eq(check_regressions(&c), 0);
	const struct check_finding *f = check_find(&c, CK_NOT_JUDGED, "m", "work", CM_TIME);
	cr_assert_not_null(f);
	cr_assert(!strncmp(f->detail, "too noisy (spread ", 18), "%s", f->detail);
	check_release(&c);
}

/* A synthetic pair: the candidate's work footprint fell from 4000 to 2000 MiB while
 * system swap rose 2000 MiB in it (none before): the swap rise is a regression, and
 * its row says the footprint fell meanwhile. */
Test(check, swap_growth_is_a_regression_even_when_the_footprint_fell)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 150, 4000, 120 } }, b2 = { .mib = { 100, 150, 4010, 120 } };
	struct spec c1 = { .mib = { 100, 150, 2000, 120 }, .swap = { 0, 0, 2000, 0 } };
	struct spec c2 = { .mib = { 100, 150, 2010, 120 }, .swap = { 0, 0, 2050, 0 } };
	four(&c, &b1, &b2, &c1, &c2);
	const struct check_finding *f = check_find(&c, CK_REGRESSION, "m", "work", CM_SWAP);
	cr_assert_not_null(f);
	cr_assert_not_null(check_find(&c, CK_IMPROVEMENT, "m", "work", CM_PEAK));
	cr_assert_not_null(f->detail);
	cr_assert(strstr(f->detail, "peak footprint fell by 1.94 GB or more"), "%s", f->detail);
	only_regressions_in(&c, "work");
	struct strbuf md = STRBUF_INIT;
	check_render_md(&c, &md);
	cr_assert(strstr(md.buf, "| m | work | swap rise | 0.0 GB (2 runs) | 1.95 to 2.00 GB (2 runs) | "
				 "+1.95 GB, while the peak footprint fell by 1.94 GB or more"), "%s", md.buf);
	strbuf_release(&md);
	check_release(&c);
}

Test(check, device_memory_growth_is_a_regression_like_a_footprints)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 150, 300, 120 }, .dev = { 50, 500, 2000, 500 } };
	struct spec b2 = { .mib = { 100, 150, 300, 120 }, .dev = { 50, 510, 2010, 500 } };
	struct spec c1 = { .mib = { 100, 150, 300, 120 }, .dev = { 50, 500, 5000, 500 } };
	struct spec c2 = { .mib = { 100, 150, 300, 120 }, .dev = { 50, 505, 5020, 500 } };
	four(&c, &b1, &b2, &c1, &c2);
	const struct check_finding *f = check_find(&c, CK_REGRESSION, "m", "work", CM_DEVICE);
	cr_assert_not_null(f);
	cr_expect_float_eq(f->base_max, 2010 * MiB, 1);
	cr_expect_float_eq(f->cand_min, 5000 * MiB, 1);
	cr_expect_str_eq(check_metric_name(CM_DEVICE), "device peak");
	cr_expect_null(check_find(&c, CK_REGRESSION, "m", "work", CM_PEAK));
	only_regressions_in(&c, "work");
	check_release(&c);
}

/* Mapped model files grew in work (the weights now mapped, not copied: the
 * footprint is unchanged): a finding of its own. */
Test(check, mapped_files_growth_is_a_regression_while_the_footprint_holds)
{
	struct check c = CHECK_INIT;
	struct spec b1 = { .mib = { 100, 150, 300, 120 }, .map = { 1, 200, 200, 200 } };
	struct spec b2 = { .mib = { 100, 150, 300, 120 }, .map = { 1, 202, 204, 200 } };
	struct spec c1 = { .mib = { 100, 150, 300, 120 }, .map = { 1, 200, 900, 200 } };
	struct spec c2 = { .mib = { 100, 150, 301, 120 }, .map = { 1, 201, 910, 200 } };
	four(&c, &b1, &b2, &c1, &c2);
	const struct check_finding *f = check_find(&c, CK_REGRESSION, "m", "work", CM_MAPPED);
	cr_assert_not_null(f);
	cr_expect_float_eq(f->base_max, 204 * MiB, 1);
	cr_expect_float_eq(f->cand_min, 900 * MiB, 1);
	cr_expect_str_eq(check_metric_name(CM_MAPPED), "peak mapped");
	cr_expect_null(check_find(&c, CK_REGRESSION, "m", "work", CM_PEAK));
	only_regressions_in(&c, "work");
	check_release(&c);
}

Test(check, runs_without_device_readings_judge_no_device_peak)
{
	struct check c = CHECK_INIT;
	struct spec b = { .mib = { 100, 150, 300, 120 } };
	four(&c, &b, &b, &b, &b);
	for (size_t i = 0; i < c.nfindings; i++)
		cr_expect_neq(c.findings[i].metric, CM_DEVICE);
	check_release(&c);
}

/* The noise rule's numbers come from values alone (check_noise.h): no runs. */
Test(check, noise_pool_and_allowance_are_arithmetic_on_values)
{
	/* per stage: baseline and candidate stage times (s) */
	double b[3][2] = { { 10, 12 }, { 20, 20 }, { 1, 1 } };
	double c[3][2] = { { 11, 11 }, { 22, 22 }, { 1.1, 1.1 } };
	struct check_noise_pool p;
	struct check_noise nz;
	check_noise_pool_init(&p, CM_TIME, 3);
	for (int s = 0; s < 3; s++)
		check_noise_pool_add(&p, b[s], 2, c[s], 2);
	check_noise_pool_end(&p, &nz);
	/* pooled: stages 1 and 2, both sides (stage 3's mean is under 4 floors of
	 * 0.5 s): squared relative deviations 2 x (1/11)^2 over 4 degrees of freedom */
	cr_assert_eq(nz.nsets, 4);
	cr_assert_float_eq(nz.rel_sd, sqrt(2.0 / 121 / 4), 1e-12);
	/* the shift: median of the stages' median ratios 1, 1.1, 1.1 */
	cr_assert_eq(nz.nshift, 3);
	cr_assert_float_eq(nz.shift, 1.1, 1e-12);
	cr_assert_eq(nz.wander_sd, 0, "5 stages needed to say how far single stages wander");

	struct check_options o = CHECK_OPTIONS_INIT; /* times: 10% of max(b) */
	struct check_allowance al;
	check_noise_allowance(&o, CM_TIME, &nz, 12, 2, 0, &al);
	cr_assert_float_eq(al.fixed, 1.2, 1e-12, "10%% of 12 s is above the 0.5 s floor");
	cr_assert_float_eq(al.noise, CHECK_NOISE_K * nz.rel_sd * 12, 1e-12, "pooled beats the 2 s spread");
	cr_assert_float_eq(al.allowed, al.noise, 1e-12);
	cr_assert_float_eq(al.up, 1.1, 1e-12);
	cr_assert_eq(al.down, 1);

	/* memory: no shift, and a size threshold under the 64 MiB floor gives the floor */
	o.growth_is_pct = false;
	o.growth_bytes = 1 << 20;
	check_noise_allowance(&o, CM_PEAK, &(struct check_noise){ .shift = 1 }, 1e9, 0, 0, &al);
	cr_assert_eq(al.fixed, (double)CHECK_MEM_FLOOR_BYTES);
	cr_assert_eq(al.allowed, (double)CHECK_MEM_FLOOR_BYTES);
	cr_assert_eq(al.up, 1);
}
