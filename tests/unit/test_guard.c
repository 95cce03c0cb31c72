/* test_guard.c -- guard option parsing, admission and stop decisions as pure functions */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../runner/guard.h"
#include "../../traces/trace.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static struct guard_readings readings(double avail, uint64_t swap)
{
	struct guard_readings r;
	memset(&r, 0, sizeof(r));
	r.avail_pct = avail;
	r.has_swap = true;
	r.swap_used = swap;
	r.since_busy_ns = -1;
	return r;
}

Test(guard, defaults_are_stageloads_with_a_faster_poll)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_float_eq(g.wait_free_pct, 40.0, 1e-9);
	cr_assert_eq(g.swap_budget, 8 * GiB);
	cr_assert_not(g.has_swap_limit);
	cr_assert_float_eq(g.kill_free_pct, 10.0, 1e-9);
	cr_assert_eq(g.quiet_for_ns, 60LL * 1000000000LL);
	cr_assert_eq(g.start_timeout_ns, 1800LL * 1000000000LL);
	cr_assert_eq(g.poll_ns, 250LL * 1000000LL);
	cr_assert_eq(g.grace_ns, 5LL * 1000000000LL);
	cr_assert_not(g.given);
}

Test(guard, parses_every_option)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_WAIT_FREE, "55%", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_SWAP_BUDGET, "1.5GiB", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_SWAP_LIMIT, "16G", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_KILL_FREE, "5", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_BUSY, "python.*train", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_BUSY, "^ffmpeg ", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_QUIET_FOR, "30s", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_START_TIMEOUT, "2m", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_POLL, "100ms", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_FOOTPRINT, "512M", NULL), 1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_GRACE, "2s", NULL), 1);
	cr_assert_float_eq(g.wait_free_pct, 55.0, 1e-9);
	cr_assert_eq(g.swap_budget, 3 * GiB / 2);
	cr_assert(g.has_swap_limit);
	cr_assert_eq(g.swap_limit, 16 * GiB);
	cr_assert_float_eq(g.kill_free_pct, 5.0, 1e-9);
	cr_assert_eq(g.nbusy, 2);
	cr_assert_str_eq(g.busy[1], "^ffmpeg ");
	cr_assert_eq(g.quiet_for_ns, 30LL * 1000000000LL);
	cr_assert_eq(g.start_timeout_ns, 120LL * 1000000000LL);
	cr_assert_eq(g.poll_ns, 100LL * 1000000LL);
	cr_assert(g.has_max_footprint);
	cr_assert_eq(g.max_footprint, 512 * MiB);
	cr_assert_eq(g.grace_ns, 2LL * 1000000000LL);
	cr_assert(g.given);
	guard_opts_release(&g);
}

Test(guard, grace_alone_does_not_make_a_run_guarded)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_GRACE, "1s", NULL), 1);
	cr_assert_not(g.given);
	cr_assert_eq(guard_parse_option(&g, 'o', "x", NULL), 0, "not a guard option");
}

Test(guard, rejects_bad_values)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_WAIT_FREE, "140", NULL), -1);
	struct strbuf why = STRBUF_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_WAIT_FREE, "forty", &why), -1);
	cr_assert_str_eq(strbuf_str(&why), "option '--wait-free': invalid percentage 'forty'");
	strbuf_release(&why);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_SWAP_BUDGET, "8X", NULL), -1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_SWAP_BUDGET, "-1G", NULL), -1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_POLL, "0", NULL), -1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_QUIET_FOR, "1 minute", NULL), -1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_BUSY, "(unclosed", NULL), -1);
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_FOOTPRINT, "0", NULL), -1);
	cr_assert_eq(g.nbusy, 0);
	cr_assert_float_eq(g.wait_free_pct, 40.0, 1e-9, "a rejected value leaves the default");
	guard_opts_release(&g);
}

Test(guard, admits_when_enough_is_available)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	struct guard_readings r = readings(40.0, 0);
	struct strbuf why = STRBUF_INIT;
	cr_assert(guard_admit(&g, &r, &why));
	r.avail_pct = 39.9;
	strbuf_reset(&why);
	cr_assert_not(guard_admit(&g, &r, &why));
	cr_assert(strstr(why.buf, "available 40% (need 40%)") || strstr(why.buf, "need 40%"),
		  "reason: %s", why.buf);
	strbuf_release(&why);
}

