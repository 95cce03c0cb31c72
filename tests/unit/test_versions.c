/* test_versions.c -- which library versions differ between the groups of a comparison */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyze/table.h"
#include "../../analyze/versions.h"
#include "../../common/jsonw.h"
#include "../../common/util.h"
#include "../../traces/trace.h"

/* A run naming "name=value" pairs (NULL-terminated). */
static void mk(struct analysis *a, const char *const *pairs)
{
	memset(a, 0, sizeof(*a));
	for (size_t i = 0; pairs[i]; i++) {
		const char *eq = strchr(pairs[i], '=');
		a->versions = xrealloc(a->versions, (a->nversions + 1) * sizeof(*a->versions));
		a->versions[a->nversions].name = xstrndup(pairs[i], (size_t)(eq - pairs[i]));
		a->versions[a->nversions++].value = xstrdup(eq + 1);
	}
}

static char *text_of(const struct analysis *runs, const size_t *split, size_t ngroups,
		     const char *const *labels, bool md)
{
	struct versions_group g[4];
	const struct analysis *p[8];
	size_t n = 0;
	for (size_t k = 0; k < ngroups; k++) {
		g[k].label = labels[k];
		g[k].runs = p + n;
		g[k].nruns = split[k];
		for (size_t i = 0; i < split[k]; i++, n++)
			p[n] = &runs[n];
	}
	struct versions_diff d = VERSIONS_DIFF_INIT;
	versions_compare(&d, g, ngroups);
	struct strbuf sb = STRBUF_INIT;
	versions_diff_text(&d, &sb, md);
	versions_diff_release(&d);
	strbuf_addstr(&sb, "");
	return strbuf_detach(&sb);
}

static const char *const two[] = { "eager", "staged" };

Test(versions, a_library_at_different_versions_is_named_with_each_groups_value)
{
	struct analysis r[2];
	mk(&r[0], (const char *[]){ "python=3.11.2", "torch=2.6.0", NULL });
	mk(&r[1], (const char *[]){ "python=3.11.2", "torch=2.15.0", NULL });
	char *t = text_of(r, (size_t[]){ 1, 1 }, 2, two, false);
	cr_assert_str_eq(t, "torch 2.6.0 (eager) / 2.15.0 (staged)");
	free(t);
	analysis_release(&r[0]);
	analysis_release(&r[1]);
}

Test(versions, agreeing_or_unknown_versions_say_nothing)
{
	struct analysis r[4];
	mk(&r[0], (const char *[]){ "torch=2.6.0", NULL });
	mk(&r[1], (const char *[]){ "torch=2.6.0", "diffusers=0.30.0", NULL }); /* only one side */
	mk(&r[2], (const char *[]){ NULL });                                  /* an old trace */
	mk(&r[3], (const char *[]){ "torch=2.6.0", NULL });
	char *t = text_of(r, (size_t[]){ 2, 2 }, 2, two, false);
	cr_assert_str_eq(t, "");
	free(t);
	for (int i = 0; i < 4; i++)
		analysis_release(&r[i]);
}

Test(versions, runs_of_one_group_that_differ_and_several_names)
{
	struct analysis r[3];
	mk(&r[0], (const char *[]){ "python=3.11.2", "torch=2.6.0", NULL });
	mk(&r[1], (const char *[]){ "python=3.13.5", "torch=2.6.0", NULL });
	mk(&r[2], (const char *[]){ "python=3.11.2", "torch=2.15.0", NULL });
	char *t = text_of(r, (size_t[]){ 2, 1 }, 2, (const char *const[]){ "baseline", "candidate" },
			  false);
	cr_assert_str_eq(t, "python 3.11.2 and 3.13.5 (baseline) / 3.11.2 (candidate); "
			    "torch 2.6.0 (baseline) / 2.15.0 (candidate)");
	free(t);
	/* within one group alone it is still a difference */
	t = text_of(r, (size_t[]){ 2 }, 1, two, false);
	cr_assert_str_eq(t, "python 3.11.2 and 3.13.5 (eager)");
	free(t);
	for (int i = 0; i < 3; i++)
		analysis_release(&r[i]);
}

Test(versions, a_group_that_does_not_know_a_name_is_left_out)
{
	struct analysis r[3];
	mk(&r[0], (const char *[]){ "torch=2.6.0", NULL });
	mk(&r[1], (const char *[]){ NULL });
	mk(&r[2], (const char *[]){ "torch=2.7.0", NULL });
	char *t = text_of(r, (size_t[]){ 1, 1, 1 }, 3,
			  (const char *const[]){ "eager", "staged", "staged-no-rng" }, false);
	cr_assert_str_eq(t, "torch 2.6.0 (eager) / 2.7.0 (staged-no-rng)");
	free(t);
	for (int i = 0; i < 3; i++)
		analysis_release(&r[i]);
}

