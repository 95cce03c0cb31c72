/* test_scale.c -- many distinct stages: analysis, table and check do work that grows with
 * the number of stages, not its square (every lookup by name goes through a hash index) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/check.h"
#include "analyze/strindex.h"
#include "analyze/table.h"
#include "common/util.h"
#include "traces/trace.h"

/* A run of n distinct stages, one sample in each. */
static char *trace_text(size_t n, const char *mode)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"%s\"}\n", mode);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"s%zu\",\"t\":%zu.0}\n", i, i);
		strbuf_addf(&sb, "{\"type\":\"sample\",\"t\":%zu.5,\"footprint\":%zu}\n", i, 100000000 + i);
		strbuf_addf(&sb, "{\"type\":\"event\",\"kind\":\"peak\",\"stage\":\"s%zu\",\"metric\":\"rss\","
				 "\"bytes\":%zu,\"t\":%zu.9}\n", i, 100000000 + i, i);
	}
	strbuf_addf(&sb, "{\"type\":\"end\",\"exit\":0,\"wall\":%zu}\n", n);
	return strbuf_detach(&sb);
}

/* Probes spent analysing, tabulating and checking 2 + 2 runs of n stages. */
static unsigned long long probes_for(size_t n)
{
	char *text = trace_text(n, "m");
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read_mem("m-1.trace.jsonl", text, strlen(text), &tr), 0);
	unsigned long long before = strindex_probes;
	struct table_run runs[2];
	memset(runs, 0, sizeof(runs));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(analysis_run(&tr, NULL, &runs[i].a), 0);
	struct table t = TABLE_INIT;
	cr_assert_eq(table_build(&t, runs, 2, NULL, 0), 0);
	cr_assert_eq(t.nstages, n + 1);
	struct check c = CHECK_INIT;
	cr_assert_eq(check_add_trace(&c, CHECK_BASELINE, "m-1", &tr, NULL), 0);
	cr_assert_eq(check_add_trace(&c, CHECK_BASELINE, "m-2", &tr, NULL), 0);
	cr_assert_eq(check_add_trace(&c, CHECK_CANDIDATE, "m-1", &tr, NULL), 0);
	cr_assert_eq(check_run(&c), 0);
	cr_assert_eq(check_regressions(&c), 0);
	unsigned long long probes = strindex_probes - before;
	check_release(&c);
	table_release(&t);
	for (int i = 0; i < 2; i++)
		analysis_release(&runs[i].a);
	trace_release(&tr);
	free(text);
	return probes;
}

Test(scale, lookups_by_stage_name_grow_linearly)
{
	unsigned long long small = probes_for(2000), big = probes_for(8000);
	cr_assert_gt(small, 2000, "the lookups go through the index (%llu probes)", small);
	/* four times the stages: about four times the probes (a square would be sixteen) */
	cr_assert_lt(big, 5 * small, "2000 stages: %llu probes, 8000: %llu", small, big);
}

/* One baseline run: every stage is "not judged", and the rows merge into one naming all
 * the stages, in order. */
Test(scale, many_not_judged_stages_merge_into_one_row)
{
	size_t n = 5000;
	char *text = trace_text(n, "m");
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read_mem("m-1.trace.jsonl", text, strlen(text), &tr), 0);
	struct check c = CHECK_INIT;
	cr_assert_eq(check_add_trace(&c, CHECK_BASELINE, "m-1", &tr, NULL), 0);
	cr_assert_eq(check_add_trace(&c, CHECK_CANDIDATE, "m-1", &tr, NULL), 0);
	cr_assert_eq(check_run(&c), 0);
	size_t rows = check_count(&c, CK_NOT_JUDGED);
	cr_assert_leq(rows, 3, "%zu not-judged rows", rows);
	bool found = false;
	for (size_t i = 0; i < c.nfindings; i++) {
		const char *st = c.findings[i].stage;
		if (c.findings[i].kind == CK_NOT_JUDGED && st && !strncmp(st, "s0, s1, s2, ", 12)) {
			found = true;
			cr_assert(strstr(st, ", s4998, s4999"), "%.60s...", st);
		}
	}
	cr_assert(found);
	check_release(&c);
	trace_release(&tr);
	free(text);
}
