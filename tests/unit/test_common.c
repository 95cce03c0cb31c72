/* test_common.c -- shared helpers: strict parsers, the JSON writer, strbuf, files */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/jsonw.h"
#include "common/parse.h"
#include "common/path.h"
#include "common/reader.h"
#include "common/util.h"
#include "testutil.h"

/* ---- parse_size ---------------------------------------------------------- */

Test(common, parse_size_reads_binary_units)
{
	static const struct {
		const char *in;
		uint64_t want;
	} ok[] = {
		{ "8G", 8ull << 30 },     { "512M", 512ull << 20 }, { "1.5GiB", 3ull << 29 },
		{ "300MiB", 300ull << 20 }, { "4096", 4096 },       { "10k", 10240 },
		{ "10K", 10240 },         { "2kb", 2048 },          { "7B", 7 },
		{ "0", 0 },               { "1t", 1ull << 40 },     { ".5K", 512 },
		{ "18446744073709551615", 18446744073709551615ull },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;
		cr_assert_eq(parse_size(ok[i].in, &v), 0, "'%s' rejected", ok[i].in);
		cr_assert_eq(v, ok[i].want, "'%s' -> %llu", ok[i].in, (unsigned long long)v);
	}
}

Test(common, parse_size_rejects_junk_negatives_and_overflow)
{
	static const char *const bad[] = {
		"8X", "-1", "", "1e400", "G", "8 G", " 8G", "8G ", "8GG", "0x10", "nan", "inf",
		"16777216T", "18446744073709551616", "99999999999999999999999", "1.5.5M", "+8G",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 777;
		cr_assert_eq(parse_size(bad[i], &v), -1, "'%s' accepted as %llu", bad[i],
			     (unsigned long long)v);
		cr_assert_eq(v, 777, "'%s' changed the output on failure", bad[i]);
	}
	uint64_t v;
	cr_assert_eq(parse_size(NULL, &v), -1);
}

Test(common, parse_size_near_the_top_of_the_range_does_not_wrap)
{
	/* 16777215 TiB = 2^64 - 2^40: fits, and must not go through a signed
	 * conversion */
	uint64_t v = 0;
	cr_assert_eq(parse_size("16777215T", &v), 0);
	cr_assert_eq(v, 18446742974197923840ull);
}

/* ---- parse_duration / parse_percent ------------------------------------- */

Test(common, parse_duration_reads_units)
{
	static const struct {
		const char *in;
		int64_t want;
	} ok[] = {
		{ "500ms", 500000000 }, { "1m", 60000000000LL }, { "1.5s", 1500000000 },
		{ "2s", 2000000000 },   { "30m", 1800000000000LL }, { "1h", 3600000000000LL },
		{ "250us", 250000 },    { "3", 3000000000LL },   { "0", 0 }, { "10ns", 10 },
		{ "2min", 120000000000LL },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t v = -1;
		cr_assert_eq(parse_duration(ok[i].in, &v), 0, "'%s' rejected", ok[i].in);
		cr_assert_eq(v, ok[i].want, "'%s' -> %lld", ok[i].in, (long long)v);
	}
	static const char *const bad[] = { "", "-1s", "5x", "1e400", "s", "1 s", "99999999999h",
					   "0x5s" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v;
		cr_assert_eq(parse_duration(bad[i], &v), -1, "'%s' accepted", bad[i]);
	}
}

