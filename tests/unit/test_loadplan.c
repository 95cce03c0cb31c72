/* test_loadplan.c -- the plan as it ran: each variant's models, the stage each was loaded
 * and released in, from the traces' events; runs that disagree, models held to the end, a
 * model not staged with the probe's reason; its markdown and JSON; a real stageload trace */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyze/loadplan.h"
#include "../../analyze/table.h"
#include "../../common/util.h"
#include "../../traces/trace.h"
#include "fixtures.h"

#define MB (1ull << 20)

/* A trace of MODE (its file DIR/ID.trace.jsonl) whose events are EVENTS, lines of
 * "KIND T STAGE-OR-NAME [NAME NBYTES]": "stage 10 encode", "load 11 encode te 1000",
 * "reload ...", "release 20 denoise te 1000", "mark 1 TEXT..." (the rest of the line). */
static char *trace_text(const char *mode, const char *const *events)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"%s\"}\n"
			 "{\"type\":\"sample\",\"t\":0.5,\"footprint\":%llu}\n", mode, 100 * MB);
	for (size_t i = 0; events[i]; i++) {
		char kind[16], a[64], name[64];
		double t;
		unsigned long long nbytes = 0;
		int n = sscanf(events[i], "%15s %lf %63s %63s %llu", kind, &t, a, name, &nbytes);
		cr_assert_geq(n, 3, "bad fixture line %s", events[i]);
		if (!strcmp(kind, "stage"))
			strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"stage\",\"t\":%g,\"stage\":\"%s\"}\n",
				    t, a);
		else if (!strcmp(kind, "mark"))
			strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"mark\",\"t\":%g,\"note\":\"%s\"}\n", t,
				    strchr(strchr(events[i], ' ') + 1, ' ') + 1);
		else
			strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"%s\",\"t\":%g,\"stage\":\"%s\","
					 "\"name\":\"%s\",\"nbytes\":%llu%s}\n", kind, t, a, name, nbytes,
				    strcmp(kind, "release") ? ",\"seconds\":0.5" : "");
		strbuf_addf(&sb, "{\"type\":\"sample\",\"t\":%g,\"footprint\":%llu}\n", t + 0.25, 200 * MB);
	}
	strbuf_addstr(&sb, "{\"type\":\"end\",\"exit\":0}\n");
	return strbuf_detach(&sb);
}

struct runs {
	struct table_run r[6];
	struct trace tr[6];
	size_t n;
	struct table t;
	struct loadplan p;
};

static void add(struct runs *rs, const char *mode, const char *id, const char *const *events)
{
	char *text = trace_text(mode, events), *path = xasprintf("out/%s.trace.jsonl.zst", id);
	struct trace *tr = &rs->tr[rs->n];
	*tr = (struct trace)TRACE_INIT;
	cr_assert_eq(trace_read_mem(path, text, strlen(text), tr), 0, "%s", text);
	memset(&rs->r[rs->n], 0, sizeof(rs->r[rs->n]));
	cr_assert_eq(analysis_run(tr, NULL, &rs->r[rs->n].a), 0);
	rs->n++;
	free(text);
	free(path);
}

static void build(struct runs *rs)
{
	rs->t = (struct table)TABLE_INIT;
	cr_assert_eq(table_build(&rs->t, rs->r, rs->n, NULL, 0), 0);
	loadplan_build(&rs->p, &rs->t);
}

static void release_all(struct runs *rs)
{
	loadplan_release(&rs->p);
	table_release(&rs->t);
	for (size_t i = 0; i < rs->n; i++) {
		analysis_release(&rs->r[i].a);
		trace_release(&rs->tr[i]);
	}
}

static size_t model(const struct loadplan *p, const char *name)
{
	for (size_t i = 0; i < p->nmodels; i++)
		if (!strcmp(p->models[i].name, name))
			return i;
	cr_assert_fail("no model %s in the plan", name);
	return 0;
}