Test(guard, swap_limit_counts_the_budget)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_SWAP_LIMIT, "10G", NULL), 1);
	struct guard_readings r = readings(80.0, 2 * GiB);
	cr_assert(guard_admit(&g, &r, NULL), "2 + 8 fits in 10");
	r.swap_used = 2 * GiB + 1;
	struct strbuf why = STRBUF_INIT;
	cr_assert_not(guard_admit(&g, &r, &why));
	cr_assert(strstr(why.buf, "limit"), "reason: %s", why.buf);
	strbuf_release(&why);
	/* without a limit, swap never blocks admission */
	struct guard_opts d = GUARD_OPTS_INIT;
	r.swap_used = 100 * GiB;
	cr_assert(guard_admit(&d, &r, NULL));
}

Test(guard, busy_process_blocks_until_quiet_for)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_BUSY, "train", NULL), 1);
	struct guard_readings r = readings(90.0, 0);
	cr_assert(guard_admit(&g, &r, NULL), "never seen: quiet");
	r.busy = true;
	r.since_busy_ns = 0;
	snprintf(r.busy_what, sizeof(r.busy_what), "python3 train.py");
	struct strbuf why = STRBUF_INIT;
	cr_assert_not(guard_admit(&g, &r, &why));
	cr_assert(strstr(why.buf, "python3 train.py"), "reason: %s", why.buf);
	r.busy = false;
	r.since_busy_ns = 59LL * 1000000000LL;
	cr_assert_not(guard_admit(&g, &r, NULL), "seen 59 s ago, quiet-for 1m");
	r.since_busy_ns = 60LL * 1000000000LL;
	cr_assert(guard_admit(&g, &r, NULL));
	strbuf_release(&why);
	guard_opts_release(&g);
}

Test(guard, stops_when_swap_grows_past_the_budget)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	struct guard_state st = GUARD_STATE_INIT;
	struct guard_readings r = readings(50.0, 3 * GiB);
	guard_state_start(&st, &r);
	r.swap_used = 11 * GiB; /* grew exactly the budget: not more */
	cr_assert_not(guard_check(&g, &st, &r, NULL));
	r.swap_used = 11 * GiB + (GiB / 5);
	r.avail_pct = 12.0;
	struct strbuf why = STRBUF_INIT;
	cr_assert(guard_check(&g, &st, &r, &why));
	cr_assert_str_eq(why.buf, "swap grew 8.2 GB (budget 8.0 GB), available 12%");
	strbuf_release(&why);
}

Test(guard, low_memory_must_persist_for_two_polls)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	struct guard_state st = GUARD_STATE_INIT;
	struct guard_readings r = readings(50.0, 0);
	guard_state_start(&st, &r);
	r.avail_pct = 9.0;
	cr_assert_not(guard_check(&g, &st, &r, NULL), "one low poll is not enough");
	cr_assert(guard_check_soon(&st));
	r.avail_pct = 11.0;
	cr_assert_not(guard_check(&g, &st, &r, NULL));
	cr_assert_not(guard_check_soon(&st));
	r.avail_pct = 9.0;
	cr_assert_not(guard_check(&g, &st, &r, NULL), "the count restarted");
	struct strbuf why = STRBUF_INIT;
	cr_assert(guard_check(&g, &st, &r, &why));
	cr_assert(strstr(why.buf, "available 9%"), "reason: %s", why.buf);
	strbuf_release(&why);
}

Test(guard, stops_when_the_tree_exceeds_max_footprint)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_FOOTPRINT, "100M", NULL), 1);
	struct guard_state st = GUARD_STATE_INIT;
	struct guard_readings r = readings(80.0, 0);
	guard_state_start(&st, &r);
	r.has_footprint = true;
	r.footprint = 100 * MiB;
	cr_assert_not(guard_check(&g, &st, &r, NULL));
	r.footprint = 300 * MiB;
	struct strbuf why = STRBUF_INIT;
	cr_assert(guard_check(&g, &st, &r, &why));
	cr_assert_str_eq(why.buf, "footprint 300 MB over the cap 100 MB, available 80%");
	strbuf_release(&why);
	/* no cap: any footprint is fine */
	struct guard_opts d = GUARD_OPTS_INIT;
	struct guard_state st2 = GUARD_STATE_INIT;
	cr_assert_not(guard_check(&d, &st2, &r, NULL));
}