Test(common, parse_percent_accepts_0_to_100)
{
	double v = -1;
	cr_assert_eq(parse_percent("40", &v), 0);
	cr_assert_eq(v, 40);
	cr_assert_eq(parse_percent("40%", &v), 0);
	cr_assert_eq(v, 40);
	cr_assert_eq(parse_percent("12.5%", &v), 0);
	cr_assert_eq(v, 12.5);
	cr_assert_eq(parse_percent("100", &v), 0);
	cr_assert_eq(v, 100);
	cr_assert_eq(parse_percent("0%", &v), 0);
	cr_assert_eq(v, 0);
	static const char *const bad[] = { "140", "100.1%", "-5", "", "%", "40%%", "40 %",
					   "abc", "1e400" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(parse_percent(bad[i], &v), -1, "'%s' accepted", bad[i]);
}

Test(common, parse_size_or_percent_tells_which)
{
	uint64_t b = 0;
	double pct = 0;
	int is_pct = -1;
	cr_assert_eq(parse_size_or_percent("5%", &b, &pct, &is_pct), 0);
	cr_assert_eq(is_pct, 1);
	cr_assert_eq(pct, 5);
	cr_assert_eq(parse_size_or_percent("512M", &b, &pct, &is_pct), 0);
	cr_assert_eq(is_pct, 0);
	cr_assert_eq(b, 512ull << 20);
	cr_assert_eq(parse_size_or_percent("140%", &b, &pct, &is_pct), -1);
	cr_assert_eq(parse_size_or_percent("x%", &b, &pct, &is_pct), -1);
	cr_assert_eq(parse_size_or_percent("", &b, &pct, &is_pct), -1);
}

/* One grammar for every percentage: what parse_percent refuses, the "%" form
 * of parse_size_or_percent refuses too, and the other way round. */
Test(common, every_percentage_is_a_plain_decimal_number)
{
	static const char *const bad[] = { "0x10%", " 50%", "1e-300%", "1e2%", "+5%", "-0%",
					   "5.%x", "..5%", "5 %", "\t5%", "0x1p4%", "inf%",
					   "nan%", "5,5%", "1.2.3%" };
	uint64_t b;
	double pct;
	int is_pct;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(parse_percent(bad[i], &pct), -1, "'%s' accepted", bad[i]);
		cr_assert_eq(parse_size_or_percent(bad[i], &b, &pct, &is_pct), -1, "'%s' accepted",
			     bad[i]);
	}
	static const struct { const char *s; double v; } good[] = {
		{ "50%", 50 }, { "0.5%", 0.5 }, { ".5%", 0.5 }, { "5.%", 5 }, { "100%", 100 },
		{ "007%", 7 }, { "99.999%", 99.999 },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		pct = -1;
		cr_assert_eq(parse_percent(good[i].s, &pct), 0, "%s", good[i].s);
		cr_assert_float_eq(pct, good[i].v, 1e-12, "%s", good[i].s);
		pct = -1;
		cr_assert_eq(parse_size_or_percent(good[i].s, &b, &pct, &is_pct), 0, "%s", good[i].s);
		cr_assert_eq(is_pct, 1);
		cr_assert_float_eq(pct, good[i].v, 1e-12, "%s", good[i].s);
	}
}

Test(common, integer_parsers_are_strict)
{
	uint64_t u;
	int64_t i;
	int n;
	double d;
	cr_assert_eq(parse_u64("18446744073709551615", &u), 0);
	cr_assert_eq(u, 18446744073709551615ull);
	cr_assert_eq(parse_u64("18446744073709551616", &u), -1);
	cr_assert_eq(parse_u64("-1", &u), -1);
	cr_assert_eq(parse_u64("12a", &u), -1);
	cr_assert_eq(parse_u64("", &u), -1);
	cr_assert_eq(parse_i64("-9223372036854775808", &i), 0);
	cr_assert_eq(i, INT64_MIN);
	cr_assert_eq(parse_i64("9223372036854775808", &i), -1);
	cr_assert_eq(parse_i64(" 5", &i), -1);
	cr_assert_eq(parse_int("2147483647", &n), 0);
	cr_assert_eq(n, 2147483647);
	cr_assert_eq(parse_int("2147483648", &n), -1);
	cr_assert_eq(parse_int("7.0", &n), -1);
	cr_assert_eq(parse_double("1.25", &d), 0);
	cr_assert_eq(d, 1.25);
	cr_assert_eq(parse_double("inf", &d), -1);
	cr_assert_eq(parse_double("nan", &d), -1);
	cr_assert_eq(parse_double("1e400", &d), -1);
	cr_assert_eq(parse_double("1.0x", &d), -1);
}

Test(common, human_formats)
{
	char out[32];
	format_gb(21904620339ull, out);
	cr_assert_str_eq(out, "20.4 GB");
	format_gb(0, out);
	cr_assert_str_eq(out, "0.0 GB");
	format_duration(350000000, out);
	cr_assert_str_eq(out, "350 ms");
	format_duration(1200000000, out);
	cr_assert_str_eq(out, "1.2 s");
	format_duration(125000000000LL, out);
	cr_assert_str_eq(out, "2 min 05 s");
}

