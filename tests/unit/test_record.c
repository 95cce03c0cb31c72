/* test_record.c -- the record engine in-process on real commands, traces read back */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/parse.h"
#include "../../common/reader.h"
#include "../../common/util.h"
#include "../../runner/guard.h"
#include "../../runner/record/record.h"
#include "../../traces/trace.h"

#define MiB (1ULL << 20)

static char *eatmem(void)
{
	const char *h = getenv("SB_HELPERS");
	cr_assert_not_null(h, "SB_HELPERS must point at the helper programs");
	char *p = xasprintf("%s/eatmem", h);
	cr_assert_eq(access(p, X_OK), 0, "no helper %s", p);
	return p;
}

static char tmpdir[64];

static void make_tmp(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sb-record-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void drop_tmp(void)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	int rc = system(cmd);
	(void)rc;
	free(cmd);
}

static int record(char **argv, const char *trace, int64_t interval_ns, const struct guard_opts *g,
		  struct record_result *res)
{
	struct record_opts o = RECORD_OPTS_INIT;
	o.trace_path = trace;
	o.interval_ns = interval_ns;
	o.mode = "staged";
	o.status_line = false;
	o.summary = false;
	if (g) {
		o.guard = g;
		o.guarded = true;
	}
	return record_run(&o, argv, res);
}

static const struct trace_event *find_event(const struct trace *tr, enum event_kind k,
					    const char *stage)
{
	for (size_t i = 0; i < tr->nevents; i++)
		if (tr->events[i].kind == k &&
		    (!stage || (tr->events[i].stage && !strcmp(tr->events[i].stage, stage))))
			return &tr->events[i];
	return NULL;
}

Test(record, writes_start_samples_and_end_that_read_back, .init = make_tmp, .fini = drop_tmp,
     .timeout = 20)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/a.trace.jsonl.zst", tmpdir);
	char *argv[] = { em, "stage=setup", "alloc=50M", "sleep=200ms", "exit=5", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 20 * 1000000LL, NULL, &res), 0);
	cr_assert_eq(res.exit_code, 5);
	cr_assert(res.started);
	cr_assert_gt(res.nsamples, 3);

	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	cr_assert(tr.has_start);
	cr_assert_str_eq(tr.start.format, TRACE_FORMAT);
	cr_assert_str_eq(tr.start.mode, "staged");
	cr_assert_str_eq(tr.start.command[0], em);
	cr_assert_str_eq(tr.start.command[4], "exit=5");
	cr_assert_float_eq(tr.start.interval, 0.02, 1e-9);
	cr_assert_gt(tr.nsamples, 3);
	cr_assert(tr.has_end);
	cr_assert(tr.end.has_exit);
	cr_assert_eq(tr.end.exit_code, 5);
	cr_assert_eq(tr.end.stopped_by, STOPPED_NONE);
	cr_assert(tr.end.has_wall);
	cr_assert_geq(tr.end.wall, 0.2);
	const struct trace_event *st = find_event(&tr, EV_STAGE, "setup");
	cr_assert_not_null(st, "the probe's stage event was merged");
	cr_assert(st->t >= 0 && st->t < tr.end.wall + 0.1, "t converted from mono: %f", st->t);
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
	free(em);
}

Test(record, a_short_spike_shows_in_its_stage_peak, .init = make_tmp, .fini = drop_tmp,
     .timeout = 20)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/p.trace.jsonl.zst", tmpdir);
	char *go = xasprintf("%s/spiky.go", tmpdir);
	/* the spike waits until the window is open: its stage event is in the trace */
	char *argv[] = { "sh", "-c",
			 "( i=0; until zstdcat \"$2\" 2>/dev/null | grep -q '\"stage\":\"spiky\"'; do "
			 "i=$((i + 1)); [ $i -lt 1500 ] || break; sleep 0.02; done; : >\"$3\" ) & "
			 "exec \"$1\" stage=quiet stage=spiky wait=\"$3\" spike=200M/50ms stage=after",
			 "sh", em, trace, go, NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 1000 * 1000000LL, NULL, &res), 0);
	cr_assert_eq(res.exit_code, 0);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	const struct trace_event *spiky = find_event(&tr, EV_PEAK, "spiky");
	const struct trace_event *quiet = find_event(&tr, EV_PEAK, "quiet");
	cr_assert_not_null(spiky);
	cr_assert_not_null(quiet);
	cr_assert_str_eq(spiky->metric, "rss");
	cr_assert_geq(spiky->bytes, 200 * MiB, "spiky %llu quiet %llu",
		      (unsigned long long)spiky->bytes, (unsigned long long)quiet->bytes);
	cr_assert_lt(quiet->bytes, 50 * MiB);
	const struct trace_event *st = find_event(&tr, EV_STAGE, "spiky");
	cr_assert(spiky->has_from);
	cr_assert_float_eq(spiky->from, st->t, 1e-6, "window starts at the stage event");
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
	free(go);
	free(em);
}

