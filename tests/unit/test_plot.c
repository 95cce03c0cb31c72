/* test_plot.c -- the gnuplot scripts: determinism, GB figures, stop markers, "not reached", gnuplot itself */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../plots/gp.h"
#include "../../plots/plot.h"
#include "../../traces/runs.h"
#include "../../traces/trace.h"
#include "testutil.h"

#define GiB "1073741824"

/* A stageload-style run: setup, encode, decode, ending with `end`. */
static const char completed_trace[] =
	"{\"type\":\"start\",\"interval\":0.5,\"mode\":\"staged\"}\n"
	"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB ",\"swap_used\":2147483648,\"level\":90}\n"
	"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"encode\",\"t\":1.0}\n"
	"{\"type\":\"sample\",\"t\":1.5,\"footprint\":3221225472,\"swap_used\":2147483648,\"level\":80}\n"
	"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"decode\",\"t\":2.0}\n"
	"{\"type\":\"sample\",\"t\":2.5,\"footprint\":2147483648,\"swap_used\":3221225472,\"level\":70}\n"
	"{\"type\":\"sample\",\"t\":3.0,\"footprint\":2147483648,\"swap_used\":3221225472,\"level\":70}\n"
	"{\"type\":\"end\"}\n";

/* A stageload run with no `end`: the guard killed it in encode. */
static const char stopped_trace[] =
	"{\"type\":\"start\",\"interval\":0.5,\"mode\":\"eager\"}\n"
	"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB "}\n"
	"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"encode\",\"t\":1.0}\n"
	"{\"type\":\"sample\",\"t\":1.5,\"footprint\":10737418240}\n";

static void read_mem(const char *name, const char *text, struct trace *tr)
{
	cr_assert_eq(trace_read_mem(name, text, strlen(text), tr), 0, "reading %s", name);
}

/* The model of n traces with options o (NULL: the defaults); free with model_free. */
static struct plot_model *model_with(const struct plot_opts *o, struct trace *trs,
				     const struct run_entry *const *entries, size_t n)
{
	struct plot_opts dflt = PLOT_OPTS_INIT;
	struct plot_model *m = xcalloc(1, sizeof(*m));
	cr_assert_eq(plot_model_build(o ? o : &dflt, trs, entries, n, m), 0);
	return m;
}

static struct plot_model *model_of(struct trace *trs, size_t n)
{
	return model_with(NULL, trs, NULL, n);
}

static void model_free(struct plot_model *m)
{
	plot_model_release(m);
	free(m);
}

static char *script_with(const struct plot_model *m, const struct plot_opts *o, const char *chart)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < plot_ncharts; i++)
		if (!strcmp(plot_charts[i].name, chart)) {
			char *path = xasprintf("/out/%s.svg", chart);
			plot_charts[i].script(&sb, m, o, path);
			free(path);
			return strbuf_detach(&sb);
		}
	cr_assert_fail("no chart named %s", chart);
	return NULL;
}

static char *memory_script(const struct plot_model *m, enum plot_format fmt)
{
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = fmt;
	return script_with(m, &o, "memory");
}

static char *stages_script(const struct plot_model *m, enum plot_format fmt)
{
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = fmt;
	return script_with(m, &o, "stages");
}

Test(plot, gb_is_two_to_the_thirty_bytes)
{
	cr_assert_float_eq(plot_gb(1ull << 30), 1.0, 1e-12);
	cr_assert_float_eq(plot_gb(3ull << 29), 1.5, 1e-12);
	cr_assert_float_eq(plot_gb(1000000000ull), 0.9313225746154785, 1e-12);
}

Test(plot, series_are_in_gb_and_swap_is_growth_since_start)
{
	struct trace tr = TRACE_INIT;
	read_mem("done", completed_trace, &tr);
	struct plot_model *m = model_of(&tr, 1);
	cr_assert_eq(m->runs[0].footprint.n, 4);
	cr_assert_float_eq(m->runs[0].footprint.gb[1], 3.0, 1e-12);
	cr_assert_eq(m->runs[0].swap.n, 4);
	cr_assert_float_eq(m->runs[0].swap.gb[0], 0.0, 1e-12);
	cr_assert_float_eq(m->runs[0].swap.gb[3], 1.0, 1e-12);
	cr_assert_eq(m->runs[0].gpu.n, 0, "no GPU field in the samples, no GPU line");
	/* the data are inline with fixed formatting: t with 3 decimals, GB with 4 */
	char *s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "$fp0 << EOD\n0.000 1.0000\n1.500 3.0000\n"), "script:\n%s", s);
	cr_assert(strstr(s, "$swap0 << EOD\n0.000 0.0000\n"), "script:\n%s", s);
	cr_assert_null(strstr(s, "$gpu0"));
	free(s);
	model_free(m);
	trace_release(&tr);
}

Test(plot, the_same_runs_give_the_same_script_bytes)
{
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT };
	read_mem("a", stopped_trace, &trs[0]);
	read_mem("b", completed_trace, &trs[1]);
	struct plot_model *m1 = model_of(trs, 2), *m2 = model_of(trs, 2);
	char *a = memory_script(m1, PLOT_SVG), *b = memory_script(m2, PLOT_SVG);
	cr_assert_str_eq(a, b);
	char *c = stages_script(m1, PLOT_SVG), *d = stages_script(m2, PLOT_SVG);
	cr_assert_str_eq(c, d);
	/* fixed size and font, no clock anywhere */
	cr_assert(strstr(a, "set terminal svg size 900,"), "%s", a);
	cr_assert(strstr(c, "set terminal svg size 900,500 fixed"), "%s", c);
	cr_assert(strstr(a, "font 'DejaVu Sans,10'"));
	cr_assert_null(strstr(a, "time("));
	cr_assert_null(strstr(a, "strftime"));
	free(a);
	free(b);
	free(c);
	free(d);
	model_free(m1);
	model_free(m2);
	trace_release(&trs[0]);
	trace_release(&trs[1]);
}

Test(plot, one_run_is_sized_for_a_readme_and_more_runs_are_taller)
{
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT };
	read_mem("a", completed_trace, &trs[0]);
	read_mem("b", completed_trace, &trs[1]);
	struct plot_model *m1 = model_of(trs, 1), *m = model_of(trs, 2);
	char *one = memory_script(m1, PLOT_SVG), *two = memory_script(m, PLOT_SVG);
	int w, h, w1, h1;
	const char *p = strstr(one, "svg size ");
	cr_assert_eq(sscanf(p, "svg size %d,%d", &w1, &h1), 2);
	cr_assert_eq(w1, 900);
	cr_assert(h1 >= 420 && h1 <= 520, "one panel is %d px high", h1);
	p = strstr(two, "svg size ");
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p, "svg size %d,%d", &w, &h), 2);
	cr_assert_eq(w, 900);
	cr_assert_gt(h, h1 + 100);
	free(one);
	free(two);
	model_free(m1);
	model_free(m);
	trace_release(&trs[0]);
	trace_release(&trs[1]);
}