/* ---- jsonw ----------------------------------------------------------------- */

Test(common, json_escape_escapes_quotes_backslashes_and_controls)
{
	struct strbuf sb = STRBUF_INIT;
	json_escape(&sb, "a\"b\\c\nd\re\tf\x01g\x1f h\xc3\xa9");
	cr_assert_str_eq(sb.buf, "\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u001f h\xc3\xa9\"");
	strbuf_reset(&sb);
	json_escape(&sb, "");
	cr_assert_str_eq(sb.buf, "\"\"");
	strbuf_release(&sb);
}

Test(common, jsonw_nests_compact)
{
	struct strbuf sb = STRBUF_INIT;
	struct jsonw w = JSONW_INIT(&sb);
	w.pretty = false;
	jw_object_begin(&w);
	jw_key(&w, "mode");
	jw_string(&w, "staged");
	jw_key(&w, "peak");
	jw_u64(&w, 18446744073709551615ull);
	jw_key(&w, "delta");
	jw_i64(&w, -5);
	jw_key(&w, "runs");
	jw_array_begin(&w);
	jw_object_begin(&w);
	jw_key(&w, "ok");
	jw_bool(&w, true);
	jw_object_end(&w);
	jw_array_begin(&w);
	jw_array_end(&w);
	jw_null(&w);
	jw_string(&w, NULL);
	jw_double(&w, 0.1);
	jw_double(&w, NAN);
	jw_raw(&w, "{\"x\":1}");
	jw_array_end(&w);
	jw_key(&w, "empty");
	jw_object_begin(&w);
	jw_object_end(&w);
	jw_object_end(&w);
	cr_assert_str_eq(sb.buf, "{\"mode\":\"staged\",\"peak\":18446744073709551615,\"delta\":-5,"
				 "\"runs\":[{\"ok\":true},[],null,null,0.1,null,{\"x\":1}],"
				 "\"empty\":{}}");
	strbuf_release(&sb);
}

Test(common, jsonw_pretty_indents_two_spaces)
{
	struct strbuf sb = STRBUF_INIT;
	struct jsonw w = JSONW_INIT(&sb);
	jw_object_begin(&w);
	jw_key(&w, "a");
	jw_u64(&w, 1);
	jw_key(&w, "b");
	jw_array_begin(&w);
	jw_double(&w, 2.5);
	jw_bool(&w, false);
	jw_array_end(&w);
	jw_key(&w, "c");
	jw_object_begin(&w);
	jw_object_end(&w);
	jw_object_end(&w);
	cr_assert_str_eq(sb.buf, "{\n  \"a\": 1,\n  \"b\": [\n    2.5,\n    false\n  ],\n"
				 "  \"c\": {}\n}\n");
	strbuf_release(&sb);
}

Test(common, jw_double_is_shortest_round_trip)
{
	static const double vals[] = { 0.1, 1.0 / 3.0, 123456.789, 1e21, -0.5, 5e-324, 100,
				       -1500, 2.5e15 };
	static const char *const want[] = { "0.1", "0.3333333333333333", "123456.789", "1e+21",
					    "-0.5", "5e-324", "100", "-1500", "2.5e+15" };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		struct jsonw w = JSONW_INIT(&sb);
		w.pretty = false;
		jw_double(&w, vals[i]);
		cr_assert_str_eq(sb.buf, want[i]);
		cr_assert_eq(strtod(sb.buf, NULL), vals[i]);
		strbuf_release(&sb);
	}
}

Test(common, jw_double_matches_the_shortest_of_every_length)
{
	/* jw_double tries 15, 16, 17 digits (1..17 for subnormals): the same text as
	 * the shortest of every length 1..17 that reads back */
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double v;
		if (i % 3 == 0)
			memcpy(&v, &x, sizeof(v));
		else
			v = (double)(x % 100000000) / (double)(1 + (x >> 40) % 100000) * (i % 2 ? 1 : -1);
		if (!isfinite(v) || (v == floor(v) && fabs(v) < 1e15))
			continue;
		char want[32], got[JW_DOUBLE_MAX];
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(want, sizeof(want), "%.*g", prec, v);
			if (strtod(want, NULL) == v)
				break;
		}
		jw_format_double(got, v);
		cr_assert_str_eq(got, want, "%a", v);
	}
}