Test(versions, markdown_and_terminal_text_are_escaped)
{
	struct analysis r[2];
	mk(&r[0], (const char *[]){ "to|rch=2.6\n0", NULL });
	mk(&r[1], (const char *[]){ "to|rch=2.7", NULL });
	char *t = text_of(r, (size_t[]){ 1, 1 }, 2, (const char *const[]){ "a|b", "c" }, true);
	cr_assert_str_eq(t, "to\\|rch 2.6\\n0 (a\\|b) / 2.7 (c)");
	free(t);
	t = text_of(r, (size_t[]){ 1, 1 }, 2, (const char *const[]){ "a", "c\033" }, false);
	cr_assert_str_eq(t, "to|rch 2.6\\n0 (a) / 2.7 (c\\x1b)");
	free(t);
	analysis_release(&r[0]);
	analysis_release(&r[1]);
}

Test(versions, json_lists_the_differences_and_each_runs_versions)
{
	struct analysis r[3];
	mk(&r[0], (const char *[]){ "torch=2.6.0", NULL });
	mk(&r[1], (const char *[]){ "torch=2.15.0", NULL });
	mk(&r[2], (const char *[]){ "torch=2.16.0", NULL });
	const struct analysis *p[3] = { &r[0], &r[1], &r[2] };
	struct versions_group g[2] = { { "eager", p, 1 }, { "staged", p + 1, 2 } };
	struct versions_diff d = VERSIONS_DIFF_INIT;
	versions_compare(&d, g, 2);
	struct strbuf sb = STRBUF_INIT;
	struct jsonw w = JSONW_INIT(&sb);
	jw_object_begin(&w);
	versions_diff_json(&d, &w);
	versions_run_json(&r[0], &w);
	jw_object_end(&w);
	char *compact = xcalloc(sb.len + 1, 1);
	for (size_t i = 0, k = 0; i < sb.len; i++)
		if (sb.buf[i] != ' ' && sb.buf[i] != '\n')
			compact[k++] = sb.buf[i];
	cr_assert_str_eq(compact, "{\"versions_differ\":[{\"name\":\"torch\",\"values\":"
				  "{\"eager\":[\"2.6.0\"],\"staged\":[\"2.15.0\",\"2.16.0\"]}}],"
				  "\"versions\":{\"torch\":\"2.6.0\"}}");
	free(compact);
	strbuf_release(&sb);
	/* nothing differs, no versions: no keys at all */
	versions_diff_release(&d);
	struct analysis none;
	mk(&none, (const char *[]){ NULL });
	g[1].runs = p;
	g[1].nruns = 1;
	versions_compare(&d, g, 2);
	struct strbuf sb2 = STRBUF_INIT;
	struct jsonw w2 = JSONW_INIT(&sb2);
	jw_object_begin(&w2);
	versions_diff_json(&d, &w2);
	versions_run_json(&none, &w2);
	jw_object_end(&w2);
	cr_assert_str_eq(strbuf_str(&sb2), "{}\n");
	versions_diff_release(&d);
	strbuf_release(&sb2);
	analysis_release(&none);
	for (int i = 0; i < 3; i++)
		analysis_release(&r[i]);
}

/* The table compares its columns' main runs. */
Test(versions, the_table_compares_its_columns)
{
	struct table_run runs[2];
	memset(runs, 0, sizeof(runs));
	const char *text[2] = {
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"eager\"}\n"
		"{\"type\":\"event\",\"kind\":\"versions\",\"t\":0,\"versions\":{\"torch\":\"2.6.0\"}}\n"
		"{\"type\":\"sample\",\"t\":1,\"footprint\":100}\n",
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"staged\"}\n"
		"{\"type\":\"event\",\"kind\":\"versions\",\"t\":0,\"versions\":{\"torch\":\"2.15.0\"}}\n"
		"{\"type\":\"sample\",\"t\":1,\"footprint\":100}\n",
	};
	for (int i = 0; i < 2; i++) {
		struct trace tr;
		cr_assert_eq(trace_read_mem("t", text[i], strlen(text[i]), &tr), 0);
		cr_assert_eq(analysis_run(&tr, NULL, &runs[i].a), 0);
		trace_release(&tr);
		cr_assert_eq(runs[i].a.nversions, 1);
	}
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, runs, 2, NULL, 0), 0);
	cr_assert_eq(t.versions.ndiffs, 1);
	struct strbuf md = STRBUF_INIT;
	table_render_md(&t, &md);
	/* after the reader line (table_readers.c), before the table */
	const char *v = strstr(md.buf, "\n\n");
	cr_assert(str_starts_with(md.buf, "Footprint reader: ") && v, "%s", md.buf);
	cr_assert(str_starts_with(v + 2, "Versions differ: torch 2.6.0 (eager) / 2.15.0 (staged).\n\n| stage"),
		  "%s", md.buf);
	strbuf_release(&md);
	table_release(&t);
	for (int i = 0; i < 2; i++)
		analysis_release(&runs[i].a);
}