Test(plot, gpu_memory_is_drawn_where_the_samples_have_it)
{
	static const char gpu_trace[] =
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"staged\","
		"\"host\":{\"memory\":8589934592}}\n"
		"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB ",\"gpu\":2147483648}\n"
		"{\"type\":\"sample\",\"t\":1.0,\"footprint\":" GiB ",\"gpu\":4294967296}\n"
		"{\"type\":\"end\",\"exit\":0}\n";
	struct trace tr = TRACE_INIT;
	read_mem("gpu", gpu_trace, &tr);
	struct plot_model *m = model_of(&tr, 1);
	cr_assert_eq(m->runs[0].gpu.n, 2);
	cr_assert_eq(m->runs[0].ram_bytes, 8ull << 30, "host.memory from the start record");
	char *s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "$gpu0 << EOD\n0.000 2.0000\n1.000 4.0000\nEOD\n"), "%s", s);
	cr_assert(strstr(s, "set label \"GPU memory\""), "in the legend: %s", s);
	cr_assert(strstr(s, "$gpu0 lc rgb"), "plotted: %s", s);
	cr_assert(strstr(s, "set label 'RAM 8.0 GB' "), "%s", s);
	free(s);
	model_free(m);
	trace_release(&tr);
}

Test(plot, the_probes_device_memory_is_drawn_with_a_legend_entry_of_its_own)
{
	static const char dev_trace[] =
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"staged\"}\n"
		"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB "}\n"
		"{\"type\":\"event\",\"kind\":\"gpu\",\"t\":0.1,\"stage\":\"setup\",\"device\":\"mps\","
		"\"metric\":\"mps_driver\",\"bytes\":1073741824}\n"
		"{\"type\":\"sample\",\"t\":0.5,\"devmem\":3221225472}\n"
		"{\"type\":\"sample\",\"t\":1.0,\"footprint\":" GiB "}\n"
		"{\"type\":\"end\",\"exit\":0}\n";
	struct trace tr = TRACE_INIT;
	read_mem("dev", dev_trace, &tr);
	struct plot_model *m = model_of(&tr, 1);
	cr_assert_eq(m->runs[0].dev.n, 1);
	cr_assert_eq(m->runs[0].footprint.n, 2, "device samples have no footprint");
	char *s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "$dev0 << EOD\n0.500 3.0000\nEOD\n"), "%s", s);
	cr_assert(strstr(s, "set label \"MPS driver memory (sampled)\""), "in the legend: %s", s);
	cr_assert(strstr(s, "$dev0 lc rgb '" COLOR_DEVICE "'"), "plotted: %s", s);
	cr_assert_null(strstr(s, "GPU memory"), "no NVML series: %s", s);
	free(s);
	model_free(m);
	trace_release(&tr);
}

Test(plot, a_stopped_run_is_marked_at_its_last_sample)
{
	struct trace tr = TRACE_INIT;
	read_mem("stopped", stopped_trace, &tr);
	struct plot_model *m = model_of(&tr, 1);
	cr_assert_eq(m->runs[0].outcome, PLOT_STOPPED);
	cr_assert_str_eq(m->runs[0].ended_in, "encode");
	char *s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "set label \"stopped by the guard\" at 1.500, 10.0000 right"), "%s", s);
	cr_assert(strstr(s, "set arrow from 1.500, graph 0 to 1.500, graph 1 nohead"), "%s", s);
	cr_assert(strstr(s, "set object circle at 1.500, 10.0000 "), "%s", s);
	/* stopped 0.5 s into encode, its first sample there: where encode begins */
	cr_assert(strstr(s, "set label \"eager, run 1: stopped by the guard where encode begins; "
			    "peak 10.0 GB\""), "the panel title says how and where it ended: %s", s);
	free(s);
	model_free(m);
	trace_release(&tr);
}

Test(plot, a_completed_run_has_no_stop_marker)
{
	struct trace tr = TRACE_INIT;
	read_mem("done", completed_trace, &tr);
	struct plot_model *m = model_of(&tr, 1);
	cr_assert_eq(m->runs[0].outcome, PLOT_COMPLETED);
	char *s = memory_script(m, PLOT_SVG);
	cr_assert_null(strstr(s, "stopped"), "%s", s);
	cr_assert_null(strstr(s, "ended early"), "%s", s);
	free(s);
	model_free(m);
	trace_release(&tr);
}

Test(plot, runs_json_exit_3_marks_a_run_with_an_end_record_as_stopped)
{
	struct trace tr = TRACE_INIT;
	read_mem("staged-1.trace.jsonl", completed_trace, &tr);
	struct run_entry e = { .mode = "staged", .run = 1, .has_exit = true, .exit = 3 };
	const struct run_entry *entries[1] = { &e };
	struct plot_model *m = model_with(NULL, &tr, entries, 1);
	cr_assert_eq(m->runs[0].outcome, PLOT_STOPPED);
	cr_assert_str_eq(m->runs[0].ended_in, "decode");
	model_free(m);
	trace_release(&tr);
}

Test(plot, stage_bands_are_shaded_alternately_and_labelled)
{
	struct trace tr = TRACE_INIT;
	read_mem("done", completed_trace, &tr);
	struct plot_model *m = model_of(&tr, 1);
	cr_assert_eq(m->runs[0].nbands, 3);
	cr_assert_str_eq(m->runs[0].bands[0].name, "setup");
	cr_assert_str_eq(m->runs[0].bands[1].name, "encode");
	cr_assert_float_eq(m->runs[0].bands[1].t0, 1.0, 1e-9);
	cr_assert_float_eq(m->runs[0].bands[1].t1, 2.0, 1e-9);
	cr_assert_float_eq(m->runs[0].bands[2].t1, 3.0, 1e-9);
	char *s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "set object rect from 0.000, graph 0 to 1.000, graph 1"), "%s", s);
	cr_assert_null(strstr(s, "set object rect from 1.000, graph 0"), "encode is not shaded");
	cr_assert(strstr(s, "set object rect from 2.000, graph 0 to 3.000, graph 1"), "%s", s);
	cr_assert(strstr(s, "set label \"setup\" at "), "%s", s);
	cr_assert(strstr(s, "set label \"encode\" at "), "%s", s);
	cr_assert(strstr(s, "set label \"decode\" at "), "%s", s);
	free(s);
	model_free(m);
	trace_release(&tr);
}

Test(plot, ram_line_only_when_known)
{
	struct trace tr = TRACE_INIT;
	read_mem("done", completed_trace, &tr);
	struct plot_model *m = model_of(&tr, 1);
	char *s = memory_script(m, PLOT_SVG);
	cr_assert_null(strstr(s, "RAM"), "stageload traces carry no host memory: %s", s);
	free(s);
	model_free(m);
	struct plot_opts o = PLOT_OPTS_INIT;
	o.ram_bytes = 8ull << 30;
	m = model_with(&o, &tr, NULL, 1);
	s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "set label 'RAM 8.0 GB'"), "%s", s);
	cr_assert(strstr(s, "first 8.0000 to graph 1, first 8.0000"), "%s", s);
	cr_assert(strstr(s, "set yrange [0.000:10.000]"), "RAM is on the scale: %s", s);
	free(s);
	model_free(m);
	/* more than 4x the data: named in the title, not drawn, so the data are not flattened */
	o.ram_bytes = 48ull << 30;
	m = model_with(&o, &tr, NULL, 1);
	s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "set label \"staged, run 1: completed; peak 3.0 GB; RAM 48.0 GB (off the scale)\""),
		  "%s", s);
	cr_assert_null(strstr(s, "first 48.0000"), "%s", s);
	cr_assert(strstr(s, "set yrange [0.000:4.000]"), "%s", s);
	free(s);
	model_free(m);
	trace_release(&tr);
}

