/* records.c -- the reader's third layer: the lines of lines.c decoded into
 * records (samples through the fast path, fastpath.c; everything else
 * through jansson, decode.c) and handed to a sink (sink.h); the entry points
 * trace_read_sink() and trace_read_mem_sink() */
#include "reader_int.h"

#include <stdlib.h>

struct records {
	const struct read_ctx *c;
	const struct trace_sink *sink;
	struct lines L;
	bool has_start, has_end;
	bool mark_start, mark_end; /* has_start, has_end at the last mark */
};

static int line_error(struct records *R, const char *why)
{
	return read_error(R->c, "%s:%zu: %s", R->c->name, R->L.line, why);
}

static void hand_versions(struct records *R, struct decoded *d)
{
	const struct trace_sink *k = R->sink;
	for (size_t i = 0; k->version && i < d->nversions; i++)
		k->version(k->arg, d->versions[i].key, d->versions[i].value);
	decoded_release_versions(d);
}

/* A record decoded by jansson to the sink (or released). */
static void hand_over(struct records *R, struct decoded *d)
{
	const struct trace_sink *k = R->sink;
	switch (d->kind) {
	case REC_SAMPLE:
		if (k->sample)
			k->sample(k->arg, &d->sample);
		break;
	case REC_EVENT:
		d->event.line = R->L.line;
		if (k->event)
			k->event(k->arg, &d->event);
		else
			trace_event_release(&d->event);
		break;
	case REC_START:
		R->has_start = true;
		if (k->start)
			k->start(k->arg, &d->start);
		else
			reader_start_release(&d->start);
		break;
	case REC_END:
		R->has_end = true;
		if (k->end)
			k->end(k->arg, &d->end);
		else
			reader_end_release(&d->end);
		break;
	case REC_NONE:
		break;
	}
	hand_versions(R, d);
}

/* One non-blank line. 0, -1 (printed), -2 unknown format (printed). */
static int record(struct records *R, const char *p, const char *end)
{
	char why[512];
	struct decoded d;
	int rc = fast_record(p, end, &d.sample, &d.event, why, sizeof(why));
	if (rc == FAST_SAMPLE) {
		if (R->sink->sample)
			R->sink->sample(R->sink->arg, &d.sample);
		return 0;
	}
	if (rc == FAST_EVENT) {
		d.kind = REC_EVENT;
		d.versions = NULL;
		d.nversions = 0;
		hand_over(R, &d);
		return 0;
	}
	if (rc < 0)
		return line_error(R, why);
	if ((rc = decode_line(p, end, R->has_start, R->has_end, &d, why, sizeof(why)))) {
		line_error(R, why);
		return rc;
	}
	hand_over(R, &d);
	return 0;
}

static void mark(struct records *R)
{
	R->mark_start = R->has_start;
	R->mark_end = R->has_end;
	if (R->sink->mark)
		R->sink->mark(R->sink->arg);
}

static void rollback(struct records *R)
{
	R->has_start = R->mark_start;
	R->has_end = R->mark_end;
	if (R->sink->rollback)
		R->sink->rollback(R->sink->arg);
}

static int records_loop(struct records *R)
{
	for (;;) {
		const char *p, *end;
		switch (lines_next(&R->L, &p, &end)) {
		case LINE_TEXT:
			p = reader_skip_ws(p, end);
			if (p < end) {
				int rc = record(R, p, end);
				if (rc)
					return rc;
			}
			break;
		case LINE_MARK:
			mark(R);
			break;
		case LINE_END:
			mark(R);
			return 0;
		case LINE_ERROR:
			return -1;
		case LINE_CUT:
			rollback(R);
			return -1;
		}
	}
}

int records_read(const struct read_ctx *c, struct bytes *b, const struct trace_sink *sink)
{
	struct records R = { .c = c, .sink = sink };
	lines_init(&R.L, c, b);
	int ret = records_loop(&R);
	lines_release(&R.L);
	if (!ret && !R.has_start)
		ret = read_error(c, "%s: no start record (not a stagebench or stageload trace?)",
				 c->name);
	return ret;
}

int trace_read_sink(const char *path, const struct trace_sink *sink, unsigned flags)
{
	struct read_ctx c = { .name = path, .quiet = flags & TRACE_READ_QUIET };
	struct bytes *b = bytes_open_path(&c, path);
	if (!b)
		return -1;
	int ret = records_read(&c, b, sink);
	bytes_close(b);
	return ret;
}

int trace_read_mem_sink(const char *name, const void *data, size_t len,
			const struct trace_sink *sink, unsigned flags)
{
	struct read_ctx c = { .name = name, .quiet = flags & TRACE_READ_QUIET };
	struct bytes *b = bytes_open_mem(&c, data, len);
	if (!b)
		return -1;
	int ret = records_read(&c, b, sink);
	bytes_close(b);
	return ret;
}
