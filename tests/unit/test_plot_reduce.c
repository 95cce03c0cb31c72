/* test_plot_reduce.c -- a long trace's samples reduced for the charts while read
 * (plots/reduce.c): every peak and extreme kept, the points bounded */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../plots/plot.h"
#include "../../traces/trace.h"
#include "testutil.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)

/* n samples at 10 ms wandering between 100 MiB and 2 GiB (a fixed walk),
 * one of 9 GiB at `spike`, one of 1 MiB (the lowest) at `dip`. */
static struct trace_sample *walk(size_t n, size_t spike, size_t dip)
{
	struct trace_sample *s = xcalloc(n, sizeof(*s));
	uint64_t fp = 300 * MIB, x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		fp += (x >> 40) % (8 * MIB);
		fp -= 4 * MIB;
		fp = fp < 100 * MIB ? 100 * MIB : fp > 2 * GIB ? 2 * GIB : fp;
		s[i].t = (double)(i + 1) * 0.01;
		s[i].fields = SF_FOOTPRINT | SF_SWAP_USED;
		s[i].footprint = i == spike ? 9 * GIB : i == dip ? MIB : fp;
		s[i].swap_used = GIB + (i == spike ? GIB : 0);
	}
	return s;
}

static size_t argmax(const struct plot_series *s)
{
	size_t k = 0;
	for (size_t i = 1; i < s->n; i++)
		if (s->gb[i] > s->gb[k])
			k = i;
	return k;
}

static size_t argmin(const struct plot_series *s)
{
	size_t k = 0;
	for (size_t i = 1; i < s->n; i++)
		if (s->gb[i] < s->gb[k])
			k = i;
	return k;
}

static void assert_ascending(const struct plot_series *s)
{
	for (size_t i = 1; i < s->n; i++)
		cr_assert_leq(s->t[i - 1], s->t[i], "point %zu goes back in time", i);
}

Test(plot_reduce, a_long_series_keeps_the_spike_and_the_extremes_in_few_points)
{
	size_t n = 1200000, spike = 800000, dip = 123457;
	struct trace_sample *s = walk(n, spike, dip);
	struct plot_samples ps;
	plot_samples_of(s, n, &ps);
	const struct plot_series *fp = &ps.footprint;
	cr_assert_leq(fp->n, 2 * 4096 + 1, "%zu points: the reduction is bounded", fp->n);
	cr_assert_geq(fp->n, 4096, "%zu points: enough for a chart's every column", fp->n);
	assert_ascending(fp);
	size_t hi = argmax(fp), lo = argmin(fp);
	cr_assert_float_eq(fp->gb[hi], 9.0, 1e-12, "the 9 GiB spike is kept");
	cr_assert_float_eq(fp->t[hi], s[spike].t, 1e-12, "at its own time");
	cr_assert_float_eq(fp->gb[lo], 1.0 / 1024, 1e-12, "the lowest sample is kept");
	cr_assert_float_eq(fp->t[lo], s[dip].t, 1e-12);
	/* the run's last sample ends the series (where a stopped run is marked) */
	cr_assert_float_eq(fp->t[fp->n - 1], s[n - 1].t, 1e-12);
	cr_assert_float_eq(fp->gb[fp->n - 1], plot_gb(s[n - 1].footprint), 1e-12);
	cr_assert_float_eq(ps.t_first, 0.01, 1e-12);
	cr_assert_float_eq(ps.t_last, s[n - 1].t, 1e-12);
	/* swap: growth since the first sample, its spike kept too */
	size_t sh = argmax(&ps.swap);
	cr_assert_float_eq(ps.swap.gb[sh], 1.0, 1e-12);
	cr_assert_float_eq(ps.swap.gb[0], 0.0, 1e-12);
	plot_samples_release(&ps);
	free(s);
}

/* Every window of the run as wide as a chart's pixel column (1/760 of it)
 * has, among the reduced points, one as high and one as low as its samples'
 * highest and lowest (give or take the bucket that straddles its edge). */