Test(plot, stage_bars_show_peaks_stopped_and_not_reached)
{
	struct trace trs[3] = { TRACE_INIT, TRACE_INIT, TRACE_INIT };
	read_mem("eager", stopped_trace, &trs[0]);
	read_mem("staged1", completed_trace, &trs[1]);
	read_mem("staged2", completed_trace, &trs[2]);
	struct plot_model *m = model_of(trs, 3);
	char *s = stages_script(m, PLOT_SVG);
	/* eager stopped in encode at 10 GB, never reached decode */
	cr_assert(strstr(s, "set label \"10.0\\nstopped\""), "%s", s);
	cr_assert(strstr(s, "set label \"not\\nreached\""), "%s", s);
	/* staged peaks: setup 1 GB, encode 3 GB, decode 2 GB */
	cr_assert(strstr(s, "set label \"3.0\" "), "%s", s);
	cr_assert(strstr(s, "set label \"2.0\" "), "%s", s);
	/* stage order and one bar series per mode, titled by mode */
	cr_assert(strstr(s, "set xtics nomirror scale 0 (\"setup\" 0, \"encode\" 1, \"decode\" 2)"), "%s", s);
	cr_assert(strstr(s, "set label \"eager\" at screen"), "in the legend: %s", s);
	cr_assert(strstr(s, "set label \"staged\" at screen"), "in the legend: %s", s);
	cr_assert(strstr(s, "bar = the highest run"), "the title says what a bar is: %s", s);
	cr_assert_null(strstr(s, "not drawn"), "two identical staged runs: no range at all: %s", s);
	free(s);
	model_free(m);
	for (int i = 0; i < 3; i++)
		trace_release(&trs[i]);
}

Test(plot, whiskers_too_short_to_draw_are_named_in_the_explanation)
{
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT };
	read_mem("staged1", completed_trace, &trs[0]);
	/* the same run with encode's peak 20 MB higher: a range, too short to draw */
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, completed_trace);
	char *at = strstr(t.buf, "3221225472");
	cr_assert_not_null(at);
	memcpy(at, "3242196992", 10);
	read_mem("staged2", t.buf, &trs[1]);
	struct plot_model *m = model_of(trs, 2);
	char *s = stages_script(m, PLOT_SVG);
	cr_assert(strstr(s, "whiskers = range across runs (under 50 MB: not drawn)"), "%s", s);
	cr_assert_null(strstr(s, "with vectors"), "no whisker drawn: %s", s);
	free(s);
	model_free(m);
	for (int i = 0; i < 2; i++)
		trace_release(&trs[i]);
	strbuf_release(&t);
}

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* 20,000 stages of 10 ms and one long one: a few hundred bands are drawn,
 * the long stage keeps its own band and its name. */
Test(plot, many_stages_draw_a_bounded_number_of_bands)
{
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, "{\"type\":\"start\",\"mode\":\"eager\"}\n");
	for (int i = 0; i < 20000; i++) {
		strbuf_addf(&t, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"s%d\",\"t\":%.3f}\n",
			    i % 7, i * 0.01);
		strbuf_addf(&t, "{\"type\":\"sample\",\"t\":%.3f,\"footprint\":1073741824}\n", i * 0.01);
	}
	strbuf_addstr(&t, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"export\",\"t\":200.0}\n"
			  "{\"type\":\"sample\",\"t\":300.0,\"footprint\":1073741824}\n"
			  "{\"type\":\"end\"}\n");
	struct trace tr = TRACE_INIT;
	read_mem("stages", t.buf, &tr);
	struct plot_model *m = model_of(&tr, 1);
	char *s = memory_script(m, PLOT_SVG);
	size_t rects = count_of(s, "set object rect from"), arrows = count_of(s, "set arrow from");
	cr_assert_leq(rects, 300, "%zu band rectangles", rects);
	cr_assert_leq(arrows, 300, "%zu band edges", arrows);
	cr_assert(strstr(s, "set label \"export\""), "the long last stage keeps its name");
	free(s);
	model_free(m);
	trace_release(&tr);
	strbuf_release(&t);
}

Test(plot, long_series_keep_their_peak_and_stay_small)
{
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, "{\"type\":\"start\",\"mode\":\"eager\"}\n");
	for (int i = 0; i < 20000; i++)
		strbuf_addf(&t, "{\"type\":\"sample\",\"t\":%.3f,\"footprint\":%llu}\n", i * 0.01,
			    i == 12345 ? 7ull << 30 : 1ull << 30);
	strbuf_addstr(&t, "{\"type\":\"end\"}\n");
	struct trace tr = TRACE_INIT;
	read_mem("long", t.buf, &tr);
	struct plot_model *m = model_of(&tr, 1);
	char *s = memory_script(m, PLOT_SVG);
	const char *blk = strstr(s, "$fp0 << EOD\n");
	cr_assert_not_null(blk);
	blk = strchr(blk, '\n') + 1;
	const char *end = strstr(blk, "EOD\n");
	cr_assert_not_null(end);
	size_t lines = 0;
	for (const char *p = blk; p < end; p++)
		lines += *p == '\n';
	cr_assert_leq(lines, 1600);
	cr_assert_geq(lines, 800);
	cr_assert(strstr(blk, "123.450 7.0000\n"), "the spike survives the reduction");
	free(s);
	model_free(m);
	trace_release(&tr);
	strbuf_release(&t);
}

Test(plot, paths_and_labels_are_quoted_for_gnuplot)
{
	static const char quoted[] =
		"{\"type\":\"start\",\"mode\":\"it's\"}\n"
		"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB "}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"a'b\",\"t\":1.0}\n"
		"{\"type\":\"sample\",\"t\":2.0,\"footprint\":" GiB "}\n"
		"{\"type\":\"end\"}\n";
	struct trace tr = TRACE_INIT;
	read_mem("q", quoted, &tr);
	struct plot_model *m = model_of(&tr, 1);
	struct strbuf sb = STRBUF_INIT;
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = PLOT_SVG;
	plot_memory_script(&sb, m, &o, "/tmp/o'k/memory.svg");
	cr_assert(strstr(sb.buf, "set output \"/tmp/o'k/memory.svg\""), "%s", sb.buf);
	cr_assert(strstr(sb.buf, "set label \"a'b\" at"), "%s", sb.buf);
	strbuf_release(&sb);
	model_free(m);
	trace_release(&tr);
}

Test(plot, png_prefers_pngcairo_and_falls_back_to_png)
{
	struct strbuf sb = STRBUF_INIT;
	plot_terminal(&sb, PLOT_PNG, 900, 500);
	cr_assert(strstr(sb.buf, "strstrt(GPVAL_TERMINALS, 'pngcairo')"), "%s", sb.buf);
	cr_assert(strstr(sb.buf, "set terminal pngcairo size 900,500"), "%s", sb.buf);
	cr_assert(strstr(sb.buf, "set terminal png size 900,500"), "%s", sb.buf);
	strbuf_release(&sb);
}

Test(plot, a_trace_without_samples_is_refused)
{
	static const char empty[] = "{\"type\":\"start\",\"mode\":\"eager\"}\n{\"type\":\"end\"}\n";
	struct trace tr = TRACE_INIT;
	read_mem("empty", empty, &tr);
	struct plot_opts o = PLOT_OPTS_INIT;
	struct plot_model m;
	memset(&m, 0xff, sizeof(m)); /* must be reset */
	cr_assert_eq(plot_model_build(&o, &tr, NULL, 1, &m), -1);
	cr_assert_null(m.runs);
	cr_assert_eq(m.nruns, 0);
	plot_model_release(&m);
	trace_release(&tr);
}

