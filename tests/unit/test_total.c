/* test_total.c -- the resident total (footprint + mapped model files): its table, the
 * verdict that leads with it, its JSON, and the stages chart that stacks its two parts */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyze/table.h"
#include "../../common/util.h"
#include "../../plots/plot.h"
#include "../../traces/trace.h"

#define MB (1ull << 20)

/* The figures of one run (bytes): per stage encode, unet, vae.decode its
 * footprint and its mapped model files; it loads model `load` in encode. */
struct fig {
	uint64_t fp[3], map[3];
	const char *load;
};

/* The full-size SDXL comparison's shape: staging lowers the mapped files of
 * unet and vae.decode by gigabytes while its footprint is a little higher. */
static const struct fig eager_runs[] = {
	{ { 400 * MB, 689 * MB, 822 * MB }, { 2048 * MB, 12200 * MB, 10100 * MB }, "text_encoder_2" },
	{ { 402 * MB, 690 * MB, 824 * MB }, { 2048 * MB, 12210 * MB, 10100 * MB }, "text_encoder_2" },
};
static const struct fig staged_runs[] = {
	{ { 700 * MB, 712 * MB, 942 * MB }, { 2048 * MB, 9600 * MB, 216 * MB }, "vae" },
	{ { 702 * MB, 713 * MB, 945 * MB }, { 2048 * MB, 9610 * MB, 216 * MB }, "vae" },
};

static char *trace_text(const char *mode, const struct fig *f)
{
	static const char *const stage[3] = { "encode", "unet", "vae.decode" };
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"%s\"}\n"
			 "{\"type\":\"sample\",\"t\":1,\"footprint\":%llu,\"mapped\":0}\n",
		    mode, 300 * MB);
	for (int s = 0; s < 3; s++) {
		strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"%s\",\"t\":%d}\n",
			    stage[s], 10 * (s + 1));
		if (!s)
			strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"load\",\"t\":11,\"stage\":\"encode\","
					 "\"name\":\"%s\",\"nbytes\":%llu,\"seconds\":1.0}\n", f->load, 500 * MB);
		strbuf_addf(&sb, "{\"type\":\"sample\",\"t\":%d,\"footprint\":%llu,\"mapped\":%llu}\n",
			    10 * (s + 1) + 5, (unsigned long long)f->fp[s], (unsigned long long)f->map[s]);
	}
	strbuf_addstr(&sb, "{\"type\":\"end\",\"exit\":0}\n");
	return strbuf_detach(&sb);
}

static void run_of(struct table_run *r, struct trace *tr, const char *mode, const struct fig *f)
{
	char *text = trace_text(mode, f);
	*tr = (struct trace)TRACE_INIT;
	cr_assert_eq(trace_read_mem("total.jsonl", text, strlen(text), tr), 0);
	memset(r, 0, sizeof(*r));
	cr_assert_eq(analysis_run(tr, NULL, &r->a), 0);
	free(text);
}

static char *render(const struct table *t, void (*fn)(const struct table *, struct strbuf *))
{
	struct strbuf sb = STRBUF_INIT;
	fn(t, &sb);
	return strbuf_detach(&sb);
}

/* Two runs of each mode, staged's load in encode named `staged_load`. */
static void build(struct table *t, struct table_run *r, struct trace *tr, const char *staged_load)
{
	struct fig s[2] = { staged_runs[0], staged_runs[1] };
	s[0].load = s[1].load = staged_load;
	run_of(&r[0], &tr[0], "eager", &eager_runs[0]);
	run_of(&r[1], &tr[1], "eager", &eager_runs[1]);
	run_of(&r[2], &tr[2], "staged", &s[0]);
	run_of(&r[3], &tr[3], "staged", &s[1]);
	*t = (struct table)TABLE_INIT;
	cr_assert_eq(table_build(t, r, 4, NULL, 0), 0);
}

static void release(struct table *t, struct table_run *r, struct trace *tr)
{
	table_release(t);
	for (int i = 0; i < 4; i++) {
		analysis_release(&r[i].a);
		trace_release(&tr[i]);
	}
}

Test(total, each_cell_is_its_runs_footprint_plus_mapped_files)
{
	struct table t;
	struct table_run r[4];
	struct trace tr[4];
	build(&t, r, tr, "vae");
	const struct table_cell *c = table_cell(&t, 3, 1); /* vae.decode, staged */
	cr_assert(c->has_total);
	cr_assert_eq(c->total_min, (942 + 216) * MB);
	cr_assert_eq(c->total_max, (945 + 216) * MB);
	cr_assert_eq(t.comparisons[0].ntotals, 4);
	const struct table_stage_diff *d = &t.comparisons[0].totals[3];
	/* eager's runs hold 10922 and 10924 MiB there, staged's 1158 and 1161 */
	cr_assert_eq(d->min_less, (int64_t)((10922 - 1161) * MB));
	cr_assert_eq(d->max_less, (int64_t)((10924 - 1158) * MB));
	char *md = render(&t, table_render_md);
	cr_assert(strstr(md, "| stage | eager, resident total (footprint + model files) | staged, "
			     "resident total (footprint + model files) |\n"), "%s", md);
	cr_assert(strstr(md, "| vae.decode | 10.7 GB (822 to 824 MB + 9.9 GB) | 1.1 GB (942 to "
			     "945 MB + 216 MB) |\n"), "%s", md);
	char *json = render(&t, table_render_json);
	cr_assert(strstr(json, "\"total_min_bytes\": 1214251008"), "%s", json);
	cr_assert(strstr(json, "\"total\": ["), "%s", json);
	free(md);
	free(json);
	release(&t, r, tr);
}