Test(record, window_restarts_at_a_release_of_the_same_stage, .init = make_tmp, .fini = drop_tmp,
     .timeout = 20)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/w.trace.jsonl.zst", tmpdir);
	/* 300M left resident from the previous stage is released after entering 'next' */
	char *argv[] = { em, "stage=first", "alloc=300M", "stage=next", "sleep=50ms",
			 "release=old/300M", "sleep=100ms", "stage=last", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 50 * 1000000LL, NULL, &res), 0);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	const struct trace_event *rel = find_event(&tr, EV_RELEASE, "next");
	const struct trace_event *pk = find_event(&tr, EV_PEAK, "next");
	const struct trace_event *first = find_event(&tr, EV_PEAK, "first");
	cr_assert_not_null(rel);
	cr_assert_not_null(pk);
	cr_assert_not_null(first);
	cr_assert_float_eq(pk->from, rel->t, 1e-6, "window from the release");
	cr_assert_geq(first->bytes, 300 * MiB);
	cr_assert_lt(pk->bytes, 150 * MiB, "the released weights are not charged to 'next'");
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
	free(em);
}

/* Setup's window (the command's start to its first stage event) gets a peak
 * event like every stage: 150 MiB touched before any stage event show in it,
 * and not in the first stage's, which frees them first. */
Test(record, setup_before_the_first_stage_event_gets_its_peak, .init = make_tmp,
     .fini = drop_tmp, .timeout = 20)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/s.trace.jsonl.zst", tmpdir);
	char *argv[] = { em, "alloc=150M", "release=w/150M", "stage=first", "sleep=50ms", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 1000 * 1000000LL, NULL, &res), 0);
	cr_assert_eq(res.exit_code, 0);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	const struct trace_event *setup = find_event(&tr, EV_PEAK, "setup");
	const struct trace_event *first = find_event(&tr, EV_PEAK, "first");
	const struct trace_event *st = find_event(&tr, EV_STAGE, "first");
	cr_assert_not_null(setup, "setup's window has a peak event");
	cr_assert_not_null(first);
	cr_assert_not_null(st);
	cr_assert(setup->has_bytes && setup->has_from);
	cr_assert_geq(setup->bytes, 150 * MiB, "setup peak %llu", (unsigned long long)setup->bytes);
	cr_assert_lt(first->bytes, 100 * MiB, "first peak %llu", (unsigned long long)first->bytes);
	cr_assert_geq(setup->from, 0.0);
	cr_assert_leq(setup->from, st->t, "setup's window starts before the first stage event");
	cr_assert_float_eq(setup->t, st->t, 1e-6, "and ends at it");
	size_t npeaks = 0;
	for (size_t i = 0; i < tr.nevents; i++)
		npeaks += tr.events[i].kind == EV_PEAK;
	cr_assert_eq(npeaks, 2, "one peak per window: setup and first");
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
	free(em);
}

/* A first stage event named "setup" does not open a window of its own:
 * setup's window goes on from the command's start, and ends in one peak. */
Test(record, a_first_stage_named_setup_continues_setups_window, .init = make_tmp,
     .fini = drop_tmp, .timeout = 20)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/t.trace.jsonl.zst", tmpdir);
	char *argv[] = { em, "alloc=150M", "release=w/150M", "stage=setup", "sleep=20ms",
			 "stage=first", "sleep=20ms", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 1000 * 1000000LL, NULL, &res), 0);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	const struct trace_event *st = find_event(&tr, EV_STAGE, "setup");
	cr_assert_not_null(st);
	size_t nsetup = 0;
	const struct trace_event *pk = NULL;
	for (size_t i = 0; i < tr.nevents; i++)
		if (tr.events[i].kind == EV_PEAK && tr.events[i].stage &&
		    !strcmp(tr.events[i].stage, "setup")) {
			nsetup++;
			pk = &tr.events[i];
		}
	cr_assert_eq(nsetup, 1, "one peak for setup's window");
	cr_assert_lt(pk->from, st->t, "from the command's start, not from the setup event");
	cr_assert_geq(pk->bytes, 150 * MiB, "the allocation before the setup event counts");
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
	free(em);
}