Test(plot, missing_gnuplot_is_reported, .timeout = 10)
{
	cr_assert_eq(plot_have_gnuplot("/nonexistent/gnuplot"), false);
	cr_assert_eq(plot_run_gnuplot("/nonexistent/gnuplot", "", 0), -1);
	char *old = xstrdup(getenv("PATH"));
	setenv("PATH", "/nonexistent-dir", 1);
	cr_assert_eq(plot_have_gnuplot(NULL), false);
	cr_assert_eq(plot_run_gnuplot(NULL, "quit\n", 5), -1);
	setenv("PATH", old, 1);
	free(old);
}

Test(plot, gnuplot_errors_fail_the_call, .timeout = 30)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	cr_assert_eq(plot_run_gnuplot(NULL, "print 1+1\n", 10), 0);
	static const char bad[] = "set frobnicate 3\n";
	cr_assert_eq(plot_run_gnuplot(NULL, bad, sizeof(bad) - 1), -1);
}

/* Two gnuplots at once: the first reads a FIFO the second writes, which
 * only works when both run at the same time (one after the other, the first
 * reads nothing once its `timeout` ends). */
Test(plot, gnuplots_run_at_the_same_time, .timeout = 60)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	char dir[] = "/tmp/sb-test-plot-gnuplots-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *fifo = xasprintf("%s/fifo", dir), *got = xasprintf("%s/got", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	char *a = xasprintf("r = system(\"timeout 20 cat '%s'\")\nset print '%s'\nprint r\n", fifo, got);
	char *b = xasprintf("r = system(\"timeout 20 sh -c 'echo hi >%s'\")\n", fifo);
	const char *scripts[] = { a, b };
	size_t lens[] = { strlen(a), strlen(b) };
	int rcs[2] = { 7, 7 };
	cr_assert_eq(plot_run_gnuplots(NULL, scripts, lens, 2, rcs), 0);
	cr_assert_eq(rcs[0], 0);
	cr_assert_eq(rcs[1], 0);
	FILE *f = fopen(got, "r");
	cr_assert_not_null(f);
	char line[16] = "";
	cr_assert_not_null(fgets(line, sizeof(line), f));
	fclose(f);
	cr_assert_str_eq(line, "hi\n");
	/* the first failure is the one said; the script after it counts as failed */
	static const char bad[] = "set frobnicate 3\n", good[] = "print 1+1\n";
	const char *s2[] = { bad, good };
	size_t l2[] = { sizeof(bad) - 1, sizeof(good) - 1 };
	cr_assert_eq(plot_run_gnuplots(NULL, s2, l2, 2, rcs), -1);
	cr_assert_eq(rcs[0], -1);
	cr_assert_eq(rcs[1], -1);
	unlink(got);
	unlink(fifo);
	rmdir(dir);
	free(a);
	free(b);
	free(fifo);
	free(got);
}

Test(plot, plot_runs_writes_both_svgs_the_same_each_time, .timeout = 60)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT };
	read_mem("eager", stopped_trace, &trs[0]);
	read_mem("staged", completed_trace, &trs[1]);
	char dir[] = "/tmp/test_plot.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = PLOT_SVG;
	o.quiet_paths = true;
	char *sub[2] = { xasprintf("%s/a", dir), xasprintf("%s/b/c", dir) };
	char *bytes[2][2];
	for (int k = 0; k < 2; k++) {
		o.out_dir = sub[k];
		cr_assert_eq(plot_runs(&o, trs, NULL, 2), 0);
		for (int f = 0; f < 2; f++) {
			char *p = xasprintf("%s/%s.svg", sub[k], f ? "stages" : "memory");
			size_t len;
			cr_assert_eq(read_file(p, &bytes[k][f], &len), 0, "%s", p);
			cr_assert_gt(len, 2000, "%s is %zu bytes", p, len);
			cr_assert(strstr(bytes[k][f], "<svg"));
			unlink(p);
			free(p);
		}
	}
	cr_assert_str_eq(bytes[0][0], bytes[1][0], "memory.svg differs between two runs");
	cr_assert_str_eq(bytes[0][1], bytes[1][1], "stages.svg differs between two runs");
	cr_assert(strstr(bytes[0][0], "stopped by the guard"));
	cr_assert(strstr(bytes[0][1], "reached"));
	for (int k = 0; k < 2; k++) {
		free(bytes[k][0]);
		free(bytes[k][1]);
	}
	char *bdir = xasprintf("%s/b", dir);
	rmdir(sub[0]);
	rmdir(sub[1]);
	rmdir(bdir);
	rmdir(dir);
	free(bdir);
	free(sub[0]);
	free(sub[1]);
	trace_release(&trs[0]);
	trace_release(&trs[1]);
}

/* plot_runs into `dir` (created, then removed with what it holds); each
 * chart's SVG text into svg[] (freed by the caller). Returns plot_runs()'s result. */
static int draw_svgs(const struct plot_opts *base, struct trace *trs, size_t n, const char *dir,
		     char *svg[2])
{
	struct plot_opts o = *base;
	o.format = PLOT_SVG;
	o.quiet_paths = true;
	o.out_dir = dir;
	int rc = plot_runs(&o, trs, NULL, n);
	for (size_t f = 0; f < 2; f++) {
		char *p = xasprintf("%s/%s.svg", dir, plot_charts[f].name);
		size_t len;
		svg[f] = NULL;
		if (!rc)
			cr_assert_eq(read_file(p, &svg[f], &len), 0, "%s", p);
		unlink(p);
		free(p);
	}
	rmdir(dir);
	return rc;
}

static char *scratch_dir(void)
{
	char tmpl[] = "/tmp/test_plot.XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	return xstrdup(tmpl);
}

Test(plot, a_run_under_a_megabyte_still_draws, .timeout = 60)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	static const char tiny[] =
		"{\"type\":\"start\",\"mode\":\"eager\"}\n"
		"{\"type\":\"sample\",\"t\":0.0,\"footprint\":102400}\n"
		"{\"type\":\"sample\",\"t\":0.5,\"footprint\":204800}\n"
		"{\"type\":\"end\"}\n";
	struct trace tr = TRACE_INIT;
	read_mem("tiny", tiny, &tr);
	struct plot_model *m = model_of(&tr, 1);
	char *s = memory_script(m, PLOT_SVG);
	double lo, hi;
	const char *y = strstr(s, "set yrange [");
	cr_assert_not_null(y, "%s", s);
	cr_assert_eq(sscanf(y, "set yrange [%lf:%lf]", &lo, &hi), 2, "%s", y);
	cr_assert_gt(hi, 204800.0 / (1 << 30), "the range holds the peak: %s", y);
	free(s);
	s = stages_script(m, PLOT_SVG);
	y = strstr(s, "set yrange [");
	cr_assert_eq(sscanf(y, "set yrange [%lf:%lf]", &lo, &hi), 2, "%s", y);
	cr_assert_gt(hi, 204800.0 / (1 << 30), "the range holds the peak: %s", y);
	free(s);
	model_free(m);

	struct plot_opts o = PLOT_OPTS_INIT;
	char *dir = scratch_dir(), *svg[2];
	cr_assert_eq(draw_svgs(&o, &tr, 1, dir, svg), 0, "gnuplot draws a 200 KiB run");
	free(svg[0]);
	free(svg[1]);
	free(dir);
	trace_release(&tr);
}