Test(common, jw_fixed_is_printf_fixed_point)
{
	static const double vals[] = { 0, 0.00005, 0.00015, 1.25, 1234.56785, 2.5, 0.1 + 0.2,
				       -3.75, 1e13, 123456789.123456789 };
	uint64_t x = 1234567;
	for (int i = 0; i < 100000 + 10; i++) {
		double v;
		if (i < 10) {
			v = vals[i];
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v = (double)(x % 1000000000000ull) / (double)(1 + (x >> 50));
		}
		for (int d = 0; d <= 6; d += 2) {
			struct strbuf sb = STRBUF_INIT;
			struct jsonw w = JSONW_COMPACT(&sb);
			jw_fixed(&w, v, d);
			char want[64];
			snprintf(want, sizeof(want), "%.*f", d, v);
			cr_assert_str_eq(sb.buf, want, "%a with %d decimals", v, d);
			strbuf_release(&sb);
		}
	}
	struct strbuf sb = STRBUF_INIT;
	struct jsonw w = JSONW_COMPACT(&sb);
	jw_fixed(&w, NAN, 4);
	cr_assert_str_eq(sb.buf, "null");
	strbuf_release(&sb);
}

Test(common, jw_members_add_encoded_keys_to_the_open_object)
{
	struct strbuf sb = STRBUF_INIT;
	struct jsonw w = JSONW_COMPACT(&sb);
	jw_object_begin(&w);
	jw_members(&w, "\"a\":1"); /* first: no comma before */
	jw_key(&w, "b\n");
	jw_u64(&w, 2);
	jw_members(&w, "\"c\":[3],\"d\":null");
	jw_members(&w, NULL);
	jw_members(&w, "");
	jw_key(&w, "e");
	jw_i64(&w, INT64_MIN);
	jw_object_end(&w);
	cr_assert_str_eq(sb.buf, "{\"a\":1,\"b\\n\":2,\"c\":[3],\"d\":null,\"e\":-9223372036854775808}");
	strbuf_release(&sb);
}

/* ---- strbuf and friends ------------------------------------------------------- */

Test(common, strbuf_grows_and_detaches)
{
	struct strbuf sb = STRBUF_INIT;
	cr_assert_str_eq(strbuf_str(&sb), "");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	cr_assert(str_starts_with(sb.buf, "0,1,2,"));
	cr_assert(str_ends_with(sb.buf, "998,999,"));
	cr_assert_eq(sb.len, strlen(sb.buf));
	strbuf_reset(&sb);
	cr_assert_eq(sb.len, 0);
	cr_assert_str_eq(sb.buf, "");
	strbuf_addch(&sb, 'x');
	strbuf_add(&sb, "yz\0w", 4);
	cr_assert_eq(sb.len, 5);
	cr_assert_eq(memcmp(sb.buf, "xyz\0w", 6), 0);
	char *s = strbuf_detach(&sb);
	cr_assert_null(sb.buf);
	cr_assert_eq(sb.len, 0);
	free(s);
	s = strbuf_detach(&sb); /* empty: an empty string, never NULL */
	cr_assert_str_eq(s, "");
	free(s);
	strbuf_release(&sb);
	char *a = xasprintf("%s-%d", "eager", 2);
	cr_assert_str_eq(a, "eager-2");
	free(a);
	cr_assert_null(xstrdup(NULL));
}

Test(common, string_helpers)
{
	cr_assert(str_ends_with("a.jsonl.zst", ".zst"));
	cr_assert_not(str_ends_with("zst", ".zst"));
	cr_assert(str_ends_with("", ""));
	cr_assert(str_starts_with("stagebench/1", "stagebench/"));
	cr_assert_not(str_starts_with("stage", "stagebench"));
}

