/* test_trace_fastpath.c -- the reader's fast path (traces/fastpath.c) reads
 * event lines exactly as jansson's path (decode.c) does */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../traces/trace.h"

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void assert_same_event(const struct trace_event *a, const struct trace_event *b,
			      const char *line)
{
	cr_assert_eq(a->t, b->t, "t: %s", line);
	cr_assert_eq(a->kind, b->kind, "kind: %s", line);
	cr_assert(same_str(a->kind_name, b->kind_name), "kind_name: %s", line);
	cr_assert(same_str(a->stage, b->stage), "stage: %s", line);
	cr_assert(same_str(a->name, b->name), "name: %s", line);
	cr_assert(same_str(a->note, b->note), "note: %s", line);
	cr_assert(same_str(a->sha256, b->sha256), "sha256: %s", line);
	cr_assert(same_str(a->dtype, b->dtype), "dtype: %s", line);
	cr_assert(same_str(a->file, b->file), "file: %s", line);
	cr_assert(same_str(a->metric, b->metric), "metric: %s", line);
	cr_assert(same_str(a->device, b->device), "device: %s", line);
	cr_assert(same_str(a->action, b->action), "action: %s", line);
	cr_assert(same_str(a->reason, b->reason), "reason: %s", line);
	cr_assert(same_str(a->extra_json, b->extra_json), "extra_json: %s", line);
	cr_assert_eq(a->has_nbytes, b->has_nbytes, "%s", line);
	cr_assert_eq(a->nbytes, b->nbytes, "%s", line);
	cr_assert_eq(a->has_bytes, b->has_bytes, "%s", line);
	cr_assert_eq(a->bytes, b->bytes, "%s", line);
	cr_assert_eq(a->has_max_bytes, b->has_max_bytes, "%s", line);
	cr_assert_eq(a->max_bytes, b->max_bytes, "%s", line);
	cr_assert_eq(a->has_seconds, b->has_seconds, "%s", line);
	cr_assert_eq(a->seconds, b->seconds, "%s", line);
	cr_assert_eq(a->has_from, b->has_from, "%s", line);
	cr_assert_eq(a->from, b->from, "%s", line);
	cr_assert_eq(a->ndim, b->ndim, "%s", line);
}

/* Values of every type a key may meet, the odd numbers included. */
static const char *const values[] = {
	"\"encode\"", "\"\"", "\"a b/c.d\"", "\"caf\\u00e9\"", "\"x\\\"y\"", "0", "-0", "7",
	"-3", "1.5", "2.0", "1e3", "9223372036854775807", "9223372036854775808",
	"18446744073709551615", "123456789012.25", "null", "true", "false", "[1,2]", "{}",
};
static const char *const keys[] = {
	"kind", "t", "stage", "name", "note", "sha256", "dtype", "file", "metric", "device",
	"action", "reason", "nbytes", "bytes", "max_bytes", "seconds", "from", "extra", "shape",
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A random event line: a kind and t mostly right, then random keys and values. */
static void random_event(struct strbuf *sb, unsigned *seed)
{
	strbuf_reset(sb);
	strbuf_addstr(sb, "{\"type\":\"event\"");
	if (rand_r(seed) % 8)
		strbuf_addstr(sb, rand_r(seed) % 2 ? ",\"kind\":\"stage\"" : ",\"kind\":\"load\"");
	if (rand_r(seed) % 8)
		strbuf_addf(sb, ",\"t\":%d.%03d", rand_r(seed) % 1000, rand_r(seed) % 1000);
	int n = rand_r(seed) % 6;
	for (int i = 0; i < n; i++)
		strbuf_addf(sb, ",\"%s\":%s", keys[rand_r(seed) % N(keys)],
			    rand_r(seed) % 3 ? values[rand_r(seed) % 5] : values[rand_r(seed) % N(values)]);
	strbuf_addstr(sb, "}");
}

Test(trace_fastpath, event_lines_read_as_jansson_reads_them)
{
	struct strbuf line = STRBUF_INIT, text = STRBUF_INIT;
	unsigned seed = 30;
	size_t same = 0;
	for (int i = 0; i < 20000; i++) {
		random_event(&line, &seed);
		struct trace_event want;
		const char *why = NULL;
		int want_rc = trace_parse_probe_line(line.buf, line.len, 0, &want, &why);
		strbuf_reset(&text);
		strbuf_addf(&text, "{\"type\":\"start\"}\n%s\n", line.buf);
		struct trace tr = TRACE_INIT;
		int rc = trace_read_mem("ev", text.buf, text.len, &tr);
		if (want_rc) {
			cr_assert_neq(rc, 0, "read although jansson's path refuses it: %s", line.buf);
		} else {
			cr_assert_eq(rc, 0, "refused although jansson's path reads it: %s", line.buf);
			cr_assert_eq(tr.nevents, 1, "%s", line.buf);
			assert_same_event(&tr.events[0], &want, line.buf);
			same++;
		}
		trace_event_release(&want);
		trace_release(&tr);
	}
	cr_assert_geq(same, 5000, "only %zu lines read", same);
	strbuf_release(&line);
	strbuf_release(&text);
}

/* The lines the writer writes, and a duplicate key (the last value counts). */
Test(trace_fastpath, plain_and_duplicate_key_event_lines)
{
	static const char *const lines[] = {
		"{\"type\":\"event\",\"kind\":\"stage\",\"t\":12.345,\"stage\":\"decode\"}",
		"{\"type\":\"event\",\"kind\":\"release\",\"t\":1.0,\"name\":\"m\",\"stage\":\"s\","
		"\"nbytes\":536870912}",
		"{\"type\":\"event\",\"kind\":\"peak\",\"t\":3,\"stage\":\"s\",\"metric\":\"rss\","
		"\"bytes\":4096,\"from\":1.25}",
		"{\"type\":\"event\",\"kind\":\"stage\",\"t\":1,\"stage\":\"a\",\"stage\":\"b\"}",
		"{\"type\":\"event\",\"kind\":\"guard\",\"t\":2,\"action\":\"stop\",\"reason\":\"r\"}",
	};
	for (size_t i = 0; i < N(lines); i++) {
		struct trace_event want;
		const char *why = NULL;
		cr_assert_eq(trace_parse_probe_line(lines[i], strlen(lines[i]), 0, &want, &why), 0);
		char *text = xasprintf("{\"type\":\"start\"}\n%s\n", lines[i]);
		struct trace tr = TRACE_INIT;
		cr_assert_eq(trace_read_mem("ev", text, strlen(text), &tr), 0, "%s", lines[i]);
		cr_assert_eq(tr.nevents, 1);
		cr_assert_eq(tr.events[0].line, 2);
		assert_same_event(&tr.events[0], &want, lines[i]);
		trace_event_release(&want);
		trace_release(&tr);
		free(text);
	}
}