Test(plot, names_starting_with_a_quote_or_holding_backquotes_draw_as_they_are, .timeout = 60)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	/* gnuplot cannot parse '''x' and runs `...` in double quotes as a command */
	static const char names[] =
		"{\"type\":\"start\",\"mode\":\"'quoted\"}\n"
		"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB "}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"'enc\\\"ode\",\"t\":1.0}\n"
		"{\"type\":\"sample\",\"t\":1.5,\"footprint\":" GiB "}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"`echo INJECTED`\\\\n\",\"t\":2.0}\n"
		"{\"type\":\"sample\",\"t\":2.5,\"footprint\":" GiB "}\n"
		"{\"type\":\"end\"}\n";
	struct trace tr = TRACE_INIT;
	read_mem("names", names, &tr);
	struct plot_opts o = PLOT_OPTS_INIT;
	char *dir = scratch_dir(), *svg[2];
	cr_assert_eq(draw_svgs(&o, &tr, 1, dir, svg), 0);
	for (int f = 0; f < 2; f++) {
		cr_assert(strstr(svg[f], "&#39;quoted") || strstr(svg[f], "'quoted"), "%s", svg[f]);
		cr_assert(strstr(svg[f], "`echo INJECTED`\\n"), "the name as it is: %s", svg[f]);
		cr_assert_null(strstr(svg[f], ">INJECTED"), "nothing was run: %s", svg[f]);
	}
	cr_assert(strstr(svg[0], "&#39;enc&quot;ode") || strstr(svg[0], "'enc\"ode") ||
		  strstr(svg[0], "'enc&quot;ode"), "%s", svg[0]);
	free(svg[0]);
	free(svg[1]);
	free(dir);
	trace_release(&tr);
}

Test(plot, an_output_directory_with_a_newline_is_written_where_named, .timeout = 60)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	struct trace tr = TRACE_INIT;
	read_mem("done", completed_trace, &tr);
	char *top = scratch_dir();
	char *dir = xasprintf("%s/new\nline 'q\"", top);
	struct plot_opts o = PLOT_OPTS_INIT;
	char *svg[2];
	cr_assert_eq(draw_svgs(&o, &tr, 1, dir, svg), 0);
	cr_assert(strstr(svg[0], "<svg") && strstr(svg[1], "<svg"));
	free(svg[0]);
	free(svg[1]);
	cr_assert_eq(rmdir(top), 0, "nothing was written beside the named directory");
	free(dir);
	free(top);
	trace_release(&tr);
}

Test(plot, huge_times_are_written_as_short_numbers)
{
	static const char huge[] =
		"{\"type\":\"start\",\"mode\":\"eager\"}\n"
		"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB "}\n"
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"late\",\"t\":1e299}\n"
		"{\"type\":\"sample\",\"t\":1e300,\"footprint\":" GiB "}\n"
		"{\"type\":\"end\"}\n";
	struct trace tr = TRACE_INIT;
	read_mem("huge", huge, &tr);
	struct plot_model *m = model_of(&tr, 1);
	char *s = memory_script(m, PLOT_SVG);
	size_t run = 0;
	for (const char *p = s; *p; p++) {
		run = (*p >= '0' && *p <= '9') ? run + 1 : 0;
		cr_assert_lt(run, 24, "a number of %zu digits in:\n%.2000s", run, s);
	}
	cr_assert(strstr(s, "1.000e+300"), "%s", s);
	free(s);
	model_free(m);
	trace_release(&tr);
}

/* ---- issue: the published charts (supplement, RAM, endings, labels, title) ---- */

/* eager's full attempt of the day before: setup, encode, decode, stopped in decode */
static const char full_eager_trace[] =
	"{\"type\":\"start\",\"interval\":0.5,\"mode\":\"eager\"}\n"
	"{\"type\":\"sample\",\"t\":0.0,\"footprint\":" GiB "}\n"
	"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"encode\",\"t\":1.0}\n"
	"{\"type\":\"sample\",\"t\":1.5,\"footprint\":8589934592}\n"
	"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"decode\",\"t\":2.0}\n"
	"{\"type\":\"sample\",\"t\":2.5,\"footprint\":12884901888}\n"
	"{\"type\":\"sample\",\"t\":5.0,\"footprint\":12884901888}\n";

Test(plot, a_supplement_fills_stages_as_hatched_bars_named_in_the_legend)
{
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT }, sup = TRACE_INIT;
	read_mem("eager", stopped_trace, &trs[0]);
	read_mem("staged", completed_trace, &trs[1]);
	read_mem("runs/day-before/eager-1.trace.jsonl", full_eager_trace, &sup);
	struct plot_opts o = PLOT_OPTS_INIT;
	o.supplements = &sup;
	o.nsupplements = 1;
	struct plot_model *m = model_with(&o, trs, NULL, 2);
	cr_assert_eq(m->nruns, 2, "a supplement gets no panel");
	char *s = script_with(m, &o, "stages");
	/* eager's decode (12 GB) comes from the supplement, drawn hatched */
	cr_assert(strstr(s, "$sup0 << EOD\n1.8000 12.0000 "), "%s", s);
	cr_assert(strstr(s, "$sup0 using 1:2:3 with boxes lc rgb '#1f77b4' fs transparent pattern 4"),
		  "%s", s);
	cr_assert_null(strstr(s, "$sup1 using"), "staged has no supplement bar: %s", s);
	/* its own legend entry: a hatched sample and where the run came from */
	cr_assert(strstr(s, "fs transparent pattern 4 border lc rgb '#1f77b4' front\nset label "
			    "\"eager, supplement: day-before/eager-1.trace.jsonl (stopped by the guard)\" "
			    "at screen"), "%s", s);
	/* main runs keep their cells: encode is the main run's 10 GB, solid */
	cr_assert(strstr(s, "$bars0 << EOD\n-0.2000 1.0000 0.3600 NaN NaN\n0.8000 10.0000 "), "%s", s);
	free(s);
	s = script_with(m, &o, "memory");
	cr_assert_null(strstr(s, "day-before"), "the memory chart draws main runs only: %s", s);
	free(s);
	model_free(m);
	trace_release(&trs[0]);
	trace_release(&trs[1]);
	trace_release(&sup);
}

Test(plot, the_ram_line_is_dashed_and_labelled_in_both_charts)
{
	struct trace tr = TRACE_INIT;
	read_mem("done", completed_trace, &tr);
	struct plot_opts o = PLOT_OPTS_INIT;
	o.ram_bytes = 8ull << 30;
	struct plot_model *m = model_with(&o, &tr, NULL, 1);
	for (size_t i = 0; i < plot_ncharts; i++) {
		char *s = script_with(m, &o, plot_charts[i].name);
		cr_assert(strstr(s, "first 8.0000 to graph 1, first 8.0000 nohead lc rgb '#555555' dt 2"),
			  "%s: %s", plot_charts[i].name, s);
		cr_assert(strstr(s, "set label 'RAM 8.0 GB' at graph 0.005, first 8.0000"), "%s", s);
		free(s);
	}
	model_free(m);
	trace_release(&tr);
}

/* A run of one stage whose footprint peaks at `gb`. */
static void peak_trace(double gb, struct strbuf *t)
{
	strbuf_addstr(t, "{\"type\":\"start\",\"mode\":\"eager\"}\n");
	strbuf_addf(t, "{\"type\":\"sample\",\"t\":0.0,\"footprint\":%llu}\n", 1ull << 30);
	strbuf_addf(t, "{\"type\":\"sample\",\"t\":1.0,\"footprint\":%llu}\n",
		    (unsigned long long)(gb * (1 << 30)));
	strbuf_addstr(t, "{\"type\":\"end\"}\n");
}

static double yrange_top(const char *s)
{
	double lo, hi;
	const char *y = strstr(s, "set yrange [");
	cr_assert_not_null(y, "%s", s);
	cr_assert_eq(sscanf(y, "set yrange [%lf:%lf]", &lo, &hi), 2, "%s", y);
	return hi;
}