Test(guard, stops_when_the_probes_device_memory_exceeds_max_device)
{
	struct guard_opts g = GUARD_OPTS_INIT;
	struct strbuf why = STRBUF_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_DEVICE, "200M", NULL), 1);
	cr_assert(g.given && g.has_max_device);
	struct guard_state st = GUARD_STATE_INIT;
	struct guard_readings r = readings(80.0, 0);
	guard_state_start(&st, &r);
	r.devmem = 500 * MiB; /* no reading yet: nothing to judge */
	cr_assert_not(guard_check(&g, &st, &r, NULL));
	r.has_devmem = true;
	r.devmem = 200 * MiB;
	cr_assert_not(guard_check(&g, &st, &r, NULL));
	r.devmem = 500 * MiB;
	cr_assert(guard_check(&g, &st, &r, &why));
	cr_assert_str_eq(why.buf, "device memory 500 MB over the cap 200 MB, available 80%");
	/* the percentage form needs the device's size */
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_DEVICE, "40%", NULL), 1);
	cr_assert_not(guard_check(&g, &st, &r, NULL));
	r.devmem_total = 1024 * MiB;
	strbuf_reset(&why);
	cr_assert(guard_check(&g, &st, &r, &why));
	cr_assert_str_eq(why.buf, "device memory 500 MB over the cap 410 MB (40% of 1.0 GB), available 80%");
	r.devmem_total = 2048 * MiB;
	cr_assert_not(guard_check(&g, &st, &r, NULL));
	for (const char *bad = "0\0" "0%\0" "100.5%\0" "%\0" "5%x\0"; *bad; bad += strlen(bad) + 1)
		cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_DEVICE, bad, NULL), -1, "%s", bad);
	/* the percentage grammar of every option (common/parse.h): --max-device, --wait-free
	 * and --kill-free refuse alike */
	static const int pct_opts[] = { GUARD_OPT_MAX_DEVICE, GUARD_OPT_WAIT_FREE,
					GUARD_OPT_KILL_FREE };
	for (size_t k = 0; k < 3; k++) {
		for (const char *bad = "0x10%\0" " 50%\0" "1e-300%\0" "+5%\0" "5 %\0"; *bad;
		     bad += strlen(bad) + 1) {
			struct strbuf w = STRBUF_INIT;
			cr_assert_eq(guard_parse_option(&g, pct_opts[k], bad, &w), -1, "option %d: '%s'",
				     pct_opts[k], bad);
			cr_assert(strstr(w.buf, bad), "%s", w.buf);
			strbuf_release(&w);
		}
		cr_assert_eq(guard_parse_option(&g, pct_opts[k], "12.5%", NULL), 1);
	}
	cr_assert_float_eq(g.max_device_pct, 12.5, 1e-12);
	cr_assert_float_eq(g.wait_free_pct, 12.5, 1e-12);
	cr_assert_float_eq(g.kill_free_pct, 12.5, 1e-12);
	strbuf_release(&why);
}

Test(guard, readings_become_event_keys)
{
	struct guard_state st = GUARD_STATE_INIT;
	struct guard_readings r = readings(12.34, 1000);
	guard_state_start(&st, &r);
	r.swap_used = 3000;
	r.has_footprint = true;
	r.footprint = 42;
	struct trace_fields f = TRACE_FIELDS_INIT;
	guard_readings_fields(&r, &st, &f);
	char *j = trace_fields_json(&f);
	cr_assert_str_eq(j, "\"available_pct\":12.3,\"swap_used\":3000,\"swap_growth\":2000,\"footprint\":42");
	free(j);
	trace_fields_release(&f);
}

Test(guard, busy_scan_matches_a_running_command_line, .timeout = 10)
{
	char what[128];
	pid_t pid = fork();
	if (pid == 0) {
		execlp("sleep", "sleep", "7.123456", (char *)NULL);
		_exit(127);
	}
	struct guard_opts g2 = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g2, GUARD_OPT_BUSY, "^sleep 7\\.123456$", NULL), 1);
	int found = 0;
	for (int i = 0; i < 100 && !found; i++) {
		found = guard_busy_scan(&g2, what, sizeof(what));
		if (!found)
			usleep(10000);
	}
	cr_assert_eq(found, 1);
	cr_assert_str_eq(what, "sleep 7.123456");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	found = 1;
	for (int i = 0; i < 100 && found; i++) {
		found = guard_busy_scan(&g2, what, sizeof(what));
		if (found)
			usleep(10000);
	}
	cr_assert_eq(found, 0, "gone once it ended");
	guard_opts_release(&g2);
}

/* ---- device readings: by device and writer, the device's last size ------- */

/* A devmem line through the parser and into the table, as the recorder takes it. */
static const struct devmem_reading *take_line(struct devmem_table *tab, const char *json)
{
	struct trace_event ev;
	struct trace_sample s;
	struct devmem_extra x;
	const char *msg = NULL;
	cr_assert_eq(trace_parse_probe_line(json, strlen(json), 0, &ev, &msg), 0, "%s", msg);
	cr_assert_eq(trace_devmem_sample(&ev, &s, &x), 0, "%s", json);
	const struct devmem_reading *d = devmem_table_take(tab, &ev, &s, &x);
	trace_event_release(&ev);
	return d;
}