Test(plot_reduce, every_column_of_the_chart_keeps_its_peak)
{
	size_t n = 300000;
	struct trace_sample *s = walk(n, 5, 299990);
	struct plot_samples ps;
	plot_samples_of(s, n, &ps);
	const struct plot_series *fp = &ps.footprint;
	enum { COLS = 760 };
	double want[COLS] = { 0 }, got[COLS] = { 0 };
	double t0 = s[0].t, span = s[n - 1].t - s[0].t, tol = span / 1000;
	for (size_t i = 0; i < n; i++) {
		size_t c = (size_t)((s[i].t - t0) / span * COLS);
		c = c < COLS ? c : COLS - 1;
		want[c] = fmax(want[c], plot_gb(s[i].footprint));
	}
	for (size_t j = 0; j < fp->n; j++)
		for (size_t c = 0; c < COLS; c++) {
			double c0 = t0 + span * (double)c / COLS, c1 = t0 + span * (double)(c + 1) / COLS;
			if (fp->t[j] >= c0 - tol && fp->t[j] < c1 + tol)
				got[c] = fmax(got[c], fp->gb[j]);
		}
	for (size_t c = 0; c < COLS; c++)
		cr_assert_geq(got[c], want[c], "column %zu: peak %.4f GB drawn as %.4f", c, want[c],
			      got[c]);
	plot_samples_release(&ps);
	free(s);
}

Test(plot_reduce, a_short_series_is_kept_whole_in_time_order)
{
	size_t n = 1000;
	struct trace_sample *s = walk(n, 10, 20);
	/* out of order: the reader hands samples in file order */
	struct trace_sample x = s[500];
	s[500] = s[501];
	s[501] = x;
	struct plot_samples ps;
	plot_samples_of(s, n, &ps);
	cr_assert_eq(ps.footprint.n, n);
	assert_ascending(&ps.footprint);
	cr_assert_float_eq(ps.footprint.gb[500], plot_gb(s[501].footprint), 1e-12);
	plot_samples_release(&ps);
	free(s);
}

/* Read from a file in one pass: the summary for the analysis, the series
 * reduced as read (plot_read_trace), and drawn: the spike is in the script. */
Test(plot_reduce, a_long_trace_file_is_read_reduced_and_drawn_with_its_spike)
{
	char *dir = test_tmpdir("plot-reduce");
	char *path = xasprintf("%s/long.trace.jsonl", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"eager\"}\n");
	size_t n = 200000;
	for (size_t i = 0; i < n; i++) {
		if (i % 1000 == 0)
			fprintf(f, "{\"type\":\"event\",\"kind\":\"stage\",\"t\":%.2f,\"stage\":\"s%zu\"}\n",
				(double)i * 0.01, i / 1000 % 7);
		fprintf(f, "{\"type\":\"sample\",\"t\":%.2f,\"footprint\":%llu}\n", (double)i * 0.01,
			i == 150001 ? 9 * GIB : GIB + (i % 97) * MIB);
	}
	fprintf(f, "{\"type\":\"end\",\"exit\":0}\n");
	cr_assert_eq(fclose(f), 0);

	struct trace tr = TRACE_INIT;
	struct plot_samples ps;
	cr_assert_eq(plot_read_trace(path, &tr, &ps), 0);
	cr_assert(tr.summary, "the analysis reads the summary");
	cr_assert_lt(tr.nsamples, n / 4, "the trace in memory is not every sample");
	cr_assert_leq(ps.footprint.n, 2 * 4096 + 1);
	size_t hi = argmax(&ps.footprint);
	cr_assert_float_eq(ps.footprint.gb[hi], 9.0, 1e-12);
	cr_assert_float_eq(ps.footprint.t[hi], 1500.01, 1e-9);

	struct plot_opts o = PLOT_OPTS_INIT;
	o.samples = &ps;
	struct plot_model m;
	cr_assert_eq(plot_model_build(&o, &tr, NULL, 1, &m), 0);
	cr_assert_float_eq(m.runs[0].peak_gb, 9.0, 1e-12);
	cr_assert_float_eq(m.runs[0].t_last, (double)(n - 1) * 0.01, 1e-9);
	struct strbuf sb = STRBUF_INIT;
	plot_memory_script(&sb, &m, &o, "memory.svg");
	cr_assert(strstr(sb.buf, "1500.010 9.0000\n"), "the spike is drawn");
	strbuf_release(&sb);
	plot_model_release(&m);
	plot_samples_release(&ps);
	trace_release(&tr);
	test_rm_rf(dir);
	free(path);
	free(dir);
}

/* Samples far out of time order (backwards): the grid grows to the left as
 * well; the points come out in time order with the spike. */