Test(plot, the_y_range_fits_the_data_and_the_ram_line_with_a_small_margin)
{
	struct strbuf t = STRBUF_INIT;
	peak_trace(70, &t);
	struct trace tr = TRACE_INIT;
	read_mem("seventy", t.buf, &tr);
	struct plot_opts o = PLOT_OPTS_INIT;
	struct plot_model *m = model_with(&o, &tr, NULL, 1);
	for (size_t i = 0; i < plot_ncharts; i++) {
		char *s = script_with(m, &o, plot_charts[i].name);
		double top = yrange_top(s);
		cr_assert(top >= 72 && top <= 80, "%s: a 70 GB peak under %g GB", plot_charts[i].name, top);
		free(s);
	}
	model_free(m);
	trace_release(&tr);
	strbuf_reset(&t);
	/* the published Qwen-Image eager run: 43.6 GB on a 48 GB machine */
	peak_trace(43.6, &t);
	read_mem("qwen", t.buf, &tr);
	o.ram_bytes = 48ull << 30;
	m = model_with(&o, &tr, NULL, 1);
	for (size_t i = 0; i < plot_ncharts; i++) {
		char *s = script_with(m, &o, plot_charts[i].name);
		cr_assert_float_eq(yrange_top(s), 50.0, 1e-9, "%s: %s", plot_charts[i].name, s);
		free(s);
	}
	model_free(m);
	trace_release(&tr);
	strbuf_release(&t);
}

/* A run through `nstages` stages of `secs` seconds each, interval 0.5 s;
 * `stop_after` > 0: no end record (the guard stopped it) that many seconds
 * into the last stage. */
static void staged_run(struct strbuf *t, const char *mode, const char *const *stages,
		       const double *secs, size_t nstages, double stop_after)
{
	strbuf_addf(t, "{\"type\":\"start\",\"interval\":0.5,\"mode\":\"%s\"}\n", mode);
	double at = 0;
	for (size_t i = 0; i < nstages; i++) {
		strbuf_addf(t, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"%s\",\"t\":%.3f}\n",
			    stages[i], at);
		double len = stop_after > 0 && i + 1 == nstages ? stop_after : secs[i];
		for (double s = 0; s < len; s += 0.05)
			strbuf_addf(t, "{\"type\":\"sample\",\"t\":%.3f,\"footprint\":%llu}\n", at + s,
				    (unsigned long long)(i + 1) << 28);
		at += len;
	}
	if (stop_after <= 0)
		strbuf_addstr(t, "{\"type\":\"end\"}\n");
}

Test(plot, each_panel_title_says_how_its_run_ended)
{
	static const char *const st[] = { "setup", "shape", "texture" };
	static const double secs[] = { 4, 6, 5 };
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT;
	staged_run(&a, "staged", st, secs, 3, 0);
	staged_run(&b, "eager", st, secs, 3, 3.0);  /* stopped 3 s into texture */
	staged_run(&c, "eager", st, secs, 3, 0.3);  /* stopped as texture began */
	struct trace trs[3] = { TRACE_INIT, TRACE_INIT, TRACE_INIT };
	read_mem("staged-1.trace.jsonl", a.buf, &trs[0]);
	read_mem("eager-1.trace.jsonl", b.buf, &trs[1]);
	read_mem("eager-2.trace.jsonl", c.buf, &trs[2]);
	struct plot_model *m = model_of(trs, 3);
	char *s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "\"staged, run 1: completed; peak 768 MB\""), "%s", s);
	free(s);
	model_free(m);
	trace_release(&trs[0]);
	/* a run asked to stop after shape (stageload's start.stop_at) */
	char *asked = xstrdup(a.buf);
	char *at = strstr(asked, "\"mode\"");
	cr_assert_not_null(at);
	struct strbuf d = STRBUF_INIT;
	strbuf_add(&d, asked, (size_t)(at - asked));
	strbuf_addf(&d, "\"stop_at\":\"shape\",%s", at);
	free(asked);
	trs[0] = (struct trace)TRACE_INIT;
	read_mem("staged-1.trace.jsonl", d.buf, &trs[0]);
	strbuf_release(&d);
	m = model_of(trs, 3);
	s = memory_script(m, PLOT_SVG);
	cr_assert(strstr(s, "\"staged, run 1: stopped at shape as asked; peak 768 MB\""), "%s", s);
	cr_assert(strstr(s, "\"eager, run 1: stopped by the guard in texture; peak 768 MB\""), "%s", s);
	cr_assert(strstr(s, "\"eager, run 2: stopped by the guard where texture begins; peak 768 MB\""),
		  "%s", s);
	free(s);
	model_free(m);
	for (int i = 0; i < 3; i++)
		trace_release(&trs[i]);
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&c);
}

/* The demo's stages, as long as they took in its published run (s). */
static const char *const demo_stages[] = { "setup", "preprocess", "camera", "structure",
					   "shape_512", "shape_1024", "texture", "decode", "export" };
static const double demo_secs[] = { 4.1, 0.9, 0.05, 0.35, 0.6, 0.55, 0.5, 0.2, 0.35 };

Test(plot, not_reached_is_two_lines_even_when_the_notes_are_rotated)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	staged_run(&a, "staged", demo_stages, demo_secs, 9, 0);
	staged_run(&b, "eager", demo_stages, demo_secs, 4, 0.2); /* stopped in structure */
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT };
	read_mem("eager", b.buf, &trs[0]);
	read_mem("staged", a.buf, &trs[1]);
	struct plot_model *m = model_of(trs, 2);
	char *s = stages_script(m, PLOT_SVG);
	cr_assert(strstr(s, "rotate by 90"), "nine stages, two modes: notes are rotated: %s", s);
	cr_assert(strstr(s, "set label \"not\\nreached\""), "%s", s);
	cr_assert_null(strstr(s, "not, reached"), "%s", s);
	free(s);
	model_free(m);
	trace_release(&trs[0]);
	trace_release(&trs[1]);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* Stage names in the memory chart: "set label "NAME" at first X, screen Y center". */
struct placed {
	char name[64];
	double lo, hi, y;
};

static size_t stage_labels(const char *s, double xmax, struct placed *out, size_t max)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, "set label \"")) != NULL; p++) {
		char name[64];
		double at, y;
		if (sscanf(p, "set label \"%63[^\"]\" at first %lf, screen %lf center", name, &at, &y) != 3)
			continue;
		cr_assert_lt(n, max);
		double c = 70 + at / xmax * 810, w = (double)strlen(name) * 6.6 + 6;
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		out[n].lo = c - w / 2;
		out[n].hi = c + w / 2;
		out[n].y = y;
		n++;
	}
	return n;
}