static size_t mode(const struct loadplan *p, const char *name)
{
	for (size_t i = 0; i < p->nmodes; i++)
		if (!strcmp(p->modes[i].name, name))
			return i;
	cr_assert_fail("no mode %s in the plan", name);
	return 0;
}

static char *md_of(const struct loadplan *p)
{
	struct strbuf sb = STRBUF_INIT;
	loadplan_render_md(p, &sb);
	strbuf_addstr(&sb, "");
	return strbuf_detach(&sb);
}

static const char NOTE[] = "mark 1 not staged: safety (12.0 MB): used while the script sets "
			   "itself up (.config), so built then and kept resident; forced by "
			   "app:main at app.py:9";

/* eager: every model built in setup (the encoder twice), none released. */
static const char *const EAGER[] = {
	"load 1 setup te 1000000", "load 2 setup te 1000000", "load 3 setup unet 30000000",
	"load 4 setup vae 2000000", "stage 10 encode", "stage 20 denoise", "stage 30 decode", NULL,
};
/* staged-1: te in encode, released entering denoise; unet in denoise, released entering
 * decode; vae loaded in decode, the last stage, and held; safety kept from setup (the
 * mark's reason). */
static const char *const STAGED1[] = {
	NOTE, "load 2 setup safety 12582912", "stage 10 encode", "load 11 encode te 1000000",
	"stage 20 denoise", "release 20.1 denoise te 1000000", "load 21 denoise unet 30000000",
	"stage 30 decode", "release 30.1 decode unet 30000000", "load 31 decode vae 2000000", NULL,
};
/* staged-2: the same but unet loaded early, in encode */
static const char *const STAGED2[] = {
	NOTE, "load 2 setup safety 12582912", "stage 10 encode", "load 11 encode te 1000000",
	"load 12 encode unet 30000000", "stage 20 denoise", "release 20.1 denoise te 1000000",
	"stage 30 decode", "release 30.1 decode unet 30000000", "load 31 decode vae 2000000", NULL,
};

static void two_and_two(struct runs *rs)
{
	memset(rs, 0, sizeof(*rs));
	add(rs, "eager", "eager-1", EAGER);
	add(rs, "staged", "staged-1", STAGED1);
	add(rs, "eager", "eager-2", EAGER);
	add(rs, "staged", "staged-2", STAGED2);
	build(rs);
}

Test(loadplan, spans_from_the_events_of_each_run)
{
	struct runs rs;
	two_and_two(&rs);
	const struct loadplan *p = &rs.p;
	size_t e = mode(p, "eager"), s = mode(p, "staged");
	cr_assert_eq(p->nmodels, 4);
	/* rows: the variant that releases first, in its order: safety, te, unet, vae */
	cr_expect_str_eq(p->models[0].name, "safety");
	cr_expect_str_eq(p->models[1].name, "te");
	cr_expect_str_eq(p->models[3].name, "vae");
	cr_expect(p->modes[s].reported && p->modes[s].released_any);
	cr_expect(p->modes[e].reported && !p->modes[e].released_any);
	cr_expect_str_eq(p->modes[e].one_stage, "setup");
	cr_expect_null(p->modes[s].one_stage);

	const struct loadplan_cell *c = loadplan_cell(p, model(p, "te"), s);
	cr_assert_eq(c->ngroups, 1, "both staged runs agree on te");
	cr_assert_eq(c->groups[0].nruns, 2);
	cr_assert_eq(c->groups[0].nspans, 1);
	cr_expect_str_eq(c->groups[0].spans[0].loaded, "encode");
	cr_expect_str_eq(c->groups[0].spans[0].released, "denoise");
	cr_expect(!c->held);

	c = loadplan_cell(p, model(p, "te"), e);
	cr_assert_eq(c->ngroups, 1);
	cr_assert_eq(c->groups[0].nspans, 1, "a second build with the first not released: one span");
	cr_expect_eq(c->groups[0].spans[0].nbuilds, 2);
	cr_expect_null(c->groups[0].spans[0].released, "eager never releases it");
	cr_expect(c->held);

	/* the runs disagree on unet: loaded in denoise (staged-1), in encode (staged-2) */
	c = loadplan_cell(p, model(p, "unet"), s);
	cr_assert_eq(c->ngroups, 2);
	cr_expect_str_eq(c->groups[0].runs[0], "staged-1");
	cr_expect_str_eq(c->groups[0].spans[0].loaded, "denoise");
	cr_expect_str_eq(c->groups[1].runs[0], "staged-2");
	cr_expect_str_eq(c->groups[1].spans[0].loaded, "encode");
	cr_expect_str_eq(c->groups[1].spans[0].released, "decode");

	/* vae: loaded in the last stage, never released */
	c = loadplan_cell(p, model(p, "vae"), s);
	cr_assert_eq(c->ngroups, 1);
	cr_expect(c->held && c->held_in_last);
	cr_expect_null(c->groups[0].spans[0].released);

	/* safety: loaded in setup and held, with the probe's reason */
	c = loadplan_cell(p, model(p, "safety"), s);
	cr_expect(c->held && !c->held_in_last && !c->note_only);
	cr_assert_not_null(c->why);
	cr_expect(!strncmp(c->why, "used while the script sets itself up (.config)", 46), "%s", c->why);
	cr_expect_eq(p->models[model(p, "safety")].size_from, LOADPLAN_SIZE_LOADS,
		     "the load event's size before the mark's");
	cr_expect_eq(p->models[model(p, "safety")].max_bytes, 12 * MB);
	cr_expect_eq(loadplan_cell(p, model(p, "safety"), e)->ngroups, 1);
	cr_expect_eq(loadplan_cell(p, model(p, "safety"), e)->groups[0].nspans, 0,
		     "eager never names it");
	release_all(&rs);
}