/* Events that start a window: stage events and releases of the stage in force. */
static bool starts_window(const struct trace_event *ev, const char **stage)
{
	if (ev->kind == EV_STAGE) {
		*stage = ev->stage;
		return true;
	}
	return ev->kind == EV_RELEASE && ev->stage && *stage && !strcmp(ev->stage, *stage);
}

Test(record, a_sample_follows_each_stage_event_and_window_moving_release, .init = make_tmp,
     .fini = drop_tmp, .timeout = 20)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/e.trace.jsonl.zst", tmpdir);
	/* every stage far shorter than the 1 s interval */
	char *argv[] = { em, "sleep=50ms", "stage=first", "alloc=20M", "sleep=100ms",
			 "stage=second", "sleep=50ms", "release=w/20M", "sleep=100ms",
			 "stage=third", "sleep=50ms", "stage=fourth", "sleep=100ms", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 1000 * 1000000LL, NULL, &res), 0);
	cr_assert_eq(res.exit_code, 0);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	cr_assert_lt(tr.end.wall, 0.9, "the run is shorter than one interval: %f", tr.end.wall);
	const char *stage = NULL;
	int nstarts = 0, nreleases = 0;
	for (size_t i = 0; i < tr.nevents; i++) {
		const struct trace_event *ev = &tr.events[i];
		if (!starts_window(ev, &stage))
			continue;
		nstarts++;
		nreleases += ev->kind == EV_RELEASE;
		/* before the next window start and before the next periodic sample
		 * (at whole seconds from the start) */
		double limit = floor(ev->t) + 1.0;
		const char *s2 = stage;
		for (size_t j = i + 1; j < tr.nevents; j++)
			if (starts_window(&tr.events[j], &s2)) {
				if (tr.events[j].t < limit)
					limit = tr.events[j].t;
				break;
			}
		bool found = false;
		for (size_t k = 0; k < tr.nsamples && !found; k++)
			found = tr.samples[k].t >= ev->t && tr.samples[k].t < limit &&
				(tr.samples[k].fields & SF_FOOTPRINT);
		cr_expect(found, "no sample in [%f, %f) after the %s event of stage %s", ev->t, limit,
			  ev->kind == EV_STAGE ? "stage" : "release", ev->stage);
	}
	cr_assert_eq(nstarts, 5, "four stage events and one release");
	cr_assert_eq(nreleases, 1);
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
	free(em);
}

Test(record, a_sample_after_an_event_stamped_ahead_of_the_recorder_takes_the_events_t,
     .init = make_tmp, .fini = drop_tmp, .timeout = 20)
{
	const char *py = "/usr/bin/python3";
	if (access(py, X_OK))
		cr_skip_test("no %s to write a probe line stamped ahead", py);
	char *trace = xasprintf("%s/f.trace.jsonl.zst", tmpdir);
	/* the stage line says 0.3 s later than the moment it is written */
	char *argv[] = { (char *)py, "-c",
			 "import os, time\n"
			 "m = time.clock_gettime(time.CLOCK_MONOTONIC) + 0.3\n"
			 "os.write(int(os.environ['STAGEBENCH_FD']),"
			 " b'{\"kind\":\"stage\",\"stage\":\"ahead\",\"mono\":%.6f}\\n' % m)\n"
			 "time.sleep(0.5)\n",
			 NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 1000 * 1000000LL, NULL, &res), 0);
	cr_assert_eq(res.exit_code, 0);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	const struct trace_event *st = find_event(&tr, EV_STAGE, "ahead");
	cr_assert_not_null(st);
	bool at_event = false;
	for (size_t k = 0; k < tr.nsamples; k++) {
		cr_expect(tr.samples[k].t < st->t - 0.1 || tr.samples[k].t >= st->t,
			  "a sample at %f, just before the stage event at %f", tr.samples[k].t, st->t);
		at_event |= fabs(tr.samples[k].t - st->t) < 1e-6;
	}
	cr_assert(at_event, "no sample at the stage event's t %f", st->t);
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
}

