/* test_traces.c -- the trace format: writer, reader, stageload traces, probe lines */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "common/util.h"
#include "traces/trace.h"
#include "fixtures.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

/* xorshift: the same junk every run */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}


static char *tmpdir(void)
{
	return test_tmpdir("traces");
}

#define rm_rf test_rm_rf

/* Run the reader with stderr captured into *msg (caller frees). */
static int read_capturing(const char *path, struct trace *tr, char **msg)
{
	struct stderr_capture c;
	stderr_capture_begin(&c);
	int rc = trace_read(path, tr);
	*msg = stderr_capture_end(&c);
	return rc;
}

static int read_mem_capturing(const char *name, const char *data, size_t len,
			      struct trace *tr, char **msg)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/%s", dir, name);
	cr_assert_eq(write_file(path, data, len), 0);
	int rc = read_capturing(path, tr, msg);
	/* the message names the path: make it name `name` for the assertions */
	struct strbuf sb = STRBUF_INIT;
	const char *p = *msg, *q;
	while ((q = strstr(p, path))) {
		strbuf_add(&sb, p, (size_t)(q - p));
		strbuf_addstr(&sb, name);
		p = q + strlen(path);
	}
	strbuf_addstr(&sb, p);
	free(*msg);
	*msg = strbuf_detach(&sb);
	free(path);
	rm_rf(dir);
	free(dir);
	return rc;
}

static void write_text(const char *path, const char *text)
{
	cr_assert_eq(write_file(path, text, strlen(text)), 0);
}

static char *slurp(const char *path, size_t *len)
{
	char *data;
	cr_assert_eq(read_file(path, &data, len), 0, "cannot read %s", path);
	return data;
}

/* A start record using every field. */
static char *full_command[] = { "python3", "run.py", "--seed", "7", "say \"hi\"\n", NULL };
static struct trace_label full_labels[] = { { "host", "mac-1" }, { "note", "a\tb" } };

static struct trace_start full_start(void)
{
	struct trace_start st = {
		.format = TRACE_FORMAT,
		.utc = "2026-10-06T10:36:12+00:00",
		.interval = 0.01,
		.mode = "staged",
		.has_seed = true,
		.seed = -7,
		.command = full_command,
		.host_os = "Linux",
		.host_kernel = "6.1.0",
		.host_machine = "x86_64",
		.host_cpus = 2,
		.host_memory = 25769803776ull,
		.host_swap = 0,
		.meter_backend = "linux",
		.meter_footprint = "RssAnon + RssShmem of the tree",
		.labels = full_labels,
		.nlabels = 2,
		.commit = "0be9e69a",
		.has_dirty = true,
		.dirty = true,
		.extra_json = "\"pipeline\":\"demo\",\"steps\":[1,2]",
	};
	return st;
}

#define NEV 10

/* One event of every kind, each with the fields its kind carries. */
static void full_events(struct trace_event ev[NEV])
{
	memset(ev, 0, NEV * sizeof(*ev));
	for (int i = 0; i < NEV; i++) {
		ev[i].ndim = -1;
		ev[i].t = 1.5 + i;
	}
	ev[0].kind = EV_STAGE;
	ev[0].stage = "decode";
	ev[1].kind = EV_LOAD;
	ev[1].name = "transformer";
	ev[1].stage = "denoise";
	ev[1].has_nbytes = true;
	ev[1].nbytes = 14230249984ull;
	ev[1].has_seconds = true;
	ev[1].seconds = 5.251;
	ev[2].kind = EV_RELOAD;
	ev[2].name = "vae";
	ev[2].stage = "decode";
	ev[2].has_nbytes = true;
	ev[2].nbytes = 1;
	ev[2].has_seconds = true;
	ev[2].seconds = 0.125;
	ev[3].kind = EV_RELEASE;
	ev[3].name = "text_encoder";
	ev[3].stage = "denoise";
	ev[3].has_nbytes = true;
	ev[3].nbytes = 17534248048ull;
	ev[4].kind = EV_MARK;
	ev[4].note = "pipeline loaded in 17.8 s \"quoted\"";
	ev[5].kind = EV_LATENT;
	ev[5].name = "x_t";
	ev[5].stage = "shape_512";
	ev[5].sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
	ev[5].dtype = "float32";
	ev[5].ndim = 4;
	ev[5].shape[0] = 1;
	ev[5].shape[1] = 8;
	ev[5].shape[2] = 64;
	ev[5].shape[3] = 64;
	ev[5].file = "latents/staged-1/x_t.npy";
	ev[6].kind = EV_PEAK;
	ev[6].stage = "decode";
	ev[6].metric = "rss";
	ev[6].has_bytes = true;
	ev[6].bytes = 16700000000ull;
	ev[6].has_from = true;
	ev[6].from = 108.25;
	ev[7].kind = EV_GPU;
	ev[7].stage = "decode";
	ev[7].device = "cuda:0";
	ev[7].metric = "cuda_reserved";
	ev[7].has_bytes = true;
	ev[7].bytes = 2147483648ull;
	ev[7].has_max_bytes = true;
	ev[7].max_bytes = 4294967296ull;
	ev[8].kind = EV_GUARD;
	ev[8].action = "stop";
	ev[8].reason = "swap grew by 8.1 GB (budget 8.0 GB)";
	ev[8].extra_json = "\"available_pct\":12.5,\"swap_growth\":8697308774";
	ev[9].kind = EV_OTHER;
	ev[9].kind_name = "custom";
	ev[9].stage = "export";
	ev[9].extra_json = "\"thing\":{\"a\":[1,2,null]}";
}

static struct trace_end full_end(void)
{
	struct trace_end end = {
		.has_exit = true,
		.exit_code = 3,
		.signal = 9,
		.stopped_by = STOPPED_GUARD,
		.reason = "swap budget exceeded",
		.has_wall = true,
		.wall = 118.4125,
		.has_cpu = true,
		.cpu = 230.75,
	};
	return end;
}

static void assert_str(const char *got, const char *want, const char *what)
{
	if (!want)
		cr_assert_null(got, "%s: expected absent, got '%s'", what, got);
	else
		cr_assert(got && !strcmp(got, want), "%s: got '%s', want '%s'", what,
			  got ? got : "(null)", want);
}

static void assert_event_eq(const struct trace_event *got, const struct trace_event *want)
{
	cr_assert_eq(got->kind, want->kind);
	if (want->kind == EV_OTHER)
		assert_str(got->kind_name, want->kind_name, "kind_name");
	else
		assert_str(got->kind_name, event_kind_name(want->kind), "kind_name");
	cr_assert_float_eq(got->t, want->t, 1e-4);
	assert_str(got->stage, want->stage, "stage");
	assert_str(got->name, want->name, "name");
	assert_str(got->note, want->note, "note");
	assert_str(got->sha256, want->sha256, "sha256");
	assert_str(got->dtype, want->dtype, "dtype");
	assert_str(got->file, want->file, "file");
	assert_str(got->metric, want->metric, "metric");
	assert_str(got->device, want->device, "device");
	assert_str(got->action, want->action, "action");
	assert_str(got->reason, want->reason, "reason");
	assert_str(got->extra_json, want->extra_json, "extra_json");
	cr_assert_eq(got->has_nbytes, want->has_nbytes);
	cr_assert_eq(got->nbytes, want->nbytes);
	cr_assert_eq(got->has_seconds, want->has_seconds);
	cr_assert_eq(got->seconds, want->seconds);
	cr_assert_eq(got->has_bytes, want->has_bytes);
	cr_assert_eq(got->bytes, want->bytes);
	cr_assert_eq(got->has_max_bytes, want->has_max_bytes);
	cr_assert_eq(got->max_bytes, want->max_bytes);
	cr_assert_eq(got->has_from, want->has_from);
	cr_assert_float_eq(got->from, want->from, 1e-4);
	cr_assert_eq(got->ndim, want->ndim);
	for (int i = 0; i < want->ndim; i++)
		cr_assert_eq(got->shape[i], want->shape[i]);
}

/* Give field i of the schema a value by its kind: 0 the kind's largest,
 * 1 zero, others a small distinct value. */
static void set_field(struct trace_sample *s, size_t i, int which)
{
	const struct sample_field_info *f = &trace_sample_fields[i];
	void *slot = (char *)s + f->offset;
	switch (f->kind) {
	case SAMPLE_BYTES:
		/* mapped: at most the start record's host memory (the reader refuses more) */
		*(uint64_t *)slot = which == 0 ? (f->bit == SF_MAPPED ? 25769803776ull : UINT64_MAX) :
				    which == 1 ? 0 : (uint64_t)which * 4096;
		break;
	case SAMPLE_NUMBER:
		*(double *)slot = which == 0 ? 89.5 : which == 1 ? 0 : which + 0.25;
		break;
	case SAMPLE_COUNT:
		*(int *)slot = which == 0 ? 2147483647 : which;
		break;
	}
}

/* Field i of the schema of two samples is equal. */
static bool field_eq(const struct trace_sample *a, const struct trace_sample *b, size_t i)
{
	const struct sample_field_info *f = &trace_sample_fields[i];
	size_t size = f->kind == SAMPLE_BYTES ? sizeof(uint64_t) :
		      f->kind == SAMPLE_NUMBER ? sizeof(double) : sizeof(int);
	return !memcmp((const char *)a + f->offset, (const char *)b + f->offset, size);
}

/* Write a trace holding every record type to path; samples exercise every
 * field alone and all together. */