Test(plot_reduce, samples_backwards_grow_the_grid_to_the_left)
{
	size_t n = 200000;
	struct trace_sample *s = walk(n, 150000, 7);
	for (size_t i = 0; i < n / 2; i++) {
		struct trace_sample x = s[i];
		s[i] = s[n - 1 - i];
		s[n - 1 - i] = x;
	}
	struct plot_samples ps;
	plot_samples_of(s, n, &ps);
	assert_ascending(&ps.footprint);
	cr_assert_leq(ps.footprint.n, 2 * 4096 + 1);
	size_t hi = argmax(&ps.footprint), lo = argmin(&ps.footprint);
	cr_assert_float_eq(ps.footprint.gb[hi], 9.0, 1e-12);
	cr_assert_float_eq(ps.footprint.t[hi], 1500.01, 1e-9);
	cr_assert_float_eq(ps.footprint.gb[lo], 1.0 / 1024, 1e-12);
	cr_assert_float_eq(ps.t_first, 0.01, 1e-12);
	cr_assert_float_eq(ps.t_last, (double)n * 0.01, 1e-9);
	cr_assert_float_eq(ps.footprint.t[ps.footprint.n - 1], (double)n * 0.01, 1e-9);
	plot_samples_release(&ps);
	free(s);
}

/* A zstd trace cut inside a frame: the records of that frame were handed to
 * the reduction before the cut was seen; the series are those of the
 * samples kept (the complete frames), as trace_read() gives them. */
Test(plot_reduce, a_cut_zstd_trace_draws_only_the_samples_of_complete_frames)
{
	char *dir = test_tmpdir("plot-reduce-cut");
	char *path = xasprintf("%s/cut.trace.jsonl.zst", dir);
	struct trace_writer *w = trace_writer_open(path);
	cr_assert_not_null(w);
	trace_writer_set_flush_interval(w, INT64_MAX / 2); /* one frame per flush below */
	struct trace_start st = { .mode = "eager" };
	cr_assert_eq(trace_writer_start(w, &st), 0);
	for (int frame = 0; frame < 3; frame++) {
		/* the last frame, the one cut, is of several zstd blocks (128 KiB
		 * of text each): the first ones are decompressed and read before
		 * the cut is found */
		for (int i = 0; i < (frame == 2 ? 5000 : 1000); i++) {
			struct trace_sample s = { .t = frame * 100.0 + i * 0.01, .fields = SF_FOOTPRINT };
			s.footprint = GIB + (uint64_t)(i % 1000) * MIB;
			cr_assert_eq(trace_writer_sample(w, &s), 0);
		}
		cr_assert_eq(trace_writer_flush(w), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq(truncate(path, sb.st_size - 20), 0);

	struct trace full = TRACE_INIT, tr = TRACE_INIT;
	struct plot_samples ps;
	cr_assert_eq(trace_read(path, &full), 0, "a cut last frame is a warning");
	cr_assert_eq(plot_read_trace(path, &tr, &ps), 0);
	cr_assert(tr.damaged && tr.cut);
	cr_assert_eq(ps.footprint.n, full.nsamples, "%zu points, %zu samples kept", ps.footprint.n,
		     full.nsamples);
	cr_assert_eq(full.nsamples, 2000, "the samples of the frame cut short are dropped");
	plot_samples_release(&ps);
	trace_release(&tr);
	trace_release(&full);
	test_rm_rf(dir);
	free(path);
	free(dir);
}

/* Samples more than 10 s out of order make the summary read it all again
 * (trace_read): the series come from that read, whole and in time order. */
Test(plot_reduce, samples_far_out_of_order_are_drawn_in_time_order)
{
	const char *text = "{\"type\":\"start\",\"mode\":\"eager\"}\n"
			   "{\"type\":\"sample\",\"t\":100,\"footprint\":3221225472}\n"
			   "{\"type\":\"sample\",\"t\":200,\"footprint\":3221225472}\n"
			   "{\"type\":\"sample\",\"t\":1,\"footprint\":1073741824}\n"
			   "{\"type\":\"sample\",\"t\":50,\"footprint\":2147483648}\n";
	char *dir = test_tmpdir("plot-reduce-order");
	char *path = xasprintf("%s/o.trace.jsonl", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	struct trace tr = TRACE_INIT;
	struct plot_samples ps;
	cr_assert_eq(plot_read_trace(path, &tr, &ps), 0);
	cr_assert_not(tr.summary, "the summary fell back to a full read");
	cr_assert_eq(ps.footprint.n, 4);
	cr_assert_float_eq(ps.footprint.t[0], 1, 1e-12);
	cr_assert_float_eq(ps.footprint.gb[0], 1, 1e-12);
	cr_assert_float_eq(ps.footprint.t[1], 50, 1e-12);
	cr_assert_float_eq(ps.footprint.t[2], 100, 1e-12);
	cr_assert_float_eq(ps.footprint.gb[2], 3, 1e-12);
	cr_assert_float_eq(ps.t_last, 200, 1e-12);
	cr_assert_float_eq(ps.t_first, 1, 1e-12);
	plot_samples_release(&ps);
	trace_release(&tr);
	test_rm_rf(dir);
	free(path);
	free(dir);
}