Test(record, malformed_probe_lines_are_skipped, .init = make_tmp, .fini = drop_tmp, .timeout = 20)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/m.trace.jsonl.zst", tmpdir);
	char *script = xasprintf("printf 'not json\\n{\"type\":\"event\"' >&3; sleep 0.05; "
				 "printf ',\"kind\":\"mark\",\"note\":\"split\",\"t\":0.5}\\n[1]\\n' >&3; "
				 "exec '%s' mark=after",
				 em);
	char *argv[] = { "sh", "-c", script, NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 50 * 1000000LL, NULL, &res), 0);
	cr_assert_eq(res.exit_code, 0);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	int marks = 0;
	bool split = false;
	for (size_t i = 0; i < tr.nevents; i++)
		if (tr.events[i].kind == EV_MARK &&
		    !(tr.events[i].note && !strncmp(tr.events[i].note, "meter: ", 7))) {
			marks++; /* the command's, not the recorder's note of its reader */
			split |= tr.events[i].note && !strcmp(tr.events[i].note, "split");
		}
	cr_assert_eq(marks, 2);
	cr_assert(split, "a line written in two pieces is put back together");
	trace_release(&tr);
	record_result_release(&res);
	free(script);
	free(trace);
	free(em);
}

Test(record, missing_command_exits_127_with_an_end_record, .init = make_tmp, .fini = drop_tmp,
     .timeout = 10)
{
	char *trace = xasprintf("%s/x.trace.jsonl.zst", tmpdir);
	char *argv[] = { "stagebench-no-such-command", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 50 * 1000000LL, NULL, &res), 0);
	cr_assert_eq(res.exit_code, 127);
	cr_assert_not(res.started);
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	cr_assert(tr.has_end);
	cr_assert_eq(tr.end.exit_code, 127);
	cr_assert(tr.end.reason && strstr(tr.end.reason, "No such file"));
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
}

Test(record, guard_stops_a_tree_over_its_cap_and_runs_again_in_process, .init = make_tmp,
     .fini = drop_tmp, .timeout = 30)
{
	char *em = eatmem();
	char *trace = xasprintf("%s/g.trace.jsonl.zst", tmpdir);
	char *ready = xasprintf("ready=%s/child.pid", tmpdir);
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_FOOTPRINT, "100M", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_POLL, "50ms", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_GRACE, "1s", NULL), 1);
	char *argv[] = { em, "fork", ready, "alloc=300M", "sleep=20s", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 100 * 1000000LL, &g, &res), 0);
	cr_assert_eq(res.exit_code, GUARD_EXIT_STOPPED);
	cr_assert_eq(res.stopped_by, STOPPED_GUARD);
	cr_assert(strstr(res.reason, "over the cap"), "reason: %s", res.reason);

	char *pidfile = xasprintf("%s/child.pid", tmpdir), *data = NULL;
	size_t len;
	cr_assert_eq(read_file(pidfile, &data, &len), 0);
	int child = 0;
	while (len && data[len - 1] == '\n')
		data[--len] = '\0';
	cr_assert_eq(parse_int(data, &child), 0, "pid file: '%s'", data);
	cr_assert_gt(child, 1);
	cr_assert_eq(kill(child, 0), -1, "the forked child %d survived", child);

	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	cr_assert_eq(tr.end.stopped_by, STOPPED_GUARD);
	cr_assert_eq(tr.end.exit_code, 3);
	const struct trace_event *stop = NULL;
	for (size_t i = 0; i < tr.nevents; i++)
		if (tr.events[i].kind == EV_GUARD && !strcmp(tr.events[i].action, "stop"))
			stop = &tr.events[i];
	cr_assert_not_null(stop);
	cr_assert(stop->extra_json && strstr(stop->extra_json, "\"footprint\""));
	trace_release(&tr);
	record_result_release(&res);

	/* the same process runs another recording: no state left behind */
	char *argv2[] = { em, "exit=0", NULL };
	struct record_result res2 = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv2, trace, 100 * 1000000LL, &g, &res2), 0);
	cr_assert_eq(res2.exit_code, 0);
	cr_assert_eq(res2.stopped_by, STOPPED_NONE);
	record_result_release(&res2);
	guard_opts_release(&g);
	free(data);
	free(pidfile);
	free(ready);
	free(trace);
	free(em);
}