Test(guard, a_reading_without_total_keeps_the_devices_last_total_and_is_judged)
{
	struct devmem_table tab;
	memset(&tab, 0, sizeof(tab));
	take_line(&tab, "{\"kind\":\"devmem\",\"device\":\"cuda:0\",\"bytes\":1073741824,"
			"\"total\":10737418240,\"mono\":1}");
	const struct devmem_reading *d =
		take_line(&tab, "{\"kind\":\"devmem\",\"device\":\"cuda:0\",\"bytes\":9663676416,\"mono\":2}");
	cr_assert_eq(d->total, 10 * GiB, "the size said before");
	cr_assert_eq(tab.n, 1, "one device, one writer");
	struct guard_opts g = GUARD_OPTS_INIT;
	struct strbuf why = STRBUF_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_DEVICE, "80%", &why), 1, "%s", why.buf);
	struct guard_readings r = readings(90, 0);
	guard_devmem_pick(&g, &tab, &r);
	cr_assert(r.has_devmem);
	cr_assert_eq(r.devmem, 9 * GiB);
	cr_assert_eq(r.devmem_total, 10 * GiB);
	struct guard_state st;
	guard_state_start(&st, &r);
	cr_assert(guard_check(&g, &st, &r, &why));
	cr_assert(strstr(why.buf, "(80% of 10.0 GB) on 'cuda:0'"), "%s", why.buf);
	strbuf_release(&why);
	guard_opts_release(&g);
}

Test(guard, the_reading_most_over_its_cap_is_judged_whatever_came_last)
{
	struct devmem_table tab;
	memset(&tab, 0, sizeof(tab));
	take_line(&tab, "{\"kind\":\"devmem\",\"device\":\"cuda:0\",\"bytes\":9663676416,"
			"\"total\":10737418240,\"mono\":1}");
	take_line(&tab, "{\"kind\":\"devmem\",\"device\":\"cuda:1\",\"bytes\":42949672960,"
			"\"total\":85899345920,\"mono\":2}");
	/* a second writer of cuda:0, small, and a device whose size nobody said */
	take_line(&tab, "{\"kind\":\"devmem\",\"device\":\"cuda:0\",\"bytes\":1024,\"pid\":7,\"mono\":3}");
	take_line(&tab, "{\"kind\":\"devmem\",\"device\":\"mps\",\"bytes\":85899345920,\"mono\":4}");
	cr_assert_eq(tab.n, 4);
	struct guard_opts g = GUARD_OPTS_INIT;
	struct strbuf why = STRBUF_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_DEVICE, "80%", &why), 1);
	struct guard_readings r = readings(90, 0);
	guard_devmem_pick(&g, &tab, &r);
	/* 90% of cuda:0 beats 50% of cuda:1; mps has no size to take a share of */
	cr_assert_eq(r.devmem, 9 * GiB);
	cr_assert_str_eq(r.devmem_device, "cuda:0");
	guard_opts_release(&g);
	/* a size cap: the largest reading, whatever its device */
	struct guard_opts g2 = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g2, GUARD_OPT_MAX_DEVICE, "50G", &why), 1);
	guard_devmem_pick(&g2, &tab, &r);
	cr_assert_eq(r.devmem, 80 * GiB);
	cr_assert_str_eq(r.devmem_device, "mps");
	guard_opts_release(&g2);
	strbuf_release(&why);
}

Test(guard, a_flood_of_small_readings_never_pushes_out_a_large_one)
{
	struct devmem_table tab;
	memset(&tab, 0, sizeof(tab));
	take_line(&tab, "{\"kind\":\"devmem\",\"device\":\"cuda:0\",\"bytes\":9663676416,"
			"\"total\":10737418240,\"mono\":1}");
	for (int i = 0; i < 100; i++) {
		char line[160];
		snprintf(line, sizeof(line),
			 "{\"kind\":\"devmem\",\"device\":\"cuda:%d\",\"bytes\":%d,\"total\":10737418240,"
			 "\"mono\":2}", i + 1, i);
		take_line(&tab, line);
	}
	cr_assert_eq(tab.n, DEVMEM_MAX_READINGS);
	cr_assert_eq(tab.evicted, 100 - (DEVMEM_MAX_READINGS - 1));
	struct guard_opts g = GUARD_OPTS_INIT;
	cr_assert_eq(guard_parse_option(&g, GUARD_OPT_MAX_DEVICE, "80%", NULL), 1);
	struct guard_readings r = readings(90, 0);
	guard_devmem_pick(&g, &tab, &r);
	cr_assert_eq(r.devmem, 9 * GiB);
	guard_opts_release(&g);
}