Test(common, write_file_is_atomic_and_read_file_reads_it_back)
{
	char dir[] = "/tmp/sb-test-common-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *path = xasprintf("%s/sub/dir/f.txt", dir);
	char *sub = xasprintf("%s/sub/dir", dir);
	cr_assert_eq(mkdir_p(sub), 0);
	cr_assert_eq(mkdir_p(sub), 0, "mkdir_p of an existing directory succeeds");
	cr_assert_eq(write_file(path, "hello\0x", 7), 0);
	char *data;
	size_t len;
	cr_assert_eq(read_file(path, &data, &len), 0);
	cr_assert_eq(len, 7);
	cr_assert_eq(memcmp(data, "hello\0x", 8), 0, "NUL-terminated past the end");
	free(data);
	cr_assert_eq(write_file(path, "", 0), 0);
	cr_assert_eq(read_file(path, &data, &len), 0);
	cr_assert_eq(len, 0);
	cr_assert_str_eq(data, "");
	free(data);
	char *cmd = xasprintf("ls -A '%s/sub/dir' | wc -l | grep -qx 1", dir);
	cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
	free(cmd);
	cmd = xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(path);
	free(sub);
}

Test(common, clocks_and_utc)
{
	int64_t a = mono_ns();
	sleep_ns(2000000);
	int64_t b = mono_ns();
	cr_assert_geq(b - a, 2000000);
	char out[32];
	utc_iso8601(1791283200LL * 1000000000LL, out); /* 2026-10-06T10:40:00Z */
	cr_assert_str_eq(out, "2026-10-06T10:40:00+00:00");
}

Test(common, write_all_writes_everything_and_reports_failure)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	char big[200000]; /* more than a pipe holds: short writes, a reader needed */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		_exit(write_all(p[1], big, sizeof(big)) ? 1 : 0);
	}
	close(p[1]);
	char got[sizeof(big)];
	size_t have = 0;
	ssize_t n;
	while ((n = read(p[0], got + have, sizeof(got) - have)) > 0)
		have += (size_t)n;
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert_eq(have, sizeof(big));
	cr_assert_eq(memcmp(got, big, sizeof(big)), 0);

	int fd = open("/dev/null", O_RDONLY);
	cr_assert(fd >= 0);
	errno = 0;
	cr_assert_eq(write_all(fd, "x", 1), -1); /* not open for writing */
	cr_assert_eq(errno, EBADF);
	close(fd);
}

Test(common, read_file_tail_reads_the_last_bytes)
{
	char path[] = "/tmp/sb-tail-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write_all(fd, "line one\nline two\n", 18), 0);
	close(fd);
	char *text = NULL;
	size_t len = 0;
	cr_assert_eq(read_file_tail(path, 9, &text, &len), 0);
	cr_assert_eq(len, 9);
	cr_assert_str_eq(text, "line two\n");
	free(text);
	cr_assert_eq(read_file_tail(path, 100, &text, &len), 0); /* more than the file: all */
	cr_assert_eq(len, 18);
	free(text);
	cr_assert_eq(read_file_tail(path, 0, &text, &len), 0); /* 0: all */
	cr_assert_str_eq(text, "line one\nline two\n");
	free(text);
	unlink(path);
}

/* ---- path helpers --------------------------------------------------------- */

Test(common, path_helpers_tell_files_from_directories)
{
	char *dir = test_tmpdir("path");
	char *file = xasprintf("%s/f", dir);
	char *gone = xasprintf("%s/gone", dir);
	cr_assert_eq(write_file(file, "x", 1), 0);
	cr_expect(path_exists(dir));
	cr_expect(path_exists(file));
	cr_expect_not(path_exists(gone));
	cr_expect(path_is_dir(dir));
	cr_expect_not(path_is_dir(file), "a file is not a directory");
	cr_expect_not(path_is_dir(gone));
	test_rm_rf(dir);
	free(gone);
	free(file);
	free(dir);
}

Test(common, path_absolute_is_against_the_working_directory)
{
	char *cwd = getcwd(NULL, 0);
	char *want = xasprintf("%s/a/b", cwd);
	char *got = path_absolute("a/b");
	cr_expect_str_eq(got, want);
	free(got);
	got = path_absolute("/x/y");
	cr_expect_str_eq(got, "/x/y", "an absolute path is kept");
	free(got);
	cr_expect_null(path_absolute(NULL));
	free(want);
	free(cwd);
}