static void write_full(const char *path, struct trace_sample *samples, size_t *nsamples)
{
	struct trace_writer *w = trace_writer_open(path);
	cr_assert_not_null(w);
	struct trace_start st = full_start();
	cr_assert_eq(trace_writer_start(w, &st), 0);
	size_t n = 0;
	struct trace_sample s;
	memset(&s, 0, sizeof(s));
	s.t = 0.0001; /* only t */
	samples[n++] = s;
	/* every field of the schema alone, then all of them; the values are
	 * the kind's extremes (a present zero stays a zero) */
	for (size_t i = 0; i < SAMPLE_NFIELDS; i++) {
		memset(&s, 0, sizeof(s));
		s.t = 0.01 * (double)(i + 1);
		s.fields = trace_sample_fields[i].bit;
		set_field(&s, i, i % 2);
		samples[n++] = s;
	}
	memset(&s, 0, sizeof(s));
	s.t = 1234.5678; /* all of them (the plain test checks this line's text) */
	for (size_t i = 0; i < SAMPLE_NFIELDS; i++) {
		s.fields |= trace_sample_fields[i].bit;
		set_field(&s, i, 2 + (int)i);
	}
	s.footprint = 1;
	s.rss = 2;
	s.swapped = 3;
	s.swap_used = 4;
	s.swap_total = 5;
	s.level = 7.25;
	s.gpu = 6;
	s.procs = 8;
	s.devmem = 9;
	s.devmem_allocated = 10;
	s.mapped = 12;
	s.majflt = 13;
	samples[n++] = s;
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(trace_writer_sample(w, &samples[i]), 0);
	struct trace_event ev[NEV];
	full_events(ev);
	for (int i = 0; i < NEV; i++)
		cr_assert_eq(trace_writer_event(w, &ev[i]), 0);
	struct trace_end end = full_end();
	cr_assert_eq(trace_writer_end(w, &end), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	*nsamples = n;
}

static void check_full(const struct trace *tr, const struct trace_sample *samples, size_t n)
{
	struct trace_start st = full_start();
	cr_assert(tr->has_start);
	assert_str(tr->start.format, TRACE_FORMAT, "format");
	assert_str(tr->start.utc, st.utc, "utc");
	cr_assert_eq(tr->start.interval, st.interval);
	assert_str(tr->start.mode, st.mode, "mode");
	cr_assert(tr->start.has_seed);
	cr_assert_eq(tr->start.seed, -7);
	cr_assert_not_null(tr->start.command);
	for (int i = 0; full_command[i]; i++)
		assert_str(tr->start.command[i], full_command[i], "command");
	cr_assert_null(tr->start.command[5]);
	assert_str(tr->start.host_os, "Linux", "os");
	assert_str(tr->start.host_kernel, "6.1.0", "kernel");
	assert_str(tr->start.host_machine, "x86_64", "machine");
	cr_assert_eq(tr->start.host_cpus, 2);
	cr_assert_eq(tr->start.host_memory, 25769803776ull);
	cr_assert_eq(tr->start.host_swap, 0);
	assert_str(tr->start.meter_backend, "linux", "backend");
	assert_str(tr->start.meter_footprint, st.meter_footprint, "meter footprint");
	cr_assert_eq(tr->start.nlabels, 2);
	assert_str(tr->start.labels[0].key, "host", "label key");
	assert_str(tr->start.labels[0].value, "mac-1", "label value");
	assert_str(tr->start.labels[1].key, "note", "label key");
	assert_str(tr->start.labels[1].value, "a\tb", "label value");
	assert_str(tr->start.commit, "0be9e69a", "commit");
	cr_assert(tr->start.has_dirty && tr->start.dirty);
	assert_str(tr->start.extra_json, st.extra_json, "start extra");

	cr_assert_eq(tr->nsamples, n);
	for (size_t i = 0; i < n; i++) {
		const struct trace_sample *g = &tr->samples[i], *w = &samples[i];
		cr_assert_float_eq(g->t, w->t, 1e-4, "sample %zu t", i);
		cr_assert_eq(g->fields, w->fields, "sample %zu fields %#x want %#x", i, g->fields,
			     w->fields);
		for (size_t k = 0; k < SAMPLE_NFIELDS; k++)
			if (w->fields & trace_sample_fields[k].bit)
				cr_assert(field_eq(g, w, k), "sample %zu field %s", i,
					  trace_sample_fields[k].key);
	}

	struct trace_event ev[NEV];
	full_events(ev);
	cr_assert_eq(tr->nevents, NEV);
	for (int i = 0; i < NEV; i++)
		assert_event_eq(&tr->events[i], &ev[i]);

	struct trace_end end = full_end();
	cr_assert(tr->has_end);
	cr_assert(tr->end.has_exit);
	cr_assert_eq(tr->end.exit_code, end.exit_code);
	cr_assert_eq(tr->end.signal, end.signal);
	cr_assert_eq(tr->end.stopped_by, STOPPED_GUARD);
	assert_str(tr->end.reason, end.reason, "end reason");
	cr_assert(tr->end.has_wall && tr->end.wall == end.wall);
	cr_assert(tr->end.has_cpu && tr->end.cpu == end.cpu);
	cr_assert_null(tr->end.extra_json);
	cr_assert_not(tr->damaged);
}

/* ---- round trips ------------------------------------------------------- */

Test(traces, zstd_round_trip_keeps_every_record_type_and_field)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/run.trace.jsonl.zst", dir);
	struct trace_sample samples[SAMPLE_NFIELDS + 2];
	size_t n;
	write_full(path, samples, &n);

	size_t len;
	char *data = slurp(path, &len);
	cr_assert(len > 4 && (unsigned char)data[0] == 0x28 && (unsigned char)data[1] == 0xB5,
		  "a .zst path must be written as zstd");
	free(data);

	struct trace tr;
	cr_assert_eq(trace_read(path, &tr), 0);
	assert_str(tr.path, path, "path");
	check_full(&tr, samples, n);
	trace_release(&tr);
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(traces, plain_round_trip_writes_json_lines)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/run.trace.jsonl", dir);
	struct trace_sample samples[SAMPLE_NFIELDS + 2];
	size_t n;
	write_full(path, samples, &n);

	size_t len;
	char *data = slurp(path, &len);
	cr_assert(str_starts_with(data, "{\"type\":\"start\",\"format\":\"stagebench/1\",\"utc\":"),
		  "first line: %.80s", data);
	/* key order and integer bytes are part of the format */
	cr_assert_not_null(strstr(data, "{\"type\":\"sample\",\"t\":1234.5678,\"footprint\":1,"
					"\"rss\":2,\"swapped\":3,\"swap_used\":4,\"swap_total\":5,"
					"\"level\":7.25,\"gpu\":6,\"procs\":8,\"majflt\":13,\"devmem\":9,"
					"\"devmem_allocated\":10,\"mapped\":12}\n"));
	cr_assert_not_null(strstr(data, "{\"type\":\"sample\",\"t\":0.0001}\n"));
	cr_assert_not_null(strstr(data, "\"gpu\":18446744073709551615}"));
	cr_assert_not_null(strstr(data, "{\"type\":\"event\",\"kind\":\"load\",\"t\":2.5000,"
					"\"stage\":\"denoise\",\"name\":\"transformer\","
					"\"nbytes\":14230249984,\"seconds\":5.251}\n"));
	cr_assert_not_null(strstr(data, "\"host\":{\"os\":\"Linux\",\"kernel\":\"6.1.0\","
					"\"machine\":\"x86_64\",\"cpus\":2,\"memory\":25769803776,"
					"\"swap\":0}"));
	cr_assert(str_ends_with(data, "{\"type\":\"end\",\"exit\":3,\"signal\":9,\"stopped_by\":"
				      "\"guard\",\"reason\":\"swap budget exceeded\",\"wall\":118.4125,"
				      "\"cpu\":230.75}\n"), "last line: %s", strrchr(data, '{'));
	free(data);

	struct trace tr;
	cr_assert_eq(trace_read(path, &tr), 0);
	check_full(&tr, samples, n);
	trace_release(&tr);
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(traces, absent_fields_stay_absent)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/min.jsonl.zst", dir);
	struct trace_writer *w = trace_writer_open(path);
	cr_assert_not_null(w);
	struct trace_start st;
	memset(&st, 0, sizeof(st));
	cr_assert_eq(trace_writer_start(w, &st), 0);
	struct trace_sample s;
	memset(&s, 0, sizeof(s));
	s.t = 2;
	s.fields = SF_FOOTPRINT;
	s.footprint = 0;
	s.rss = 99; /* bit clear: must not be written */
	cr_assert_eq(trace_writer_sample(w, &s), 0);
	struct trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = EV_STAGE;
	ev.t = 1;
	ev.nbytes = 5; /* has_nbytes clear */
	cr_assert_eq(trace_writer_event(w, &ev), 0);
	struct trace_end end;
	memset(&end, 0, sizeof(end));
	cr_assert_eq(trace_writer_end(w, &end), 0);
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace tr;
	cr_assert_eq(trace_read(path, &tr), 0);
	cr_assert(tr.has_start);
	cr_assert_not_null(tr.start.utc, "the writer stamps utc when the caller has none");
	cr_assert_null(tr.start.mode);
	cr_assert_not(tr.start.has_seed);
	cr_assert_null(tr.start.command);
	cr_assert_null(tr.start.host_os);
	cr_assert_null(tr.start.meter_backend);
	cr_assert_eq(tr.start.nlabels, 0);
	cr_assert_null(tr.start.commit);
	cr_assert_not(tr.start.has_dirty);
	cr_assert_null(tr.start.extra_json);
	cr_assert_eq(tr.start.interval, 0);
	cr_assert_eq(tr.nsamples, 1);
	cr_assert_eq(tr.samples[0].fields, SF_FOOTPRINT);
	cr_assert_eq(tr.samples[0].footprint, 0);
	cr_assert_eq(tr.samples[0].rss, 0);
	cr_assert_eq(tr.nevents, 1);
	cr_assert_not(tr.events[0].has_nbytes);
	cr_assert_not(tr.events[0].has_seconds);
	cr_assert_not(tr.events[0].has_bytes);
	cr_assert_not(tr.events[0].has_from);
	cr_assert_eq(tr.events[0].ndim, -1);
	cr_assert_null(tr.events[0].stage);
	cr_assert(tr.has_end);
	cr_assert_not(tr.end.has_exit);
	cr_assert_eq(tr.end.signal, 0);
	cr_assert_eq(tr.end.stopped_by, STOPPED_NONE);
	cr_assert_null(tr.end.reason);
	cr_assert_not(tr.end.has_wall);
	cr_assert_not(tr.end.has_cpu);
	trace_release(&tr);
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(traces, extra_keys_are_written_back_verbatim)
{
	const char *in =
		"{\"type\":\"start\",\"mode\":\"eager\",\"pipeline\":\"Qwen\",\"stop_at\":null,"
		"\"nested\":{\"a\":[1,2.5,\"x\"]}}\n"
		"{\"type\":\"event\",\"kind\":\"guard\",\"action\":\"wait\",\"t\":1.0,"
		"\"available_pct\":31.5,\"reason\":\"busy\"}\n"
		"{\"type\":\"end\",\"exit\":0,\"future\":true}\n";
	char *dir = tmpdir();
	char *p1 = xasprintf("%s/a.jsonl", dir), *p2 = xasprintf("%s/b.jsonl", dir);
	write_text(p1, in);
	struct trace a, b;
	cr_assert_eq(trace_read(p1, &a), 0);
	assert_str(a.start.extra_json,
		   "\"pipeline\":\"Qwen\",\"stop_at\":null,\"nested\":{\"a\":[1,2.5,\"x\"]}",
		   "start extra");
	assert_str(a.events[0].extra_json, "\"available_pct\":31.5", "event extra");
	assert_str(a.events[0].reason, "busy", "reason");
	assert_str(a.end.extra_json, "\"future\":true", "end extra");

	struct trace_writer *w = trace_writer_open(p2);
	cr_assert_eq(trace_writer_start(w, &a.start), 0);
	cr_assert_eq(trace_writer_event(w, &a.events[0]), 0);
	cr_assert_eq(trace_writer_end(w, &a.end), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_eq(trace_read(p2, &b), 0);
	assert_str(b.start.extra_json, a.start.extra_json, "start extra again");
	assert_str(b.events[0].extra_json, a.events[0].extra_json, "event extra again");
	assert_str(b.end.extra_json, a.end.extra_json, "end extra again");
	trace_release(&a);
	trace_release(&b);
	free(p1);
	free(p2);
	rm_rf(dir);
	free(dir);
}

Test(traces, typed_fields_follow_the_known_keys_and_precede_extra_json)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/t.jsonl", dir);
	struct trace_start st = { .utc = "x", .mode = "m" };
	trace_fields_bool(&st.fields, "peak_reset", false);
	trace_fields_string(&st.fields, "peaks", "samples");
	trace_fields_object(&st.fields, "stagebench");
	trace_fields_string(&st.fields, "version", "0.1.0");
	trace_fields_string(&st.fields, "commit", "a\"b");
	trace_fields_end(&st.fields);
	trace_fields_u64(&st.fields, "cache_files", 8697308774ull);
	trace_fields_double(&st.fields, "pct", 12.5);
	trace_fields_string(&st.fields, "none", NULL);
	st.extra_json = (char *)"\"later\":[1]";
	struct trace_event ev = TRACE_EVENT_INIT;
	ev.kind = EV_GUARD;
	ev.t = 1;
	ev.action = (char *)"wait";
	trace_fields_null(&ev.fields, "bytes");
	struct trace_writer *w = trace_writer_open(path);
	cr_assert_eq(trace_writer_start(w, &st), 0);
	cr_assert_eq(trace_writer_event(w, &ev), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	char *data;
	size_t len;
	cr_assert_eq(read_file(path, &data, &len), 0);
	cr_assert_str_eq(data,
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"utc\":\"x\",\"mode\":\"m\","
		"\"peak_reset\":false,\"peaks\":\"samples\",\"stagebench\":{\"version\":\"0.1.0\","
		"\"commit\":\"a\\\"b\"},\"cache_files\":8697308774,\"pct\":12.5,"
		"\"none\":null,\"later\":[1]}\n"
		"{\"type\":\"event\",\"kind\":\"guard\",\"t\":1.0000,\"action\":\"wait\",\"bytes\":null}\n");
	char *body = trace_fields_json(&ev.fields);
	cr_assert_str_eq(body, "\"bytes\":null");
	free(body);
	struct trace tr;
	cr_assert_eq(trace_read(path, &tr), 0);
	cr_assert_eq(tr.start.fields.n, 0, "the reader keeps what it does not know as text");
	assert_str(tr.start.extra_json,
		   "\"peak_reset\":false,\"peaks\":\"samples\",\"stagebench\":{\"version\":\"0.1.0\","
		   "\"commit\":\"a\\\"b\"},\"cache_files\":8697308774,\"pct\":12.5,"
		   "\"none\":null,\"later\":[1]", "start extra");
	trace_release(&tr);
	trace_fields_release(&st.fields);
	trace_fields_release(&ev.fields);
	cr_assert_eq(st.fields.n, 0);
	free(data);
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(traces, large_frames_split_across_read_chunks_read_whole)
{
	/* an hour-long interval: frames are cut only by the 1 MiB buffer limit,
	 * so lines straddle the reader's decompression chunks */
	char *dir = tmpdir();
	char *path = xasprintf("%s/big.jsonl.zst", dir);
	struct trace_writer *w = trace_writer_open(path);
	trace_writer_set_flush_interval(w, 3600000000000LL);
	struct trace_start st;
	memset(&st, 0, sizeof(st));
	cr_assert_eq(trace_writer_start(w, &st), 0);
	struct trace_sample s;
	memset(&s, 0, sizeof(s));
	s.fields = SF_FOOTPRINT | SF_RSS | SF_LEVEL;
	const size_t n = 60000;
	for (size_t i = 0; i < n; i++) {
		s.t = (double)i / 100;
		s.footprint = 1000000007ull * i;
		s.rss = i;
		s.level = (double)(i % 1000) / 10;
		cr_assert_eq(trace_writer_sample(w, &s), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);
	struct trace tr;
	cr_assert_eq(trace_read(path, &tr), 0);
	cr_assert_eq(tr.nsamples, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(tr.samples[i].rss, i);
		cr_assert_eq(tr.samples[i].footprint, 1000000007ull * i);
		cr_assert_eq(tr.samples[i].t, (double)i / 100, "t %.17g", tr.samples[i].t);
		cr_assert_eq(tr.samples[i].level, (double)(i % 1000) / 10);
	}
	trace_release(&tr);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* ---- flushing and crash safety ------------------------------------------ */

static size_t count_samples_now(const char *path)
{
	struct trace tr;
	char *msg = NULL;
	read_capturing(path, &tr, &msg);
	free(msg);
	size_t n = tr.nsamples;
	trace_release(&tr);
	return n;
}

Test(traces, writer_flushes_when_buffer_is_older_than_interval)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/f.jsonl.zst", dir);
	struct trace_writer *w = trace_writer_open(path);
	struct trace_start st;
	memset(&st, 0, sizeof(st));
	cr_assert_eq(trace_writer_start(w, &st), 0);
	struct trace_sample s;
	memset(&s, 0, sizeof(s));
	/* default interval (1 s): two quick samples stay buffered */
	cr_assert_eq(trace_writer_sample(w, &s), 0);
	s.t = 0.1;
	cr_assert_eq(trace_writer_sample(w, &s), 0);
	cr_assert_eq(count_samples_now(path), 0);
	/* a 1 ms interval: the next record after 5 ms writes them all */
	trace_writer_set_flush_interval(w, 1000000);
	sleep_ns(5000000);
	s.t = 0.2;
	cr_assert_eq(trace_writer_sample(w, &s), 0);
	cr_assert_eq(count_samples_now(path), 3);
	/* an explicit flush writes what is buffered */
	trace_writer_set_flush_interval(w, 60000000000LL);
	s.t = 0.3;
	cr_assert_eq(trace_writer_sample(w, &s), 0);
	cr_assert_eq(count_samples_now(path), 3);
	cr_assert_eq(trace_writer_flush(w), 0);
	cr_assert_eq(count_samples_now(path), 4);
	cr_assert_eq(trace_writer_close(w), 0);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* The child writes samples t = 0, 1, 2, ... flushing every 37 and telling
 * the parent over a pipe how many are flushed; the parent kills it with
 * SIGKILL mid-stream and reads the file back. */
static void kill9_case(const char *name)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/%s", dir, name);
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		struct trace_writer *w = trace_writer_open(path);
		struct trace_start st;
		memset(&st, 0, sizeof(st));
		st.mode = "eager";
		if (!w || trace_writer_start(w, &st))
			_exit(1);
		struct trace_sample s;
		memset(&s, 0, sizeof(s));
		s.fields = SF_FOOTPRINT | SF_LEVEL;
		for (uint32_t i = 0;; i++) {
			s.t = i;
			s.footprint = (uint64_t)i * 4096 + 12345;
			s.level = (double)(i % 100);
			if (trace_writer_sample(w, &s))
				_exit(1);
			if (i % 37 == 36) {
				if (trace_writer_flush(w))
					_exit(1);
				uint32_t done = i + 1;
				if (write(fds[1], &done, sizeof(done)) != sizeof(done))
					_exit(1);
			}
		}
	}
	close(fds[1]);
	uint32_t flushed = 0, got;
	/* let it write a good number of frames, then kill it while it writes */
	while (flushed < 20000 && read(fds[0], &got, sizeof(got)) == sizeof(got))
		flushed = got;
	kill(pid, SIGKILL);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the writer died on its own (status %d)", status);
	close(fds[0]);

	struct trace tr;
	char *msg = NULL;
	int rc = read_capturing(path, &tr, &msg);
	cr_assert(tr.has_start);
	assert_str(tr.start.mode, "eager", "mode");
	cr_assert_geq(tr.nsamples, flushed, "%zu samples read, %u were flushed", tr.nsamples,
		      flushed);
	for (size_t i = 0; i < tr.nsamples; i++) {
		cr_assert_eq(tr.samples[i].t, (double)i);
		cr_assert_eq(tr.samples[i].footprint, (uint64_t)i * 4096 + 12345);
		cr_assert_eq(tr.samples[i].fields, SF_FOOTPRINT | SF_LEVEL);
	}
	cr_assert_not(tr.has_end);
	/* killed inside write(2), the last frame (zstd) or line (plain) is cut: read with
	 * a warning */
	cr_assert_eq(rc, 0, "rc %d: %s", rc, msg);
	bool zst = strlen(name) > 4 && !strcmp(name + strlen(name) - 4, ".zst");
	if (tr.damaged)
		cr_assert(tr.cut && strstr(msg, zst ? "inside its last zstd frame"
						    : "inside its last line"), "%s", msg);
	else
		cr_assert_str_empty(msg);
	free(msg);
	trace_release(&tr);
	free(path);
	rm_rf(dir);
	free(dir);
}

static size_t count_events_now(const char *path)
{
	struct trace tr;
	char *msg = NULL;
	read_capturing(path, &tr, &msg);
	free(msg);
	size_t n = tr.nevents;
	trace_release(&tr);
	return n;
}

Test(traces, events_are_written_at_once_with_the_samples_before_them)
{
	static const char *const names[] = { "f.jsonl.zst", "f.jsonl" };
	for (int k = 0; k < 2; k++) {
		char *dir = tmpdir();
		char *path = xasprintf("%s/%s", dir, names[k]);
		struct trace_writer *w = trace_writer_open(path);
		trace_writer_set_flush_interval(w, 3600LL * 1000000000LL);
		struct trace_start st = { .utc = "x" };
		cr_assert_eq(trace_writer_start(w, &st), 0);
		struct trace_sample s = { .t = 0.1 };
		cr_assert_eq(trace_writer_sample(w, &s), 0);
		cr_assert_eq(count_samples_now(path), 0, "samples wait for the flush interval");
		static const enum event_kind kinds[] = { EV_STAGE, EV_RELEASE, EV_LOAD, EV_LATENT,
							 EV_GUARD, EV_PEAK, EV_MARK, EV_GPU };
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			struct trace_event ev = TRACE_EVENT_INIT;
			ev.kind = kinds[i];
			ev.t = 0.2 + (double)i;
			cr_assert_eq(trace_writer_event(w, &ev), 0);
			cr_assert_eq(count_events_now(path), i + 1, "%s: event %s in the file at once",
				     names[k], event_kind_name(kinds[i]));
		}
		cr_assert_eq(count_samples_now(path), 1, "the sample before the events went with them");
		cr_assert_eq(trace_writer_sample(w, &s), 0);
		cr_assert_eq(count_samples_now(path), 1, "a later sample still waits");
		cr_assert_eq(trace_writer_close(w), 0);
		cr_assert_eq(count_samples_now(path), 2);
		free(path);
		rm_rf(dir);
		free(dir);
	}
}

/* ---- faults: a write hook that fails at a chosen call -------------------- */

struct fault {
	int fail_at;       /* the write call (1-based) that fails */
	int err;           /* its errno */
	bool short_first;  /* that call first writes half of its bytes, then the next fails */
	int calls;
	size_t submitted;  /* records handed to the writer so far (the test counts) */
	size_t durable;    /* records in the file when the last whole write returned */
	bool failed;
};

static ssize_t faulty_write(int fd, const void *buf, size_t len, void *arg)
{
	struct fault *f = arg;
	f->calls++;
	if (f->calls == f->fail_at && f->short_first && len > 1) {
		ssize_t n = write(fd, buf, len / 2);
		cr_assert_eq(n, (ssize_t)(len / 2));
		return n; /* the writer tries the rest: the next call fails */
	}
	if (f->calls >= f->fail_at) {
		f->failed = true;
		errno = f->err;
		return -1;
	}
	ssize_t n = write(fd, buf, len);
	cr_assert_eq(n, (ssize_t)len);
	f->durable = f->submitted;
	return n;
}

/* Write start, 60 samples with an event every 7th, end, through the hook;
 * 1 ms flush interval and a 2 ms pause now and then make frames of samples
 * too. Returns the number of write calls made. */
static int write_with_faults(const char *path, struct fault *f, char **msg)
{
	struct stderr_capture c;
	stderr_capture_begin(&c);
	struct trace_writer *w = trace_writer_open(path);
	trace_writer_set_write_fn(w, faulty_write, f);
	trace_writer_set_flush_interval(w, 1000000);
	struct trace_start st = { .utc = "2026-01-01T00:00:00+00:00", .mode = "m" };
	f->submitted++;
	int rc = trace_writer_start(w, &st);
	bool saw_failure = rc < 0;
	for (int i = 0; i < 60; i++) {
		struct trace_sample s = { .t = 0.01 * i, .fields = SF_FOOTPRINT, .footprint = 1000u + (unsigned)i };
		f->submitted++;
		rc = trace_writer_sample(w, &s);
		cr_assert(rc == 0 || f->failed, "sample %d: only a failed write fails", i);
		cr_assert(!saw_failure || rc < 0, "a writer that failed keeps failing");
		saw_failure |= rc < 0;
		if (i % 7 == 3) {
			struct trace_event ev = TRACE_EVENT_INIT;
			ev.kind = EV_STAGE;
			ev.t = 0.01 * i;
			ev.stage = "s";
			f->submitted++;
			rc = trace_writer_event(w, &ev);
			cr_assert(!saw_failure || rc < 0);
			saw_failure |= rc < 0;
		}
		if (i % 20 == 10)
			sleep_ns(2000000);
	}
	struct trace_end end = { .has_exit = true, .exit_code = 0 };
	f->submitted++;
	trace_writer_end(w, &end);
	rc = trace_writer_close(w);
	cr_assert_eq(rc < 0, f->failed, "close reports the failure (and only one)");
	*msg = stderr_capture_end(&c);
	return f->calls;
}

static void check_faults(const char *name)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/%s", dir, name);
	struct fault clean = { .fail_at = 1 << 30 };
	char *msg;
	int ncalls = write_with_faults(path, &clean, &msg);
	free(msg);
	cr_assert_gt(ncalls, 12, "%s: enough frames to fail between (%d)", name, ncalls);
	static const int errs[] = { ENOSPC, EIO };
	for (int at = 1; at <= ncalls; at++)
		for (int e = 0; e < 2; e++)
			for (int sh = 0; sh < 2; sh++) {
				struct fault f = { .fail_at = at, .err = errs[e], .short_first = sh };
				write_with_faults(path, &f, &msg);
				cr_assert(f.failed);
				cr_assert_not_null(strstr(msg, strerror(errs[e])), "%s", msg);
				cr_assert_not_null(strstr(msg, "cannot write trace"), "%s", msg);
				free(msg);
				struct trace tr;
				int rc = read_capturing(path, &tr, &msg);
				size_t got = tr.has_start + tr.nsamples + tr.nevents + tr.has_end;
				/* zstd: a cut frame is dropped whole; plain: the whole lines
				 * of a cut write are there too */
				bool zst = str_ends_with(name, ".zst");
				cr_assert(zst ? got == f.durable : got >= f.durable && got <= f.submitted,
					  "%s, %s at write %d%s: %zu records read, %zu written before "
					  "the fault (%s)", name, strerror(errs[e]), at,
					  sh ? " after a short write" : "", got, f.durable, msg);
				cr_assert(rc == 0 || tr.damaged);
				for (size_t i = 0; i < tr.nsamples; i++)
					cr_assert_eq(tr.samples[i].footprint, 1000u + i);
				trace_release(&tr);
				free(msg);
			}
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(traces, zstd_writer_faults_keep_every_record_written_before, .timeout = 120)
{
	check_faults("fault.trace.jsonl.zst");
}

Test(traces, plain_writer_faults_keep_every_record_written_before, .timeout = 120)
{
	check_faults("fault.trace.jsonl");
}

Test(traces, sigkilled_zstd_writer_leaves_every_flushed_record, .timeout = 120)
{
	kill9_case("k.trace.jsonl.zst");
}

Test(traces, sigkilled_plain_writer_leaves_every_flushed_record, .timeout = 120)
{
	kill9_case("k.trace.jsonl");
}

/* ---- damaged and refused files ----------------------------------------- */

/* A zstd trace of 4 frames: start, samples 0..9, 10..19, 20..29;
 * frame_end[i] is the file size after frame i. */
static char *three_frames(size_t *len, size_t *frame_end)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/t.jsonl.zst", dir);
	struct trace_writer *w = trace_writer_open(path);
	struct trace_start st;
	memset(&st, 0, sizeof(st));
	cr_assert_eq(trace_writer_start(w, &st), 0);
	struct stat sbuf;
	cr_assert_eq(stat(path, &sbuf), 0);
	frame_end[0] = (size_t)sbuf.st_size;
	struct trace_sample s;
	memset(&s, 0, sizeof(s));
	s.fields = SF_RSS;
	for (int i = 0; i < 30; i++) {
		s.t = i;
		s.rss = (uint64_t)i;
		cr_assert_eq(trace_writer_sample(w, &s), 0);
		if (i % 10 == 9) {
			cr_assert_eq(trace_writer_flush(w), 0);
			cr_assert_eq(stat(path, &sbuf), 0);
			frame_end[i / 10 + 1] = (size_t)sbuf.st_size;
		}
	}
	cr_assert_eq(trace_writer_close(w), 0);
	char *data = slurp(path, len);
	free(path);
	rm_rf(dir);
	free(dir);
	return data;
}

Test(traces, truncated_zstd_frame_is_read_up_to_it_with_a_warning_naming_the_bytes)
{
	size_t len, frame_end[4];
	char *data = three_frames(&len, frame_end);
	cr_assert_eq(len, frame_end[3]);
	for (size_t chop = 1; chop < 8; chop++) {
		struct trace tr;
		char *msg;
		int rc = read_mem_capturing("cut.jsonl.zst", data, len - chop, &tr, &msg);
		cr_assert_eq(rc, 0, "a cut last frame is a warning: %s", msg);
		cr_assert(tr.damaged && tr.cut);
		cr_assert(tr.has_start);
		/* lines: 1 start, 2-21 the samples of the first two frames */
		cr_assert_eq(tr.nsamples, 20, "chop %zu: %zu samples", chop, tr.nsamples);
		cr_assert_eq(tr.samples[19].rss, 19);
		char *want = xasprintf("stagebench: warning: cut.jsonl.zst: cut at byte %zu, inside "
				       "its last zstd frame (from byte %zu): the recording stopped "
				       "before it closed the file; reading the 21 lines before that "
				       "frame\n", len - chop, frame_end[2]);
		cr_assert_str_eq(msg, want);
		free(want);
		free(msg);
		trace_release(&tr);
	}
	free(data);
}

Test(traces, every_prefix_of_a_zstd_trace_reads_without_crashing)
{
	size_t len, frame_end[4];
	char *data = three_frames(&len, frame_end);
	for (size_t cut = 0; cut < len; cut++) {
		struct trace tr;
		char *msg;
		int rc = read_mem_capturing("p.zst", data, cut, &tr, &msg);
		/* a cut between frames leaves a shorter but sound file; a cut
		 * inside one is read up to it with a warning, unless no start
		 * record is left */
		bool boundary = cut == frame_end[0] || cut == frame_end[1] || cut == frame_end[2];
		cr_assert_eq(rc, cut >= frame_end[0] ? 0 : -1, "a prefix of %zu bytes: rc %d", cut, rc);
		cr_assert_eq(tr.damaged, !boundary);
		cr_assert_eq(tr.cut, !boundary && cut >= frame_end[0]);
		cr_assert_eq(tr.has_start, cut >= frame_end[0]);
		size_t want = cut >= frame_end[2] ? 20 : cut >= frame_end[1] ? 10 : 0;
		cr_assert_eq(tr.nsamples, want, "cut %zu: %zu samples", cut, tr.nsamples);
		free(msg);
		trace_release(&tr);
	}
	free(data);
}

Test(traces, corrupt_zstd_frame_keeps_the_frames_before_it)
{
	size_t len, frame_end[4];
	char *data = three_frames(&len, frame_end);
	/* damage the middle of the third frame (samples 10..19); its checksum or
	 * its structure fails */
	size_t mid = (frame_end[1] + frame_end[2]) / 2;
	for (size_t i = mid; i < mid + 4; i++)
		data[i] ^= 0x5a;
	struct trace tr;
	char *msg;
	cr_assert_eq(read_mem_capturing("bad.zst", data, len, &tr, &msg), -1);
	cr_assert(tr.damaged);
	cr_assert(tr.has_start);
	cr_assert_eq(tr.nsamples, 10, "%zu samples", tr.nsamples);
	cr_assert(str_starts_with(msg, "stagebench: error: bad.zst:12: corrupt zstd data"),
		  "message: %s", msg);
	free(msg);
	trace_release(&tr);
	free(data);
}

Test(traces, flipped_bytes_in_zstd_frames_never_yield_wrong_records, .timeout = 120)
{
	size_t len, frame_end[4];
	char *data = three_frames(&len, frame_end);
	char *copy = xmalloc(len);
	fflush(stderr);
	int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 2);
	for (int round = 0; round < 1500; round++) {
		memcpy(copy, data, len);
		size_t at = rnd() % len;
		copy[at] ^= (char)(1u << (rnd() % 8));
		struct trace tr;
		int rc = trace_read_mem("flip.zst", copy, len, &tr);
		cr_assert(rc == 0 || rc == -1);
		cr_assert_leq(tr.nsamples, 30);
		/* whatever comes back is what was written: damage is never read as data */
		for (size_t i = 0; i < tr.nsamples; i++) {
			cr_assert_eq(tr.samples[i].t, (double)i, "flip at %zu: sample %zu", at, i);
			cr_assert_eq(tr.samples[i].rss, i, "flip at %zu: sample %zu", at, i);
		}
		trace_release(&tr);
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(devnull);
	free(copy);
	free(data);
}

Test(traces, writer_reports_a_failed_write)
{
	struct stderr_capture c;
	stderr_capture_begin(&c);
	struct trace_writer *w = trace_writer_open("/dev/full");
	cr_assert_not_null(w);
	struct trace_start st;
	memset(&st, 0, sizeof(st));
	int rc_start = trace_writer_start(w, &st);
	struct trace_sample s;
	memset(&s, 0, sizeof(s));
	int rc_sample = trace_writer_sample(w, &s);
	int rc_close = trace_writer_close(w);
	struct trace_writer *none = trace_writer_open("/nonexistent-dir/x.jsonl.zst");
	char *msg = stderr_capture_end(&c);
	cr_assert_eq(rc_start, -1);
	cr_assert_eq(rc_sample, -1, "a writer that failed keeps failing");
	cr_assert_eq(rc_close, -1);
	cr_assert_null(none);
	cr_assert_not_null(strstr(msg, "cannot write trace '/dev/full'"), "%s", msg);
	cr_assert_not_null(strstr(msg, "cannot create '/nonexistent-dir/x.jsonl.zst'"), "%s",
			   msg);
	free(msg);
}

Test(traces, malformed_line_names_file_and_line)
{
	const char *in = "{\"type\":\"start\"}\n"
			 "{\"type\":\"sample\",\"t\":0.5,\"footprint\":1}\n"
			 "\n"
			 "{\"type\":\"sample\",\"t\":1.0,\"footprint\":2\n"
			 "{\"type\":\"sample\",\"t\":1.5,\"footprint\":3}\n";
	struct trace tr;
	char *msg;
	cr_assert_eq(read_mem_capturing("bad.jsonl", in, strlen(in), &tr, &msg), -1);
	cr_assert(str_starts_with(msg, "stagebench: error: bad.jsonl:4: malformed line"),
		  "message: %s", msg);
	cr_assert_eq(strchr(msg, '\n'), msg + strlen(msg) - 1, "one line: %s", msg);
	cr_assert(tr.damaged);
	cr_assert(tr.has_start);
	cr_assert_eq(tr.nsamples, 1);
	free(msg);
	trace_release(&tr);
}

/* A mapped figure above the machine's memory (the start record's host.memory)
 * cannot be true: refused with the file and line, on the fast path (the
 * writer's own lines) and the general one; at the limit it is read. */
Test(traces, mapped_above_machine_memory_is_refused)
{
	static const char *const lines[] = {
		"{\"type\":\"sample\",\"t\":1,\"footprint\":1,\"mapped\":1000001}",
		"{\"t\":1,\"type\":\"sample\",\"mapped\":1000001}",
		"{\"type\":\"sample\",\"t\":1,\"mapped\":1.000001e6}",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char *in = xasprintf("{\"type\":\"start\",\"host\":{\"memory\":1000000}}\n"
				     "{\"type\":\"sample\",\"t\":0.5,\"mapped\":1000000}\n%s\n",
				     lines[i]);
		struct trace tr;
		char *msg;
		cr_assert_eq(read_mem_capturing("m.jsonl", in, strlen(in), &tr, &msg), -1,
			     "case %zu read cleanly", i);
		cr_assert_not_null(strstr(msg, "m.jsonl:3: sample \"mapped\" is 1000001 bytes, "
					       "above the machine's memory (1000000 bytes)"),
				   "case %zu: %s", i, msg);
		cr_assert_eq(tr.nsamples, 1);
		cr_assert_eq(tr.samples[0].mapped, 1000000);
		cr_assert(tr.samples[0].fields & SF_MAPPED);
		free(msg);
		free(in);
		trace_release(&tr);
	}
}

Test(traces, wrong_types_are_errors_not_crashes)
{
	static const struct {
		const char *line;
		const char *want;
	} cases[] = {
		{ "{\"type\":\"sample\",\"t\":\"1.0\"}", ":2: sample \"t\" is not a number" },
		{ "{\"type\":\"sample\",\"footprint\":1}", ":2: sample has no \"t\"" },
		{ "{\"type\":\"sample\",\"t\":1,\"footprint\":\"big\"}",
		  ":2: sample \"footprint\" is not a byte count" },
		{ "{\"type\":\"sample\",\"t\":1,\"rss\":-5}", ":2: sample \"rss\" is not a byte count" },
		{ "{\"type\":\"sample\",\"t\":1,\"gpu\":18446744073709551616}", ":2: malformed line" },
		{ "{\"type\":\"sample\",\"t\":1e400}", ":2: malformed line" },
		{ "{\"type\":\"sample\",\"t\":1,\"level\":[1]}", ":2: sample \"level\" is not a number" },
		{ "{\"type\":\"sample\",\"t\":1,\"procs\":1.5}",
		  ":2: sample \"procs\" is not a count" },
		{ "{\"type\":\"sample\",\"t\":1,\"mapped\":-4096}",
		  ":2: sample \"mapped\" is not a byte count" },
		{ "{\"type\":\"sample\",\"t\":1,\"footprint\":1,\"mapped\":NaN}", ":2: malformed line" },
		{ "{\"type\":\"sample\",\"t\":1,\"mapped\":\"NaN\"}",
		  ":2: sample \"mapped\" is not a byte count" },
		{ "{\"type\":\"sample\",\"t\":1,\"majflt\":-1}",
		  ":2: sample \"majflt\" is not a count" },
		{ "{\"type\":\"event\",\"t\":1}", ":2: event has no \"kind\"" },
		{ "{\"type\":\"event\",\"kind\":3,\"t\":1}", ":2: event \"kind\" is not a string" },
		{ "{\"type\":\"event\",\"kind\":\"stage\"}", ":2: event has no \"t\"" },
		{ "{\"type\":\"event\",\"kind\":\"stage\",\"t\":null}", ":2: event \"t\" is not a number" },
		{ "{\"t\":1}", ":2: record has no \"type\"" },
		{ "{\"type\":7}", ":2: record \"type\" is not a string" },
		{ "[1,2]", ":2: malformed line: not a JSON object" },
		{ "\x01\x02\xff\xfe garbage", ":2: malformed line" },
		{ "{\"type\":\"sample\",\"t\":1,\"x\":\"\xff\"}", ":2: malformed line" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *in = xasprintf("{\"type\":\"start\"}\n%s\n", cases[i].line);
		struct trace tr;
		char *msg;
		cr_assert_eq(read_mem_capturing("w.jsonl", in, strlen(in), &tr, &msg), -1,
			     "case %zu read cleanly: %s", i, cases[i].line);
		char *want = xasprintf("w.jsonl%s", cases[i].want);
		cr_assert_not_null(strstr(msg, want), "case %zu: %s\nwant: %s", i, msg, want);
		cr_assert(tr.damaged);
		free(want);
		free(msg);
		free(in);
		trace_release(&tr);
	}
}

Test(traces, huge_and_odd_numbers_read_exactly)
{
	const char *in = "{\"type\":\"start\",\"seed\":-9223372036854775808}\n"
			 "{\"type\":\"sample\",\"t\":0.1,\"gpu\":18446744073709551615,"
			 "\"footprint\":1.5e9,\"level\":-0.0,\"rss\":0}\n"
			 "{ \"type\" : \"sample\" , \"t\" : 2E-3 , \"swapped\" : 12 }\r\n"
			 "{\"type\":\"sample\",\"t\":123456789.123456789,\"extra\":[{}]}\n";
	struct trace tr;
	char *msg;
	cr_assert_eq(read_mem_capturing("n.jsonl", in, strlen(in), &tr, &msg), 0, "%s", msg);
	cr_assert_eq(tr.start.seed, INT64_MIN);
	cr_assert_eq(tr.nsamples, 3);
	cr_assert_eq(tr.samples[0].t, 0.002);
	cr_assert_eq(tr.samples[0].swapped, 12);
	cr_assert_eq(tr.samples[1].gpu, 18446744073709551615ull);
	cr_assert_eq(tr.samples[1].footprint, 1500000000ull);
	cr_assert_eq(tr.samples[1].fields, SF_GPU | SF_FOOTPRINT | SF_LEVEL | SF_RSS);
	cr_assert_eq(tr.samples[2].t, 123456789.123456789);
	free(msg);
	trace_release(&tr);
}

/* A file with a start record, then one line of n bytes of junk with no newline
 * yet, or a newline at the end when `ended`. */
static char *long_line_text(size_t n, bool ended, size_t *len)
{
	static const char start[] = "{\"type\":\"start\",\"utc\":\"x\"}\n";
	char *t = xmalloc(sizeof(start) + n + 1);
	memcpy(t, start, sizeof(start) - 1);
	memset(t + sizeof(start) - 1, 'x', n);
	*len = sizeof(start) - 1 + n;
	if (ended)
		t[(*len)++] = '\n';
	return t;
}

Test(traces, a_line_longer_than_the_limit_is_an_error_naming_file_and_line, .timeout = 60)
{
	char *dir = tmpdir();
	for (int zst = 0; zst < 2; zst++)
		for (int ended = 0; ended < 2; ended++) {
			size_t len;
			char *text = long_line_text(TRACE_MAX_LINE + 1, ended, &len);
			char *path = xasprintf("%s/long%s", dir, zst ? ".jsonl.zst" : ".jsonl");
			if (zst) { /* a few KiB of zstd holding a 4 MiB line */
				size_t cap = ZSTD_compressBound(len);
				char *z = xmalloc(cap);
				size_t zn = ZSTD_compress(z, cap, text, len, 3);
				cr_assert(!ZSTD_isError(zn) && zn < 65536);
				cr_assert_eq(write_file(path, z, zn), 0);
				free(z);
			} else {
				cr_assert_eq(write_file(path, text, len), 0);
			}
			struct trace tr;
			char *msg;
			cr_assert_eq(read_capturing(path, &tr, &msg), -1);
			char *want = xasprintf("%s:2: line longer than 4 MiB", path);
			cr_assert_not_null(strstr(msg, want), "got: %s", msg);
			cr_assert(tr.damaged);
			cr_assert(tr.has_start, "the records before it are kept");
			free(want);
			free(msg);
			trace_release(&tr);
			/* one byte shorter (the limit itself) is not refused for its length */
			free(text);
			text = long_line_text(TRACE_MAX_LINE, true, &len);
			cr_assert_eq(write_file(path, text, len), 0);
			cr_assert_eq(read_capturing(path, &tr, &msg), -1);
			cr_assert_null(strstr(msg, "longer than"), "%s", msg);
			cr_assert_not_null(strstr(msg, ":2: malformed line"), "%s", msg);
			free(msg);
			trace_release(&tr);
			free(text);
			free(path);
		}
	rm_rf(dir);
	free(dir);
}

Test(traces, the_writer_does_not_write_a_record_longer_than_a_line_may_be)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/w.jsonl.zst", dir);
	struct stderr_capture c;
	stderr_capture_begin(&c);
	struct trace_writer *w = trace_writer_open(path);
	struct trace_start st = { .utc = "x" };
	cr_assert_eq(trace_writer_start(w, &st), 0);
	struct trace_event ev = TRACE_EVENT_INIT;
	ev.kind = EV_MARK;
	ev.t = 1;
	ev.note = xmalloc(TRACE_MAX_LINE + 1);
	memset(ev.note, 'n', TRACE_MAX_LINE);
	ev.note[TRACE_MAX_LINE] = '\0';
	cr_assert_eq(trace_writer_event(w, &ev), 0, "dropped, not a failure");
	ev.note[10] = '\0';
	cr_assert_eq(trace_writer_event(w, &ev), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	char *msg = stderr_capture_end(&c);
	cr_assert_not_null(strstr(msg, "event record of 4194"), "%s", msg);
	cr_assert_not_null(strstr(msg, "not written"), "%s", msg);
	struct trace tr;
	cr_assert_eq(trace_read(path, &tr), 0, "the trace stays readable");
	cr_assert_eq(tr.nevents, 1);
	cr_assert_str_eq(tr.events[0].note, "nnnnnnnnnn");
	trace_release(&tr);
	free(ev.note);
	free(msg);
	free(path);
	rm_rf(dir);
	free(dir);
}

Test(traces, a_fifo_or_a_device_is_refused_at_once, .timeout = 20)
{
	char *dir = tmpdir();
	char *fifo = xasprintf("%s/fifo.trace.jsonl", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	static const char *const not_files[] = { NULL, "/dev/zero", "/dev/null" };
	for (size_t i = 0; i < sizeof(not_files) / sizeof(not_files[0]); i++) {
		const char *path = not_files[i] ? not_files[i] : fifo;
		struct trace tr;
		char *msg;
		cr_assert_eq(read_capturing(path, &tr, &msg), -1);
		char *want = xasprintf("cannot read '%s': not a regular file", path);
		cr_assert_not_null(strstr(msg, want), "got: %s", msg);
		free(want);
		free(msg);
		trace_release(&tr);
	}
	free(fifo);
	rm_rf(dir);
	free(dir);
}

Test(traces, missing_start_record_is_an_error_naming_the_file)
{
	const char *in = "{\"type\":\"sample\",\"t\":0.5,\"footprint\":1}\n";
	struct trace tr;
	char *msg;
	cr_assert_eq(read_mem_capturing("nostart.jsonl", in, strlen(in), &tr, &msg), -1);
	cr_assert(str_starts_with(msg, "stagebench: error: nostart.jsonl: no start record"),
		  "message: %s", msg);
	cr_assert_eq(tr.nsamples, 1);
	cr_assert(tr.damaged);
	free(msg);
	trace_release(&tr);
}

Test(traces, empty_file_is_an_error)
{
	struct trace tr;
	char *msg;
	cr_assert_eq(read_mem_capturing("empty.jsonl", "", 0, &tr, &msg), -1);
	cr_assert(str_starts_with(msg, "stagebench: error: empty.jsonl: empty file"), "%s", msg);
	free(msg);
	trace_release(&tr);
	cr_assert_eq(read_mem_capturing("blank.jsonl", "\n  \n", 4, &tr, &msg), -1);
	cr_assert(str_starts_with(msg, "stagebench: error: blank.jsonl: no start record"), "%s", msg);
	free(msg);
	trace_release(&tr);
}

Test(traces, unknown_format_version_is_refused)
{
	static const char *const formats[] = { "stagebench/2", "foo" };
	for (size_t i = 0; i < 2; i++) {
		char *in = xasprintf("{\"type\":\"start\",\"format\":\"%s\"}\n"
				     "{\"type\":\"sample\",\"t\":0.5,\"footprint\":1}\n", formats[i]);
		struct trace tr;
		char *msg;
		cr_assert_eq(read_mem_capturing("v.jsonl", in, strlen(in), &tr, &msg), -1);
		char *want = xasprintf("stagebench: error: v.jsonl:1: unknown trace format '%s' (this "
				       "stagebench reads stagebench/1 and stageload traces)\n",
				       formats[i]);
		cr_assert_str_eq(msg, want);
		cr_assert_not(tr.has_start);
		cr_assert_eq(tr.nsamples, 0);
		free(want);
		free(msg);
		free(in);
		trace_release(&tr);
	}
}

Test(traces, records_are_sorted_by_t_stably)
{
	const char *in = "{\"type\":\"start\"}\n"
			 "{\"type\":\"sample\",\"t\":2,\"rss\":20}\n"
			 "{\"type\":\"sample\",\"t\":1,\"rss\":10}\n"
			 "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"b\",\"t\":5}\n"
			 "{\"type\":\"end\"}\n"
			 "{\"type\":\"sample\",\"t\":1,\"rss\":11}\n"
			 "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"a\",\"t\":4}\n"
			 "{\"type\":\"event\",\"kind\":\"mark\",\"note\":\"second at 5\",\"t\":5}\n"
			 "{\"type\":\"sample\",\"t\":3,\"rss\":30}";
	struct trace tr;
	char *msg;
	cr_assert_eq(read_mem_capturing("s.jsonl", in, strlen(in), &tr, &msg), 0, "%s", msg);
	cr_assert_eq(tr.nsamples, 4);
	static const uint64_t rss[] = { 10, 11, 20, 30 };
	for (int i = 0; i < 4; i++)
		cr_assert_eq(tr.samples[i].rss, rss[i], "sample %d", i);
	cr_assert_eq(tr.nevents, 3);
	assert_str(tr.events[0].stage, "a", "first event");
	assert_str(tr.events[1].stage, "b", "second event");
	cr_assert_eq(tr.events[2].kind, EV_MARK);
	cr_assert_eq(tr.events[1].line, 4);
	cr_assert_eq(tr.events[0].line, 7);
	cr_assert(tr.has_end);
	free(msg);
	trace_release(&tr);
}

/* ---- stageload's traces --------------------------------------------------- */

static void read_fixture(const char *rel, struct trace *tr)
{
	char *path = xasprintf("%s/stageload/%s", fixtures_dir(), rel);
	char *msg;
	int rc = read_capturing(path, tr, &msg);
	cr_assert_eq(rc, 0, "%s: %s", path, msg);
	cr_assert_str_empty(msg);
	free(msg);
	free(path);
	cr_assert(tr->has_start);
	cr_assert_null(tr->start.format);
	for (size_t i = 1; i < tr->nsamples; i++)
		cr_assert_leq(tr->samples[i - 1].t, tr->samples[i].t);
	for (size_t i = 1; i < tr->nevents; i++)
		cr_assert_leq(tr->events[i - 1].t, tr->events[i].t);
	for (size_t i = 0; i < tr->nsamples; i++)
		cr_assert_eq(tr->samples[i].fields, SF_FOOTPRINT | SF_SWAP_USED | SF_LEVEL);
}

/* Counts from grep -c '"type":"sample"' / '"type":"event"' / '"type":"end"'. */
Test(traces, stageload_fixtures_read_with_the_right_counts)
{
	static const struct {
		const char *file, *mode;
		size_t samples, events;
		bool end;
		double first_t, last_t;
	} fx[] = {
		{ "2026-10-06-qwen-image/eager-1.trace.jsonl", "eager", 235, 4, true, 0.001, 118.411 },
		{ "2026-10-06-qwen-image/first-attempt/eager-1.trace.jsonl", "eager", 37, 0, false,
		  0.0, 18.119 },
		{ "2026-10-06-qwen-image/staged-1.trace.jsonl", "staged", 236, 7, true, 0.0, 124.276 },
		{ "2026-10-06-qwen-image/staged-2.trace.jsonl", "staged", 179, 7, true, 0.0, 94.261 },
		{ "2026-10-08-qwen-image-offload/offload-1.trace.jsonl", "offload", 206, 4, false,
		  0.001, 105.276 },
		{ "2026-10-05/showcase/moss_native.trace.jsonl", "staged", 642, 27, true, 0.0, 415.7 },
	};
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		struct trace tr;
		read_fixture(fx[i].file, &tr);
		cr_assert_eq(tr.nsamples, fx[i].samples, "%s: %zu samples", fx[i].file, tr.nsamples);
		cr_assert_eq(tr.nevents, fx[i].events, "%s: %zu events", fx[i].file, tr.nevents);
		cr_assert_eq(tr.has_end, fx[i].end, "%s: end", fx[i].file);
		assert_str(tr.start.mode, fx[i].mode, "mode");
		cr_assert(tr.start.has_seed && tr.start.seed == 7);
		cr_assert_eq(tr.start.interval, 0.5);
		cr_assert_eq(tr.samples[0].t, fx[i].first_t);
		cr_assert_eq(tr.samples[tr.nsamples - 1].t, fx[i].last_t);
		if (tr.has_end) { /* stageload's bare {"type":"end"} */
			cr_assert_not(tr.end.has_exit);
			cr_assert_eq(tr.end.stopped_by, STOPPED_NONE);
		}
		trace_release(&tr);
	}
}

Test(traces, stageload_moss_native_maps_port_commit_and_keeps_reload)
{
	struct trace tr;
	read_fixture("2026-10-05/showcase/moss_native.trace.jsonl", &tr);
	assert_str(tr.start.commit, "0be9e69a729432323dfb60a418801e5e9e7a1437", "commit");
	cr_assert(tr.start.has_dirty && tr.start.dirty);
	assert_str(tr.start.utc, "2026-10-05T07:35:20+00:00", "utc");
	cr_assert_null(strstr(tr.start.extra_json, "port_commit"));
	cr_assert_not_null(strstr(tr.start.extra_json, "\"pipeline\":\"1024_cascade\""));
	size_t reloads = 0, loads = 0, releases = 0, stages = 0;
	for (size_t i = 0; i < tr.nevents; i++) {
		const struct trace_event *ev = &tr.events[i];
		reloads += ev->kind == EV_RELOAD;
		loads += ev->kind == EV_LOAD;
		releases += ev->kind == EV_RELEASE;
		stages += ev->kind == EV_STAGE;
		if (ev->kind == EV_RELOAD) {
			assert_str(ev->name, "shape_slat_decoder", "reload name");
			assert_str(ev->stage, "decode", "reload stage");
			cr_assert(ev->has_nbytes && ev->nbytes == 948598492ull);
			cr_assert(ev->has_seconds && ev->seconds == 1.506);
			cr_assert_eq(ev->t, 243.977);
		}
	}
	/* grep -c '"kind":"reload"' etc. */
	cr_assert_eq(reloads, 1);
	cr_assert_eq(loads, 7);
	cr_assert_eq(releases, 10);
	cr_assert_eq(stages, 9);
	assert_str(tr.events[0].stage, "setup", "first stage");
	trace_release(&tr);
}

Test(traces, stageload_trace_survives_a_write_and_read)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/copy.jsonl.zst", dir);
	struct trace a, b;
	read_fixture("2026-10-06-qwen-image/staged-1.trace.jsonl", &a);
	struct trace_writer *w = trace_writer_open(path);
	cr_assert_eq(trace_writer_start(w, &a.start), 0);
	for (size_t i = 0; i < a.nsamples; i++)
		cr_assert_eq(trace_writer_sample(w, &a.samples[i]), 0);
	for (size_t i = 0; i < a.nevents; i++)
		cr_assert_eq(trace_writer_event(w, &a.events[i]), 0);
	cr_assert_eq(trace_writer_end(w, &a.end), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_eq(trace_read(path, &b), 0);
	assert_str(b.start.format, TRACE_FORMAT, "format");
	assert_str(b.start.extra_json, a.start.extra_json, "extra");
	cr_assert_eq(b.nsamples, a.nsamples);
	for (size_t i = 0; i < a.nsamples; i++) {
		cr_assert_eq(b.samples[i].t, a.samples[i].t);
		cr_assert_eq(b.samples[i].footprint, a.samples[i].footprint);
		cr_assert_eq(b.samples[i].level, a.samples[i].level);
	}
	cr_assert_eq(b.nevents, a.nevents);
	for (size_t i = 0; i < a.nevents; i++)
		assert_event_eq(&b.events[i], &a.events[i]);
	trace_release(&a);
	trace_release(&b);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* ---- probe lines ------------------------------------------------------------ */

Test(traces, probe_line_converts_mono_to_t)
{
	const char *line = "{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"decode\",\"mono\":8123.417}\n";
	struct trace_event ev;
	const char *err = NULL;
	cr_assert_eq(trace_parse_probe_line(line, strlen(line), 8000.0, &ev, &err), 0, "%s", err);
	cr_assert_eq(ev.kind, EV_STAGE);
	assert_str(ev.kind_name, "stage", "kind_name");
	assert_str(ev.stage, "decode", "stage");
	cr_assert_float_eq(ev.t, 123.417, 1e-9);
	cr_assert_null(ev.extra_json, "mono is consumed, not kept: %s", ev.extra_json);
	trace_event_release(&ev);
}

Test(traces, probe_line_without_type_parses_every_typed_field)
{
	const char *line =
		"{\"kind\":\"latent\",\"name\":\"x\",\"stage\":\"shape_512\",\"sha256\":\"ab\","
		"\"dtype\":\"float16\",\"shape\":[2,3],\"file\":\"latents/x.npy\",\"mono\":10.5,"
		"\"nbytes\":12,\"seconds\":0.5,\"metric\":\"m\",\"device\":\"mps\",\"bytes\":7,"
		"\"max_bytes\":9,\"from\":1.25,\"action\":\"a\",\"reason\":\"r\",\"note\":\"n\","
		"\"step\":3,\"extra\":{\"k\":[true]}}";
	struct trace_event ev;
	const char *err = NULL;
	cr_assert_eq(trace_parse_probe_line(line, strlen(line), 0.5, &ev, &err), 0, "%s", err);
	cr_assert_eq(ev.kind, EV_LATENT);
	cr_assert_eq(ev.t, 10.0);
	assert_str(ev.name, "x", "name");
	assert_str(ev.sha256, "ab", "sha256");
	assert_str(ev.dtype, "float16", "dtype");
	cr_assert_eq(ev.ndim, 2);
	cr_assert_eq(ev.shape[0], 2);
	cr_assert_eq(ev.shape[1], 3);
	assert_str(ev.file, "latents/x.npy", "file");
	cr_assert(ev.has_nbytes && ev.nbytes == 12);
	cr_assert(ev.has_seconds && ev.seconds == 0.5);
	assert_str(ev.metric, "m", "metric");
	assert_str(ev.device, "mps", "device");
	cr_assert(ev.has_bytes && ev.bytes == 7);
	cr_assert(ev.has_max_bytes && ev.max_bytes == 9);
	cr_assert(ev.has_from && ev.from == 1.25);
	assert_str(ev.action, "a", "action");
	assert_str(ev.reason, "r", "reason");
	assert_str(ev.note, "n", "note");
	assert_str(ev.extra_json, "\"step\":3,\"extra\":{\"k\":[true]}", "extra");

	/* written back, the extra keys come out verbatim */
	char *dir = tmpdir();
	char *path = xasprintf("%s/p.jsonl", dir);
	struct trace_writer *w = trace_writer_open(path);
	struct trace_start st;
	memset(&st, 0, sizeof(st));
	cr_assert_eq(trace_writer_start(w, &st), 0);
	cr_assert_eq(trace_writer_event(w, &ev), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	size_t len;
	char *data = slurp(path, &len);
	cr_assert_not_null(strstr(data, "{\"type\":\"event\",\"kind\":\"latent\",\"t\":10.0000,"
					"\"stage\":\"shape_512\",\"name\":\"x\",\"nbytes\":12,"
					"\"seconds\":0.5,\"sha256\":\"ab\",\"dtype\":\"float16\","
					"\"shape\":[2,3],\"file\":\"latents/x.npy\",\"metric\":\"m\","
					"\"device\":\"mps\",\"bytes\":7,\"max_bytes\":9,\"from\":1.2500,"
					"\"action\":\"a\",\"reason\":\"r\",\"note\":\"n\",\"step\":3,"
					"\"extra\":{\"k\":[true]}}\n"),
			  "%s", data);
	free(data);
	free(path);
	rm_rf(dir);
	free(dir);
	trace_event_release(&ev);
}

Test(traces, probe_line_with_t_and_no_mono_keeps_t)
{
	const char *line = "{\"kind\":\"mark\",\"note\":\"hi\",\"t\":3.25}";
	struct trace_event ev;
	const char *err = NULL;
	cr_assert_eq(trace_parse_probe_line(line, strlen(line), 100, &ev, &err), 0, "%s", err);
	cr_assert_eq(ev.t, 3.25);
	cr_assert_eq(ev.kind, EV_MARK);
	trace_event_release(&ev);
}

Test(traces, null_known_keys_are_absent_and_unknown_nulls_are_kept)
{
	const char *line = "{\"type\":\"event\",\"kind\":\"load\",\"name\":\"vae\",\"stage\":null,"
			   "\"seconds\":null,\"nbytes\":null,\"shape\":null,\"mono\":2,\"why\":null}";
	struct trace_event ev;
	const char *err = NULL;
	cr_assert_eq(trace_parse_probe_line(line, strlen(line), 1, &ev, &err), 0, "%s", err);
	cr_assert_null(ev.stage);
	cr_assert_not(ev.has_seconds);
	cr_assert_not(ev.has_nbytes);
	cr_assert_eq(ev.ndim, -1);
	assert_str(ev.extra_json, "\"why\":null", "extra");
	trace_event_release(&ev);

	/* a shape with more dimensions than EVENT_MAX_DIMS is kept verbatim */
	line = "{\"kind\":\"latent\",\"shape\":[1,2,3,4,5,6,7,8,9,10],\"mono\":1}";
	cr_assert_eq(trace_parse_probe_line(line, strlen(line), 0, &ev, &err), 0, "%s", err);
	cr_assert_eq(ev.ndim, -1);
	assert_str(ev.extra_json, "\"shape\":[1,2,3,4,5,6,7,8,9,10]", "extra");
	trace_event_release(&ev);
	line = "{\"kind\":\"latent\",\"shape\":[1,\"x\"],\"mono\":1}";
	cr_assert_eq(trace_parse_probe_line(line, strlen(line), 0, &ev, &err), 0, "%s", err);
	cr_assert_eq(ev.ndim, -1);
	assert_str(ev.extra_json, "\"shape\":[1,\"x\"]", "extra");
	trace_event_release(&ev);

	const char *in = "{\"type\":\"start\",\"mode\":null,\"seed\":null,\"stop_at\":null}\n"
			 "{\"type\":\"end\",\"exit\":null,\"reason\":null}\n";
	struct trace tr;
	char *msg;
	cr_assert_eq(read_mem_capturing("null.jsonl", in, strlen(in), &tr, &msg), 0, "%s", msg);
	cr_assert_null(tr.start.mode);
	cr_assert_not(tr.start.has_seed);
	assert_str(tr.start.extra_json, "\"stop_at\":null", "start extra");
	cr_assert_not(tr.end.has_exit);
	cr_assert_null(tr.end.reason);
	cr_assert_null(tr.end.extra_json);
	free(msg);
	trace_release(&tr);
}

Test(traces, bad_probe_lines_are_rejected_with_a_reason)
{
	static const struct {
		const char *line, *why;
	} cases[] = {
		{ "not json", "not valid JSON" },
		{ "[1]", "not a JSON object" },
		{ "{\"type\":\"sample\",\"kind\":\"stage\",\"mono\":1}", "not an event record" },
		{ "{\"type\":\"event\",\"mono\":1}", "event has no \"kind\"" },
		{ "{\"kind\":\"stage\",\"stage\":\"a\"}", "event has no \"mono\"" },
		{ "{\"kind\":\"stage\",\"mono\":\"soon\"}", "event \"mono\" is not a number" },
		{ "{\"kind\":\"stage\",\"mono\":1", "not valid JSON" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_event ev;
		const char *err = NULL;
		cr_assert_eq(trace_parse_probe_line(cases[i].line, strlen(cases[i].line), 0, &ev, &err),
			     -1, "case %zu accepted", i);
		cr_assert_str_eq(err, cases[i].why);
		trace_event_release(&ev);
	}
}

Test(traces, event_kind_names_round_trip)
{
	for (int k = EV_STAGE; k <= EV_GUARD; k++) {
		const char *name = event_kind_name((enum event_kind)k);
		cr_assert_not_null(name);
		cr_assert_eq(event_kind_from_name(name), (enum event_kind)k);
	}
	cr_assert_null(event_kind_name(EV_OTHER));
	cr_assert_eq(event_kind_from_name("nonsense"), EV_OTHER);
	cr_assert_eq(event_kind_from_name(NULL), EV_OTHER);
	trace_event_release(NULL);
	trace_release(NULL);
	cr_assert_eq(trace_writer_close(NULL), 0);
}

/* ---- the schema ----------------------------------------------------------- */

Test(traces, stopped_by_names_round_trip_through_an_end_record)
{
	static const enum stopped_by all[] = { STOPPED_NONE, STOPPED_GUARD, STOPPED_SIGNAL };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		enum stopped_by by = STOPPED_NONE;
		const char *name = stopped_by_name(all[i]);
		cr_assert_eq(name == NULL, all[i] == STOPPED_NONE);
		if (name) {
			cr_assert(stopped_by_parse(name, &by));
			cr_assert_eq(by, all[i]);
		}
		char *dir = tmpdir();
		char *path = xasprintf("%s/t.jsonl", dir);
		struct trace_writer *w = trace_writer_open(path);
		struct trace_start st = { .utc = "x" };
		struct trace_end end = { .stopped_by = all[i] };
		cr_assert_eq(trace_writer_start(w, &st), 0);
		cr_assert_eq(trace_writer_end(w, &end), 0);
		cr_assert_eq(trace_writer_close(w), 0);
		struct trace tr;
		cr_assert_eq(trace_read(path, &tr), 0);
		cr_assert_eq(tr.end.stopped_by, all[i]);
		cr_assert_null(tr.end.extra_json);
		trace_release(&tr);
		free(path);
		rm_rf(dir);
		free(dir);
	}
	enum stopped_by by = STOPPED_GUARD;
	cr_assert_not(stopped_by_parse("later", &by));
	cr_assert_not(stopped_by_parse(NULL, &by));
	cr_assert_eq(by, STOPPED_GUARD, "an unknown name leaves the value alone");
	cr_assert_null(stopped_by_name((enum stopped_by)99));
}

Test(traces, the_sample_schema_is_consistent_and_documented)
{
	char *path = xasprintf("%s/../../traces/FORMAT.md", fixtures_dir());
	size_t len;
	char *doc = slurp(path, &len);
	unsigned seen = 0;
	for (size_t i = 0; i < SAMPLE_NFIELDS; i++) {
		const struct sample_field_info *f = &trace_sample_fields[i];
		cr_assert_eq(strlen(f->key), f->len);
		cr_assert_eq(f->bit & (f->bit - 1), 0, "%s: one bit", f->key);
		cr_assert_eq(seen & f->bit, 0, "%s: its own bit", f->key);
		seen |= f->bit;
		cr_assert_eq(trace_sample_field(f->key, f->len), f);
		char *row = xasprintf("| `%s` |", f->key);
		cr_assert_not_null(strstr(doc, row), "FORMAT.md has no row for sample key %s", f->key);
		free(row);
	}
	cr_assert_null(trace_sample_field("t", 1), "t is not a field: every sample has it");
	cr_assert_null(trace_sample_field("footprin", 8));
	free(doc);
	free(path);
}

/* ---- garbage -------------------------------------------------------------- */

Test(traces, random_bytes_and_mutations_never_crash_the_reader, .timeout = 120)
{
	const char *fixture =
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"x\",\"labels\":{\"a\":\"b\"},"
		"\"command\":[\"a\"],\"host\":{\"cpus\":2},\"seed\":1}\n"
		"{\"type\":\"sample\",\"t\":0.5,\"footprint\":1,\"level\":3.5,\"procs\":2}\n"
		"{\"type\":\"event\",\"kind\":\"latent\",\"t\":1,\"shape\":[1,2],\"nbytes\":4}\n"
		"{\"type\":\"end\",\"exit\":0,\"signal\":0,\"stopped_by\":\"guard\",\"wall\":1}\n";
	size_t flen = strlen(fixture);
	char buf[1024];
	int clean = 0, damaged = 0;
	/* stderr to /dev/null: thousands of error lines are expected */
	fflush(stderr);
	int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 2);
	for (int round = 0; round < 6000; round++) {
		size_t len;
		if (round % 3 == 0) { /* pure junk, sometimes with a zstd magic */
			len = rnd() % sizeof(buf);
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)rnd();
			if (round % 2 && len >= 4)
				memcpy(buf, "\x28\xb5\x2f\xfd", 4);
		} else { /* the fixture with a few bytes changed */
			memcpy(buf, fixture, flen);
			len = flen;
			int flips = 1 + (int)(rnd() % 4);
			for (int f = 0; f < flips; f++) {
				static const char junk[] = "{}[]\":,0123456789.-eE\\ntfaul \x00\xff";
				buf[rnd() % len] = junk[rnd() % (sizeof(junk) - 1)];
			}
			if (rnd() % 4 == 0)
				len = rnd() % len;
		}
		struct trace tr;
		/* an exact-size heap copy: ASan sees any read past the end */
		char *exact = xmalloc(len ? len : 1);
		memcpy(exact, buf, len);
		int rc = trace_read_mem("junk", exact, len, &tr);
		free(exact);
		cr_assert(rc == 0 || rc == -1);
		/* damaged: refused, or read up to a cut (0) */
		cr_assert_eq(rc == -1 || tr.cut, tr.damaged, "rc %d damaged %d", rc, tr.damaged);
		cr_assert(!tr.cut || rc == 0);
		if (rc == 0)
			clean++;
		else
			damaged++;
		trace_release(&tr);
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(devnull);
	cr_assert_gt(clean, 0, "no mutation read cleanly");
	cr_assert_gt(damaged, 0, "no junk was refused");
}

/* A random JSON value of any type, sometimes nested. */
static void random_value(struct strbuf *sb, int depth)
{
	static const char *const atoms[] = {
		"0", "-1", "1.5", "1e308", "-1e-308", "18446744073709551615", "9223372036854775807",
		"-9223372036854775808", "99999999999999999999999", "null", "true", "false", "\"\"",
		"\"stage\"", "\"x\\u0000y\"", "\"\\ud800\"", "0.0001", "3", "[]", "{}",
	};
	unsigned r = (unsigned)(rnd() % 24);
	if (r < 20 || depth > 2) {
		strbuf_addstr(sb, atoms[rnd() % (sizeof(atoms) / sizeof(atoms[0]))]);
	} else if (r < 22) {
		int n = (int)(rnd() % 12);
		strbuf_addch(sb, '[');
		for (int i = 0; i < n; i++) {
			if (i)
				strbuf_addch(sb, ',');
			random_value(sb, depth + 1);
		}
		strbuf_addch(sb, ']');
	} else {
		strbuf_addstr(sb, "{\"a\":");
		random_value(sb, depth + 1);
		strbuf_addch(sb, '}');
	}
}

Test(traces, known_keys_with_random_types_never_crash_the_reader, .timeout = 120)
{
	static const char *const keys[] = {
		"t", "footprint", "rss", "swapped", "swap_used", "swap_total", "level", "gpu",
		"procs", "kind", "stage", "name", "nbytes", "seconds", "sha256", "dtype", "shape",
		"file", "metric", "device", "bytes", "max_bytes", "from", "action", "reason", "note",
		"format", "utc", "interval", "mode", "seed", "command", "host", "meter", "labels",
		"commit", "dirty", "port_commit", "port_dirty", "exit", "signal", "stopped_by",
		"wall", "cpu", "mono", "zzz",
	};
	static const char *const types[] = { "start", "sample", "event", "end" };
	static const char *const objkeys[] = { "host", "meter", "labels" };
	int clean = 0;
	fflush(stderr);
	int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 2);
	for (int round = 0; round < 3000; round++) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, "{\"type\":\"start\"}\n");
		int lines = 1 + (int)(rnd() % 4);
		for (int l = 0; l < lines; l++) {
			strbuf_addf(&sb, "{\"type\":\"%s\"", types[rnd() % 4]);
			int n = (int)(rnd() % 6);
			for (int i = 0; i < n; i++) {
				strbuf_addf(&sb, ",\"%s\":", keys[rnd() % (sizeof(keys) / sizeof(keys[0]))]);
				random_value(&sb, 0);
			}
			if (rnd() % 3 == 0) { /* a sub-object with random members */
				strbuf_addf(&sb, ",\"%s\":{\"os\":", objkeys[rnd() % 3]);
				random_value(&sb, 0);
				strbuf_addstr(&sb, ",\"cpus\":");
				random_value(&sb, 0);
				strbuf_addstr(&sb, ",\"memory\":");
				random_value(&sb, 0);
				strbuf_addch(&sb, '}');
			}
			strbuf_addstr(&sb, "}\n");
		}
		struct trace tr;
		char *exact = xmalloc(sb.len);
		memcpy(exact, sb.buf, sb.len);
		int rc = trace_read_mem("typed", exact, sb.len, &tr);
		free(exact);
		cr_assert(rc == 0 || rc == -1);
		clean += rc == 0;
		/* whatever was read writes back and reads again */
		if (rc == 0) {
			char path[] = "/tmp/sb-test-fuzz-XXXXXX";
			int fd = mkstemp(path);
			close(fd);
			struct trace_writer *w = trace_writer_open(path);
			cr_assert_eq(trace_writer_start(w, &tr.start), 0);
			for (size_t i = 0; i < tr.nsamples; i++)
				cr_assert_eq(trace_writer_sample(w, &tr.samples[i]), 0);
			for (size_t i = 0; i < tr.nevents; i++)
				cr_assert_eq(trace_writer_event(w, &tr.events[i]), 0);
			if (tr.has_end)
				cr_assert_eq(trace_writer_end(w, &tr.end), 0);
			cr_assert_eq(trace_writer_close(w), 0);
			struct trace again;
			int rc2 = trace_read(path, &again);
			unlink(path);
			cr_assert_eq(rc2, 0, "round %d: what was read does not read back:\n%s", round,
				     sb.buf);
			cr_assert_eq(again.nsamples, tr.nsamples);
			cr_assert_eq(again.nevents, tr.nevents);
			trace_release(&again);
		}
		trace_release(&tr);
		strbuf_release(&sb);
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(devnull);
	cr_assert_gt(clean, 0);
}

/* The writer formats t and level without printf; its text must be exactly
 * what "%.4f" (t) and the shortest round-trip form (level) give, including
 * values next to a rounding tie. */
Test(traces, sample_time_and_level_text_match_printf)
{
	char *dir = tmpdir();
	char *path = xasprintf("%s/fmt.jsonl", dir);
	struct trace_writer *w = trace_writer_open(path);
	cr_assert_not_null(w);
	struct trace_start st = { 0 };
	st.format = TRACE_FORMAT;
	cr_assert_eq(trace_writer_start(w, &st), 0);
	enum { N = 20000 };
	static double ts[N], levels[N];
	uint64_t x = 88172645463325252ULL;
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double base = (double)(x % 100000000) / 1e4;
		switch (i % 4) {
		case 0: ts[i] = base; break;
		case 1: ts[i] = base + 0.00005; break;          /* a tie in decimal */
		case 2: ts[i] = (double)(x % 4000000) / 997.0; break;
		default: ts[i] = (double)(x % 1000) * 1e-7; break; /* tiny */
		}
		levels[i] = (double)(x % 10001) / 100.0;
		struct trace_sample s = { 0 };
		s.t = ts[i];
		s.fields = SF_LEVEL;
		s.level = levels[i];
		cr_assert_eq(trace_writer_sample(w, &s), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);

	char *data;
	size_t len;
	cr_assert_eq(read_file(path, &data, &len), 0);
	char *line = strchr(data, '\n') + 1; /* skip start */
	for (int i = 0; i < N; i++) {
		char want[128], lv[40];
		snprintf(lv, sizeof(lv), "%.15g", levels[i]);
		if (strtod(lv, NULL) != levels[i])
			snprintf(lv, sizeof(lv), "%.17g", levels[i]);
		if (levels[i] == floor(levels[i]))
			snprintf(lv, sizeof(lv), "%.0f", levels[i]);
		snprintf(want, sizeof(want), "{\"type\":\"sample\",\"t\":%.4f,\"level\":%s}", ts[i], lv);
		char *nl = strchr(line, '\n');
		cr_assert_not_null(nl);
		*nl = '\0';
		cr_assert_str_eq(line, want, "sample %d (t=%.17g)", i, ts[i]);
		line = nl + 1;
	}
	free(data);
	free(path);
	rm_rf(dir);
	free(dir);
}

/* ---- versions (FORMAT.md "versions") ------------------------------------ */

static const char *version_of(const struct trace *tr, const char *name)
{
	for (size_t i = 0; i < tr->nversions; i++)
		if (!strcmp(tr->versions[i].key, name))
			return tr->versions[i].value;
	return NULL;
}

Test(traces, versions_events_give_the_runs_versions_first_value_kept)
{
	const char *text =
		"{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"staged\"}\n"
		"{\"type\":\"event\",\"kind\":\"versions\",\"t\":0.01,\"versions\":"
		"{\"python\":\"3.11.2\",\"implementation\":\"CPython\"}}\n"
		"{\"type\":\"sample\",\"t\":0.5,\"footprint\":100}\n"
		"{\"type\":\"event\",\"kind\":\"versions\",\"t\":1.5,\"versions\":{\"torch\":\"2.6.0\"}}\n"
		/* a name again, and values that are no version: ignored */
		"{\"type\":\"event\",\"kind\":\"versions\",\"t\":2,\"versions\":{\"torch\":\"9\","
		"\"diffusers\":\"0.30.0\",\"bad\":3,\"empty\":\"\",\"nothing\":null}}\n"
		/* a versions key on another kind is that event's own business */
		"{\"type\":\"event\",\"kind\":\"mark\",\"t\":2.5,\"note\":\"x\",\"versions\":{\"accelerate\":\"1\"}}\n"
		"{\"type\":\"event\",\"kind\":\"versions\",\"t\":3,\"versions\":\"not an object\"}\n";
	struct trace tr;
	cr_assert_eq(trace_read_mem("v", text, strlen(text), &tr), 0);
	cr_assert_eq(tr.nversions, 4);
	cr_assert_str_eq(tr.versions[0].key, "python");
	cr_assert_str_eq(tr.versions[0].value, "3.11.2");
	cr_assert_str_eq(tr.versions[1].key, "implementation");
	cr_assert_str_eq(version_of(&tr, "torch"), "2.6.0");
	cr_assert_str_eq(tr.versions[3].key, "diffusers");
	cr_assert_null(version_of(&tr, "accelerate"));
	cr_assert_null(version_of(&tr, "bad"));
	/* the events stay, their versions written back as they were */
	cr_assert_eq(tr.events[0].kind, EV_VERSIONS);
	cr_assert_str_eq(tr.events[0].extra_json,
			 "\"versions\":{\"python\":\"3.11.2\",\"implementation\":\"CPython\"}");
	cr_assert_str_eq(event_kind_name(EV_VERSIONS), "versions");
	trace_release(&tr);
	cr_assert_eq(tr.nversions, 0);
	cr_assert_null(tr.versions);
}

Test(traces, versions_from_the_start_record_and_stageloads_keys)
{
	/* the start's versions object first, then stageload's top-level keys, then events */
	const char *text =
		"{\"type\":\"start\",\"utc\":\"2026-10-06T10:36:12+00:00\",\"mode\":\"eager\","
		"\"torch\":\"2.14.0\",\"diffusers\":\"0.41.0.dev0\",\"steps\":20,"
		"\"versions\":{\"python\":\"3.12.1\",\"torch\":\"2.14.0+cpu\"}}\n"
		"{\"type\":\"event\",\"kind\":\"versions\",\"t\":1,\"versions\":{\"accelerate\":\"1.0\","
		"\"torch\":\"3\"}}\n";
	struct trace tr;
	cr_assert_eq(trace_read_mem("s", text, strlen(text), &tr), 0);
	cr_assert_eq(tr.nversions, 4);
	cr_assert_str_eq(tr.versions[0].key, "python");
	cr_assert_str_eq(version_of(&tr, "torch"), "2.14.0+cpu");
	cr_assert_str_eq(version_of(&tr, "diffusers"), "0.41.0.dev0");
	cr_assert_str_eq(version_of(&tr, "accelerate"), "1.0");
	/* the start's keys stay free-form metadata, written back */
	cr_assert(strstr(tr.start.extra_json, "\"torch\":\"2.14.0\""));
	cr_assert(strstr(tr.start.extra_json, "\"versions\":{"));
	trace_release(&tr);
}

Test(traces, a_trace_without_versions_has_none)
{
	const char *text = "{\"type\":\"start\",\"format\":\"stagebench/1\"}\n"
			   "{\"type\":\"sample\",\"t\":0.5,\"footprint\":100}\n";
	struct trace tr;
	cr_assert_eq(trace_read_mem("n", text, strlen(text), &tr), 0);
	cr_assert_eq(tr.nversions, 0);
	cr_assert_null(tr.versions);
	trace_release(&tr);
	char *path = xasprintf("%s/stageload/2026-10-06-qwen-image/staged-1.trace.jsonl", fixtures_dir());
	cr_assert_eq(trace_read(path, &tr), 0);
	cr_assert_eq(tr.nversions, 2);
	cr_assert_str_eq(version_of(&tr, "torch"), "2.14.0");
	cr_assert_str_eq(version_of(&tr, "diffusers"), "0.41.0.dev0");
	trace_release(&tr);
	free(path);
}

Test(traces, versions_are_capped)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"type\":\"start\",\"format\":\"stagebench/1\"}\n"
			   "{\"type\":\"event\",\"kind\":\"versions\",\"t\":1,\"versions\":{");
	for (int i = 0; i < 200; i++)
		strbuf_addf(&sb, "%s\"lib%d\":\"1.%d\"", i ? "," : "", i, i);
	strbuf_addstr(&sb, "}}\n");
	struct trace tr;
	cr_assert_eq(trace_read_mem("cap", sb.buf, sb.len, &tr), 0);
	cr_assert_eq(tr.nversions, TRACE_MAX_VERSIONS);
	cr_assert_str_eq(tr.versions[TRACE_MAX_VERSIONS - 1].value, "1.63");
	trace_release(&tr);
	strbuf_release(&sb);
}

Test(traces, a_probe_versions_line_is_a_versions_event)
{
	const char *line = "{\"type\":\"event\",\"kind\":\"versions\","
			   "\"versions\":{\"torch\":\"1.13.1\"},\"mono\":12.5}";
	struct trace_event ev;
	const char *why = NULL;
	cr_assert_eq(trace_parse_probe_line(line, strlen(line), 10.0, &ev, &why), 0, "%s", why);
	cr_assert_eq(ev.kind, EV_VERSIONS);
	cr_assert_float_eq(ev.t, 2.5, 1e-9);
	cr_assert_str_eq(ev.extra_json, "\"versions\":{\"torch\":\"1.13.1\"}");
	trace_event_release(&ev);
}