Test(plot, stage_names_never_overlap_and_the_last_stage_is_always_named)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	staged_run(&a, "eager", demo_stages, demo_secs, 9, 0);
	staged_run(&b, "staged", demo_stages, demo_secs, 9, 0.05); /* stopped as export began */
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT };
	read_mem("eager", a.buf, &trs[0]);
	read_mem("staged", b.buf, &trs[1]);
	struct plot_model *m = model_of(trs, 2);
	char *s = memory_script(m, PLOT_SVG);
	double xmax = 0;
	cr_assert_eq(sscanf(strstr(s, "set xrange [0:"), "set xrange [0:%lf]", &xmax), 1);
	/* per panel: the labels between one "# panel" line and the next */
	for (const char *p = strstr(s, "# panel 1"); p; p = strstr(p + 1, "# panel ")) {
		const char *next = strstr(p + 1, "# panel ");
		char *part = next ? xstrndup(p, (size_t)(next - p)) : xstrdup(p);
		struct placed l[16];
		size_t n = stage_labels(part, xmax, l, 16);
		cr_assert_geq(n, 5, "most stages are named: %s", part);
		bool last = false;
		for (size_t i = 0; i < n; i++) {
			last |= !strcmp(l[i].name, "export");
			for (size_t j = 0; j < i; j++)
				cr_assert(fabs(l[i].y - l[j].y) > 1e-6 || l[i].hi <= l[j].lo ||
					  l[j].hi <= l[i].lo, "'%s' [%.0f, %.0f] overlaps '%s' [%.0f, %.0f]",
					  l[i].name, l[i].lo, l[i].hi, l[j].name, l[j].lo, l[j].hi);
		}
		cr_assert(last, "export, where the run ended, is named: %s", part);
		free(part);
	}
	free(s);
	model_free(m);
	trace_release(&trs[0]);
	trace_release(&trs[1]);
	strbuf_release(&a);
	strbuf_release(&b);
}

Test(plot, title_and_note_go_on_every_chart)
{
	struct trace tr = TRACE_INIT;
	read_mem("done", completed_trace, &tr);
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = PLOT_SVG;
	struct plot_model *m = model_with(&o, &tr, NULL, 1);
	int h0[2];
	for (size_t i = 0; i < plot_ncharts && i < 2; i++) {
		char *s = script_with(m, &o, plot_charts[i].name);
		cr_assert_eq(sscanf(strstr(s, "svg size "), "svg size 900,%d", &h0[i]), 1);
		free(s);
	}
	o.title = "Qwen-Image-2.1: \"eager\" against staged";
	o.note = "stageload traces, 2026-10-06";
	for (size_t i = 0; i < plot_ncharts && i < 2; i++) {
		char *s = script_with(m, &o, plot_charts[i].name);
		cr_assert(strstr(s, "set label \"Qwen-Image-2.1: \\\"eager\\\" against staged\" at screen 0.5, "),
			  "%s", s);
		cr_assert(strstr(s, "font 'DejaVu Sans,13'"), "%s", s);
		cr_assert(strstr(s, "set label \"stageload traces, 2026-10-06\" at screen"), "%s", s);
		int h;
		cr_assert_eq(sscanf(strstr(s, "svg size "), "svg size 900,%d", &h), 1);
		cr_assert_eq(h, h0[i] + 50, "%s: room for both, %d px before, %d after",
			     plot_charts[i].name, h0[i], h);
		free(s);
	}
	model_free(m);
	trace_release(&tr);
}

/* Two stages; swap_used rises by `rise` (bytes) during "work". */
static void swap_run(struct strbuf *t, const char *mode, uint64_t footprint, uint64_t rise)
{
	strbuf_addf(t, "{\"type\":\"start\",\"interval\":0.5,\"mode\":\"%s\"}\n", mode);
	strbuf_addf(t, "{\"type\":\"sample\",\"t\":0.0,\"footprint\":%llu,\"swap_used\":%llu}\n",
		    1ull << 30, 4ull << 30);
	strbuf_addstr(t, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"work\",\"t\":1.0}\n");
	strbuf_addf(t, "{\"type\":\"sample\",\"t\":1.5,\"footprint\":%llu,\"swap_used\":%llu}\n",
		    (unsigned long long)footprint, 4ull << 30);
	strbuf_addf(t, "{\"type\":\"sample\",\"t\":3.0,\"footprint\":%llu,\"swap_used\":%llu}\n",
		    (unsigned long long)footprint, (unsigned long long)((4ull << 30) + rise));
	strbuf_addstr(t, "{\"type\":\"end\"}\n");
}