/* ---- the readers' table (common/reader.h) -------------------------------- */

Test(common, a_reader_mark_names_its_reader_by_token_and_the_older_cgroup_words)
{
	cr_assert_eq(reader_of_mark("meter: cgroup-v1: footprint read from ..."), SB_READER_CGROUP_V1);
	cr_assert_eq(reader_of_mark("meter: cgroup-v2: x"), SB_READER_CGROUP_V2);
	cr_assert_eq(reader_of_mark("meter: per-process: footprint read process by process"),
		     SB_READER_PER_PROCESS);
	cr_assert_eq(reader_of_mark("meter: macos: x"), SB_READER_MACOS);
	/* the cgroup reader's mark before it had a token */
	cr_assert_eq(reader_of_mark("meter: footprint read from the run's own memory cgroup (v1 "
				    "memory.stat total_rss + total_shmem), every process of the tree in it"),
		     SB_READER_CGROUP_V1);
	cr_assert_eq(reader_of_mark("meter: footprint read from the run's own memory cgroup (v2 "
				    "memory.stat anon + shmem), every process of the tree in it"),
		     SB_READER_CGROUP_V2);
	/* no reader: other marks, a token this version does not know, "unknown", a prefix */
	cr_assert_eq(reader_of_mark(NULL), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_mark("stopped at decode"), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_mark("meter: sideways: x"), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_mark("meter: unknown: x"), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_mark("meter: cgroup-v1"), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_mark("meter: cgroup-v12: x"), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_mark("meter: cgroup: x"), SB_READER_UNKNOWN);
}

Test(common, a_run_without_a_reader_mark_has_its_backends_only_reader_else_none)
{
	cr_assert_eq(reader_of_run(SB_READER_UNKNOWN, "macos"), SB_READER_MACOS);
	cr_assert_eq(reader_of_run(SB_READER_UNKNOWN, "fake"), SB_READER_FAKE);
	cr_assert_eq(reader_of_run(SB_READER_UNKNOWN, "linux"), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_run(SB_READER_UNKNOWN, NULL), SB_READER_UNKNOWN);
	cr_assert_eq(reader_of_run(SB_READER_CGROUP_V2, "linux"), SB_READER_CGROUP_V2);
}

Test(common, every_reader_has_a_token_a_label_and_a_caveat_only_where_it_can_miss)
{
	for (int r = 0; r < SB_READER_COUNT; r++) {
		const struct sb_reader_info *i = reader_info((enum sb_reader)r);
		cr_assert(i->name && *i->name && !strchr(i->name, ':') && !strchr(i->name, ' '),
			  "reader %d's token", r);
		cr_assert(i->label && *i->label);
		cr_assert_null(i->caveat ? strstr(i->caveat, "exact") : NULL, "%s", i->caveat);
		/* the token goes through the mark and back */
		char *note = xasprintf(READER_MARK_PREFIX "%s: words", i->name);
		cr_assert_eq(reader_of_mark(note), r == SB_READER_UNKNOWN ? SB_READER_UNKNOWN : r, "%s", note);
		free(note);
	}
	cr_assert_str_eq(reader_info(SB_READER_CGROUP_V1)->name, "cgroup-v1");
	cr_assert_str_eq(reader_info(SB_READER_CGROUP_V2)->name, "cgroup-v2");
	cr_assert_str_eq(reader_info(SB_READER_PER_PROCESS)->name, "per-process");
	cr_assert_str_eq(reader_info(SB_READER_MACOS)->name, "macos");
	cr_assert_str_eq(reader_info(SB_READER_UNKNOWN)->name, "unknown");
	cr_assert_null(reader_caveat(SB_READER_CGROUP_V1));
	cr_assert_null(reader_caveat(SB_READER_CGROUP_V2));
	const char *pp = reader_caveat(SB_READER_PER_PROCESS);
	cr_assert(pp && strstr(pp, "shared memory") && strstr(pp, "short-lived") &&
		  strstr(pp, "tens of percent") && strstr(pp, "cgroup") &&
		  strstr(pp, "docs/platforms.md"), "%s", pp);
	cr_assert_eq(reader_info((enum sb_reader)99), reader_info(SB_READER_UNKNOWN));
}