Test(loadplan, markdown_table_and_sentences)
{
	struct runs rs;
	two_and_two(&rs);
	int v = sb_verbosity;
	sb_verbosity = 0;
	char *md = md_of(&rs.p);
	sb_verbosity = v;
	static const char *const want[] = {
		"| model | size | eager, loaded | eager, released | staged, loaded | staged, released |\n"
		"|---|---|---|---|---|---|\n",
		"| safety | 12 MB | - | - | setup | held to the end |\n",
		"| te | 1.0 MB | setup (2 builds) | held to the end | encode | denoise |\n",
		"| unet | 29 MB | setup | held to the end | denoise (staged-1); encode (staged-2) | decode |\n",
		"| vae | 1.9 MB | setup | held to the end | decode | held to the end |\n",
		"staged: left resident (held to the end): safety (12 MB): used while the script sets "
		"itself up (.config), so built then and kept resident; vae (1.9 MB): loaded in the "
		"run's last stage.\n",
		"The 2 staged runs do not agree on the plan of: unet (each run's stages are in the table).\n",
		"eager: every model loaded in setup and held to the end.\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_not_null(strstr(md, want[i]), "missing:\n%s\nin:\n%s", want[i], md);
	cr_expect_null(strstr(md, "forced by"), "the call that forced it only with -v: %s", md);
	free(md);
	sb_verbosity = 1;
	md = md_of(&rs.p);
	sb_verbosity = v;
	cr_expect_not_null(strstr(md, "kept resident; forced by app:main at app.py:9;"), "%s", md);
	free(md);
	release_all(&rs);
}

Test(loadplan, the_runs_disagree_in_the_release_column_too)
{
	struct runs rs;
	memset(&rs, 0, sizeof(rs));
	add(&rs, "staged", "staged-1", STAGED1);
	/* staged-2 keeps unet to the end */
	static const char *const KEEP[] = {
		"stage 10 encode", "stage 20 denoise", "load 21 denoise unet 30000000", "stage 30 decode",
		NULL,
	};
	add(&rs, "staged", "staged-2", KEEP);
	build(&rs);
	char *md = md_of(&rs.p);
	cr_expect_not_null(strstr(md, "| unet | 29 MB | denoise | "
				      "decode (staged-1); held to the end (staged-2) |\n"), "%s", md);
	cr_expect_not_null(strstr(md, "| te | 1.0 MB | encode (staged-1); not loaded (staged-2) | "
				      "denoise (staged-1); - (staged-2) |\n"), "%s", md);
	cr_expect_not_null(strstr(md, "do not agree on the plan of: safety, te, unet, vae"), "%s", md);
	cr_expect_not_null(strstr(md, "unet (29 MB): no reason in the trace"), "%s", md);
	free(md);
	release_all(&rs);
}

Test(loadplan, a_reload_a_release_with_no_load_and_a_model_named_only_by_the_mark)
{
	struct runs rs;
	memset(&rs, 0, sizeof(rs));
	static const char *const EV[] = {
		"mark 1 not staged: norm (3.0 MB): 2 of its parts are made by the script",
		"stage 10 a", "load 11 a dec 5000000", "stage 20 b", "release 20.1 b dec 5000000",
		"release 20.2 b remover 7340032", "stage 30 c", "reload 31 c dec 5000000",
		"stage 40 d", "release 40.1 d dec 5000000", NULL,
	};
	add(&rs, "staged", "staged-1", EV);
	build(&rs);
	const struct loadplan *p = &rs.p;
	const struct loadplan_cell *c = loadplan_cell(p, model(p, "dec"), 0);
	cr_assert_eq(c->groups[0].nspans, 2);
	cr_expect(!c->groups[0].spans[0].reload && c->groups[0].spans[1].reload);
	cr_expect_str_eq(c->groups[0].spans[1].loaded, "c");
	cr_expect_str_eq(c->groups[0].spans[1].released, "d");
	c = loadplan_cell(p, model(p, "remover"), 0);
	cr_expect_null(c->groups[0].spans[0].loaded, "released with no load event");
	cr_expect_eq(p->models[model(p, "remover")].size_from, LOADPLAN_SIZE_RELEASES);
	c = loadplan_cell(p, model(p, "norm"), 0);
	cr_expect(c->note_only && !c->held);
	cr_expect_eq(p->models[model(p, "norm")].size_from, LOADPLAN_SIZE_MARK);
	cr_expect_eq(p->models[model(p, "norm")].max_bytes, 3 * MB, "the mark's MB are the tables'");
	char *md = md_of(p);
	static const char *const want[] = {
		"| norm | 3.0 MB | not staged | - |\n",
		"| dec | 4.8 MB | a, c (reload) | b, d |\n",
		"| remover | 7.0 MB | no load event | b |\n",
		"staged: left resident (held to the end): norm (3.0 MB, not staged, left as the script "
		"makes it): 2 of its parts are made by the script.\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_not_null(strstr(md, want[i]), "missing:\n%s\nin:\n%s", want[i], md);
	free(md);
	release_all(&rs);
}

/* The table's JSON parsed, its "plan" key. */
static json_t *plan_json(const struct table *t, json_t **root)
{
	struct strbuf js = STRBUF_INIT;
	table_render_json(t, &js);
	json_error_t err;
	*root = json_loads(js.buf, 0, &err);
	cr_assert_not_null(*root, "not JSON: %s: %s", err.text, js.buf);
	strbuf_release(&js);
	json_t *plan = json_object_get(*root, "plan");
	cr_assert(json_is_object(plan));
	return plan;
}

static json_t *named(json_t *array, const char *key, const char *value)
{
	size_t i;
	json_t *v;
	json_array_foreach(array, i, v)
		if (!strcmp(json_string_value(json_object_get(v, key)) ?: "", value))
			return v;
	cr_assert_fail("no %s %s", key, value);
	return NULL;
}

Test(loadplan, no_event_no_plan_and_json_says_so)
{
	struct runs rs;
	memset(&rs, 0, sizeof(rs));
	static const char *const NONE[] = { "stage 10 encode", "stage 20 decode", NULL };
	add(&rs, "eager", "eager-1", NONE);
	add(&rs, "staged", "staged-1", NONE);
	build(&rs);
	cr_expect_eq(rs.p.nmodels, 0);
	char *md = md_of(&rs.p);
	cr_expect_str_eq(md, "", "nothing rendered: %s", md);
	free(md);
	json_t *root, *plan = plan_json(&rs.t, &root);
	cr_expect_eq(json_array_size(json_object_get(plan, "models")), 0);
	json_t *e = named(json_object_get(plan, "modes"), "mode", "eager");
	cr_expect(json_is_false(json_object_get(e, "reported")));
	json_decref(root);
	release_all(&rs);
}

Test(loadplan, json_gives_each_variants_groups_of_runs)
{
	struct runs rs;
	two_and_two(&rs);
	json_t *root, *plan = plan_json(&rs.t, &root);
	json_t *models = json_object_get(plan, "models");
	json_t *unet = named(models, "name", "unet");
	cr_expect_eq(json_integer_value(json_object_get(unet, "max_bytes")), 30000000);
	cr_expect_str_eq(json_string_value(json_object_get(unet, "size_from")), "loads");
	json_t *st = named(json_object_get(unet, "modes"), "mode", "staged");
	cr_expect(json_is_false(json_object_get(st, "runs_agree")));
	json_t *groups = json_object_get(st, "groups");
	cr_assert_eq(json_array_size(groups), 2);
	json_t *g2 = json_array_get(groups, 1);
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(g2, "runs"), 0)), "staged-2");
	json_t *span = json_array_get(json_object_get(g2, "spans"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(span, "loaded")), "encode");
	cr_expect_str_eq(json_string_value(json_object_get(span, "released")), "decode");
	json_t *vae = named(json_object_get(named(models, "name", "vae"), "modes"), "mode", "staged");
	cr_expect(json_is_true(json_object_get(vae, "held_to_end")));
	span = json_array_get(json_object_get(json_array_get(json_object_get(vae, "groups"), 0), "spans"), 0);
	cr_expect(json_is_null(json_object_get(span, "released")), "held: released null");
	json_t *safety = named(json_object_get(named(models, "name", "safety"), "modes"), "mode", "staged");
	cr_expect(!strncmp(json_string_value(json_object_get(safety, "not_staged")) ?: "",
			   "used while the script sets itself up", 36));
	json_t *te = named(json_object_get(named(models, "name", "te"), "modes"), "mode", "eager");
	span = json_array_get(json_object_get(json_array_get(json_object_get(te, "groups"), 0), "spans"), 0);
	cr_expect_eq(json_integer_value(json_object_get(span, "builds")), 2);
	json_decref(root);
	release_all(&rs);
}