Test(plot, stages_where_swap_rose_are_marked)
{
	/* offload: lower footprint in work, but swap rose 2 GB; eager: 100 MB only */
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	swap_run(&a, "eager", 12ull << 30, 100ull << 20);
	swap_run(&b, "offload", 5ull << 30, 2ull << 30);
	struct trace trs[2] = { TRACE_INIT, TRACE_INIT };
	read_mem("eager", a.buf, &trs[0]);
	read_mem("offload", b.buf, &trs[1]);
	struct plot_model *m = model_of(trs, 2);
	char *s = stages_script(m, PLOT_SVG);
	/* one outlined bar: offload's work (stage 1, second of two modes) */
	cr_assert(strstr(s, "$swap << EOD\n1.1358 5.0000 0.2444\nEOD\n"), "%s", s);
	cr_assert(strstr(s, "$swap using 1:2:3 with boxes lc rgb '#d62728' lw 2 fs empty"), "%s", s);
	cr_assert(strstr(s, "set label \"5.0\\nswap +2.0 GB\""), "the note says how much: %s", s);
	cr_assert(strstr(s, "\"system swap rose in the stage (by 256 MB or more)\""), "legend: %s", s);
	cr_assert(strstr(s, "set label \"12.0\" "), "eager's 100 MB is under the floor: %s", s);
	free(s);
	model_free(m);
	trace_release(&trs[1]);
	/* no rise beyond the floor anywhere: no mark, no legend entry */
	read_mem("eager2", a.buf, &trs[1]);
	m = model_of(trs, 2);
	s = stages_script(m, PLOT_SVG);
	cr_assert_null(strstr(s, "swap"), "%s", s);
	free(s);
	model_free(m);
	trace_release(&trs[0]);
	trace_release(&trs[1]);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* ---- the history chart ---------------------------------------------------- */

static const char *const hist_commits[] = { "a1b2c3d", "b2c3d4e", "c3d4e5f", "d4e5f6a", "e5f6a7b" };
static const bool hist_dirty[] = { false, false, true, false, false };

/* eager and staged, stages encode and decode; staged decode regresses at the
 * fourth commit; eager never reached decode at the second. */
static void history_of(struct plot_history *h, struct plot_history_series *ser,
		       struct plot_history_point pts[4][5])
{
	static const char *const modes[] = { "eager", "staged" }, *const stages[] = { "encode", "decode" };
	for (int i = 0; i < 4; i++) {
		ser[i].mode = modes[i / 2];
		ser[i].stage = stages[i % 2];
		ser[i].points = pts[i];
		for (int c = 0; c < 5; c++) {
			double v = (i / 2 ? 10 : 30) + (i % 2) * 5 + c * 0.1;
			pts[i][c] = (struct plot_history_point){ true, v, v - 0.5, v, false, false };
		}
	}
	pts[1][1].has_value = false;
	pts[3][3].value = pts[3][3].hi = 19;
	pts[3][3].regression = true;
	*h = (struct plot_history){ "peak footprint", "GB", hist_commits, NULL, hist_dirty, 5, ser, 4 };
}

Test(plot, history_draws_a_line_per_stage_a_panel_per_mode_and_marks_regressions_and_dirty)
{
	struct plot_history h;
	struct plot_history_series ser[4];
	struct plot_history_point pts[4][5];
	history_of(&h, ser, pts);
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = PLOT_SVG;
	struct strbuf sb = STRBUF_INIT;
	plot_history_script(&sb, &h, &o, "/out/history.svg");
	const char *s = sb.buf;
	cr_assert(strstr(s, "# panel 1\n") && strstr(s, "# panel 2\n") && !strstr(s, "# panel 3\n"),
		  "eager and staged apart: %s", s);
	cr_assert(strstr(s, "\"eager: peak footprint per stage, by commit (bars: spread across runs)\""),
		  "%s", s);
	/* one line and its spread per stage, the same colour in both panels */
	cr_assert(strstr(s, "$h0 using 1:2:3:4 with yerrorbars lc rgb '#1f77b4' lw 1 pt 7 ps 0.5 notitle, "
			    "\\\n     $h0 using 1:2 with linespoints lc rgb '#1f77b4'"), "%s", s);
	cr_assert(strstr(s, "$h2 using 1:2 with linespoints lc rgb '#1f77b4'"), "%s", s);
	cr_assert(strstr(s, "$h3 using 1:2:3:4 with yerrorbars lc rgb '#ff7f0e'"), "%s", s);
	cr_assert(strstr(s, "$h0 << EOD\n0 30.0000 29.5000 30.0000\n"), "%s", s);
	cr_assert(strstr(s, "$h1 << EOD\n0 35.0000 34.5000 35.0000\n1 NaN NaN NaN\n"), "a gap: %s", s);
	/* the regression ringed, in the legend */
	cr_assert(strstr(s, "$r3 << EOD\n3 19.0000\nEOD\n"), "%s", s);
	cr_assert(strstr(s, "$r3 using 1:2 with points pt 6"), "%s", s);
	cr_assert_null(strstr(s, "$r0 using"), "no regression in eager encode: %s", s);
	cr_assert(strstr(s, "\"regression against the previous commit (check)\""), "%s", s);
	/* the dirty checkout: its tick starred, a band behind it, in the legend */
	cr_assert(strstr(s, "\"c3d4e5f *\" 2"), "%s", s);
	cr_assert(strstr(s, "set object rect from 1.60, graph 0 to 2.40, graph 1 behind"), "%s", s);
	cr_assert(strstr(s, "\"* dirty checkout (local changes)\""), "%s", s);
	cr_assert(strstr(s, "set ylabel \"peak footprint (GB)\""), "%s", s);
	strbuf_release(&sb);
}

/* A stage whose runs stopped completing: a red cross labelled "failed" at that
 * commit, at the line's last value, in the legend; subjects under the short ids. */
Test(plot, history_crosses_a_stage_that_failed_and_shows_subjects)
{
	struct plot_history h;
	struct plot_history_series ser[4];
	struct plot_history_point pts[4][5];
	history_of(&h, ser, pts);
	static const char *const subjects[] = { "A", "B", "C", "D", "E" };
	h.subjects = subjects;
	pts[3][4].has_value = false;
	pts[3][4].failed = true;
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = PLOT_SVG;
	struct strbuf sb = STRBUF_INIT;
	plot_history_script(&sb, &h, &o, "/out/history.svg");
	const char *s = sb.buf;
	cr_assert(strstr(s, "$f3 << EOD\n4 19.0000\nEOD\n"), "at the last value: %s", s);
	cr_assert(strstr(s, "$f3 using 1:2 with points pt 2"), "%s", s);
	cr_assert(strstr(s, "$f3 using 1:2:(\"failed\") with labels"), "%s", s);
	cr_assert(strstr(s, "'failed: no run completed the stage at that commit'") ||
		  strstr(s, "\"failed: no run completed the stage at that commit\""), "%s", s);
	cr_assert(!strstr(s, "$f0 using"), "no cross where nothing failed: %s", s);
	cr_assert(strstr(s, "\"a1b2c3d\\nA\" 0"), "the subject under the id: %s", s);
	strbuf_release(&sb);
}

Test(plot, history_renders_with_gnuplot, .timeout = 60)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	struct plot_history h;
	struct plot_history_series ser[4];
	struct plot_history_point pts[4][5];
	history_of(&h, ser, pts);
	char *dir = scratch_dir();
	struct plot_opts o = PLOT_OPTS_INIT;
	o.format = PLOT_SVG;
	o.quiet_paths = true;
	o.out_dir = dir;
	o.title = "demo: peak footprint over five commits";
	char *text[2];
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(plot_history(&o, &h, "history"), 0);
		char *p = xasprintf("%s/history.svg", dir);
		size_t len;
		cr_assert_eq(read_file(p, &text[k], &len), 0);
		unlink(p);
		free(p);
	}
	cr_assert_str_eq(text[0], text[1], "the same SVG bytes twice");
	cr_assert(strstr(text[0], ">c3d4e5f *<"), "%.3000s", text[0]);
	cr_assert(strstr(text[0], ">demo: peak footprint over five commits<"));
	free(text[0]);
	free(text[1]);
	rmdir(dir);
	free(dir);
}

Test(plot, stage_names_under_the_bars_never_collide)
{
	/* 120 stages with long names: upright, every other name, cut with an ellipsis */
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, "{\"type\":\"start\",\"interval\":0.1,\"mode\":\"eager\"}\n");
	for (int i = 0; i < 120; i++) {
		strbuf_addf(&t, "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":"
				"\"a_rather_long_stage_name_number_%d\",\"t\":%d}\n", i, i);
		strbuf_addf(&t, "{\"type\":\"sample\",\"t\":%d.5,\"footprint\":%llu}\n", i, 1ull << 30);
	}
	strbuf_addstr(&t, "{\"type\":\"end\"}\n");
	struct trace tr = TRACE_INIT;
	read_mem("many", t.buf, &tr);
	struct plot_model *m = model_of(&tr, 1);
	char *s = stages_script(m, PLOT_SVG);
	const char *x = strstr(s, "set xtics nomirror scale 0 (");
	cr_assert_not_null(x, "%s", s);
	const char *end = strchr(x, '\n');
	cr_assert(strstr(x, ") rotate by 90 right\n") == end - strlen(") rotate by 90 right"),
		  "upright: %.300s", x);
	size_t stages = m->table.nstages, prev = SIZE_MAX, named = 0;
	double slot = 810.0 / (double)stages;
	for (const char *p = strchr(x, '('); p && p < end; p = strstr(p + 1, "\" ")) {
		size_t pos;
		if (sscanf(p + 2, "%zu", &pos) != 1)
			continue;
		if (prev != SIZE_MAX)
			cr_assert_geq((double)(pos - prev) * slot, 13, "names %zu and %zu collide", prev, pos);
		prev = pos;
		named++;
	}
	cr_assert_eq(prev, stages - 1, "the last stage is named");
	cr_assert(named >= stages / 2 - 1, "%zu of %zu named", named, stages);
	cr_assert(strstr(x, "\"a_rather_long_stage_name_nu\u2026\""), "cut at 28 characters: %.200s", x);
	free(s);
	model_free(m);
	trace_release(&tr);
	strbuf_release(&t);
}

Test(plot, binary_output_from_gnuplot_is_left_out_of_its_message, .timeout = 30)
{
	if (!plot_have_gnuplot(NULL))
		cr_skip_test("gnuplot is not installed");
	/* what a PNG written to gnuplot's stdout looks like in its output, then an error */
	static const char script[] = "set print '-'\nprint \"text first\\211PNG\\r\\n\\032\\n\\001\\002\"\n"
				     "set frobnicate 3\n";
	struct stderr_capture c;
	stderr_capture_begin(&c);
	int rc = plot_run_gnuplot(NULL, script, sizeof(script) - 1);
	char *msg = stderr_capture_end(&c);
	cr_assert_eq(rc, -1);
	cr_assert(strstr(msg, "gnuplot failed"), "%s", msg);
	cr_assert(strstr(msg, "text first"), "the text before the bytes is kept: %s", msg);
	cr_assert(strstr(msg, "bytes of binary output left out"), "%s", msg);
	for (const char *p = msg; *p; p++)
		cr_assert(*p == '\n' || (unsigned char)*p >= 0x20, "a control byte 0x%02x in: %s",
			  (unsigned char)*p, msg);
	free(msg);
}