/* The verdict a user reads first (table.md, the terminal, report.html) leads with what
 * the machine holds: staging's 9.5 GB saving, not the footprint's 120 MB rise. */
Test(total, the_verdict_leads_with_what_the_machine_holds)
{
	struct table t;
	struct table_run r[4];
	struct trace tr[4];
	build(&t, r, tr, "vae");
	const char *want = "Counting what the machine holds (footprint + mapped model files), staged "
			   "held 9.5 GB less than eager in vae.decode, its largest saving; it held 298 "
			   "to 302 MB more in encode (it loads vae there); largest stage: eager 12.6 GB "
			   "in unet (689 to 690 MB + 11.9 GB model files), staged 10.1 GB in unet (712 "
			   "to 713 MB + 9.4 GB model files).\n";
	char *md = render(&t, table_render_md), *v = render(&t, table_render_verdict);
	cr_assert(strstr(md, want), "%s", md);
	cr_assert(strstr(v, want), "%s", v);
	/* the footprint's sentence still follows it */
	cr_assert(strstr(v, want) < strstr(v, "staged used 118 to 123 MB more than eager in "
						 "vae.decode"), "%s", v);
	free(md);
	free(v);
	release(&t, r, tr);
	/* the same model loaded in the same stage by both modes is no reason */
	build(&t, r, tr, "text_encoder_2");
	md = render(&t, table_render_md);
	cr_assert(strstr(md, "it held 298 to 302 MB more in encode; largest"), "%s", md);
	free(md);
	release(&t, r, tr);
}

/* Runs that map no model file: no total table, the verdict as before. */
Test(total, runs_without_model_files_keep_the_footprint_verdict)
{
	struct fig e = eager_runs[0], s = staged_runs[0];
	for (int i = 0; i < 3; i++)
		e.map[i] = s.map[i] = 0;
	struct table_run r[2];
	struct trace tr[2];
	run_of(&r[0], &tr[0], "eager", &e);
	run_of(&r[1], &tr[1], "staged", &s);
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, r, 2, NULL, 0), 0);
	char *md = render(&t, table_render_md);
	cr_assert_null(strstr(md, "Counting what the machine holds"), "%s", md);
	cr_assert_null(strstr(md, "resident total"), "%s", md);
	free(md);
	table_release(&t);
	for (int i = 0; i < 2; i++) {
		analysis_release(&r[i].a);
		trace_release(&tr[i]);
	}
}

/* The stages chart stacks the mapped files on the footprint: a light box per bar as
 * high as both, under the footprint's box; the note above it the total. */
Test(total, the_stages_chart_stacks_mapped_files_on_the_footprint)
{
	struct table_run r[4];
	struct trace tr[4];
	struct table t;
	build(&t, r, tr, "vae");
	table_release(&t);
	for (int i = 0; i < 4; i++)
		analysis_release(&r[i].a);
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = PLOT_SVG;
	struct plot_model m;
	cr_assert_eq(plot_model_build(&o, tr, NULL, 4, &m), 0);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < plot_ncharts; i++)
		if (!strcmp(plot_charts[i].name, "stages"))
			plot_charts[i].script(&sb, &m, &o, "/out/stages.svg");
	const char *s = strbuf_str(&sb);
	/* staged's vae.decode: 945 MiB + 216 MiB = 1.134 GB, stage 3, second of two bars */
	cr_assert(strstr(s, "$map1 << EOD\n"), "%s", s);
	cr_assert(strstr(s, "3.2000 1.1338 "), "staged's vae.decode stacked: %s", s);
	cr_assert(strstr(s, "$map0 using 1:2:3 with boxes"), "%s", s);
	cr_assert(strstr(s, "$map0 using") < strstr(s, "$bars0 using"), "mapped under: %s", s);
	cr_assert(strstr(s, "set label \"12.6\""), "eager's unet note is its total: %s", s);
	cr_assert(strstr(s, "\"mapped model files, above the footprint (light)\""), "legend: %s", s);
	cr_assert(strstr(s, "footprint + model files (GB)"), "%s", s);
	strbuf_release(&sb);
	plot_model_release(&m);
	for (int i = 0; i < 4; i++)
		trace_release(&tr[i]);
}