/* The real stageload trace: its staged runs load and release each model, its eager run
 * reports no load at all. */
Test(loadplan, a_real_stageload_comparison)
{
	struct table_run r[3];
	static const char *const names[] = { "eager-1", "staged-1", "staged-2" };
	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < 3; i++) {
		char *path = xasprintf("%s/stageload/2026-10-06-qwen-image/%s.trace.jsonl", fixtures_dir(),
				       names[i]);
		cr_assert_eq(analysis_open(path, &r[i].a), 0, "%s", path);
		free(path);
	}
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 3, NULL, 0), 0);
	struct loadplan p = LOADPLAN_INIT;
	loadplan_build(&p, &t);
	cr_expect(!p.modes[mode(&p, "eager")].reported);
	char *md = md_of(&p);
	cr_expect_not_null(strstr(md, "| model | size | staged, loaded | staged, released |\n"), "%s", md);
	cr_expect_not_null(strstr(md, "| text_encoder | 16.3 GB | encode | denoise |\n"), "%s", md);
	cr_expect_not_null(strstr(md, "| transformer | 13.3 GB | denoise | decode |\n"), "%s", md);
	cr_expect_not_null(strstr(md, "eager: no load or release event in its traces"), "%s", md);
	cr_expect_null(strstr(md, "do not agree"), "%s", md);
	free(md);
	loadplan_release(&p);
	table_release(&t);
	for (size_t i = 0; i < 3; i++)
		analysis_release(&r[i].a);
}