Test(record, guard_times_out_when_there_is_never_room, .timeout = 10)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_WAIT_FREE, "100", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_START_TIMEOUT, "300ms", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_POLL, "50ms", NULL), 1);
	char *argv[] = { "true", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, NULL, 100 * 1000000LL, &g, &res), 0);
	cr_assert_eq(res.exit_code, GUARD_EXIT_NO_ROOM);
	cr_assert_not(res.started);
	record_result_release(&res);
	guard_opts_release(&g);
}

/* stderr_copy_fd: what the command writes to its stderr reaches the copy as it
 * comes, also from a child it leaves behind for a moment. */
Test(record, the_commands_stderr_is_copied_to_a_file, .init = make_tmp, .fini = drop_tmp,
     .timeout = 20)
{
	char *path = xasprintf("%s/run.err", tmpdir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	cr_assert(fd >= 0);
	char *argv[] = { "sh", "-c", "echo to-out; echo first >&2; sh -c 'echo second >&2'; exit 4",
			 NULL };
	struct record_opts o = RECORD_OPTS_INIT;
	o.interval_ns = 50 * 1000000LL;
	o.status_line = false;
	o.summary = false;
	o.stderr_copy_fd = fd;
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record_run(&o, argv, &res), 0);
	close(fd);
	cr_expect_eq(res.exit_code, 4);
	char *text = NULL;
	size_t len = 0;
	cr_assert_eq(read_file(path, &text, &len), 0);
	cr_expect_str_eq(text, "first\nsecond\n");
	free(text);
	record_result_release(&res);
	free(path);
}

/* The reader mark: "meter: TOKEN: WORDS" at the command's start, whichever reader ran
 * (STAGEBENCH_CGROUP=0: the per-process one; by default the run's own cgroup, where one
 * can be made here), and the first of the trace's marks. */
static enum sb_reader recorded_reader(const char *cgroup, const char *name)
{
	setenv("STAGEBENCH_CGROUP", cgroup, 1);
	char *trace = xasprintf("%s/%s.trace.jsonl.zst", tmpdir, name);
	/* a command that lives: one gone before the meter looks is no longer in its cgroup */
	char *argv[] = { "sleep", "0.2", NULL };
	struct record_result res = RECORD_RESULT_INIT;
	cr_assert_eq(record(argv, trace, 50 * 1000000LL, NULL, &res), 0);
	unsetenv("STAGEBENCH_CGROUP");
	struct trace tr = TRACE_INIT;
	cr_assert_eq(trace_read(trace, &tr), 0);
	const struct trace_event *mark = find_event(&tr, EV_MARK, NULL);
	cr_assert(mark && mark->note, "a reader mark");
	enum sb_reader r = reader_of_mark(mark->note);
	char *want = xasprintf(READER_MARK_PREFIX "%s: footprint read ", reader_info(r)->name);
	cr_assert(str_starts_with(mark->note, want), "%s", mark->note);
	free(want);
	trace_release(&tr);
	record_result_release(&res);
	free(trace);
	return r;
}

Test(record, the_trace_names_its_reader_in_a_mark_with_a_token, .init = make_tmp,
     .fini = drop_tmp, .timeout = 20)
{
	char *was = getenv("STAGEBENCH_CGROUP") ? xstrdup(getenv("STAGEBENCH_CGROUP")) : NULL;
	cr_assert_eq(recorded_reader("0", "pp"), SB_READER_PER_PROCESS);
	enum sb_reader r = recorded_reader("", "default");
	cr_assert(r == SB_READER_CGROUP_V1 || r == SB_READER_CGROUP_V2 || r == SB_READER_PER_PROCESS,
		  "reader %d", r);
	if (!access("/sys/fs/cgroup/memory", W_OK) ||
	    !access("/sys/fs/cgroup/cgroup.subtree_control", W_OK))
		cr_assert(r != SB_READER_PER_PROCESS, "a cgroup can be made here: its reader ran");
	if (was)
		setenv("STAGEBENCH_CGROUP", was, 1);
	free(was);
}
