/* reader.c -- trace reader: zstd or plain JSON lines into a struct trace
 *
 * The parts (reader_int.h): this file splits lines, sorts and releases;
 * fastpath.c parses sample lines in place, decode.c every other record
 * through jansson, zread.c decompresses zstd a chunk ahead.
 */
#include "reader_int.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

void trace_event_release(struct trace_event *ev)
{
	if (!ev)
		return;
	free(ev->kind_name);
	free(ev->stage);
	free(ev->name);
	free(ev->note);
	free(ev->sha256);
	free(ev->dtype);
	free(ev->file);
	free(ev->metric);
	free(ev->device);
	free(ev->action);
	free(ev->reason);
	free(ev->extra_json);
	memset(ev, 0, sizeof(*ev));
	ev->ndim = -1;
}

void reader_start_release(struct trace_start *st)
{
	free(st->format);
	free(st->utc);
	free(st->mode);
	if (st->command)
		for (char **a = st->command; *a; a++)
			free(*a);
	free(st->command);
	free(st->host_name);
	free(st->host_os);
	free(st->host_kernel);
	free(st->host_machine);
	free(st->meter_backend);
	free(st->meter_footprint);
	for (size_t i = 0; i < st->nlabels; i++) {
		free(st->labels[i].key);
		free(st->labels[i].value);
	}
	free(st->labels);
	free(st->commit);
	free(st->extra_json);
	free(st->stop_at);
	memset(st, 0, sizeof(*st));
}

void reader_end_release(struct trace_end *end)
{
	free(end->reason);
	free(end->extra_json);
	memset(end, 0, sizeof(*end));
}

static void records_release(struct trace *tr)
{
	reader_start_release(&tr->start);
	tr->has_start = false;
	free(tr->samples);
	tr->samples = NULL;
	tr->nsamples = tr->samples_alloc = 0;
	for (size_t i = 0; i < tr->nevents; i++)
		trace_event_release(&tr->events[i]);
	free(tr->events);
	tr->events = NULL;
	tr->nevents = tr->events_alloc = 0;
	reader_end_release(&tr->end);
	tr->has_end = false;
	for (size_t i = 0; i < tr->nversions; i++) {
		free(tr->versions[i].key);
		free(tr->versions[i].value);
	}
	free(tr->versions);
	tr->versions = NULL;
	tr->nversions = 0;
}

void trace_release(struct trace *tr)
{
	if (!tr)
		return;
	records_release(tr);
	free(tr->path);
	memset(tr, 0, sizeof(*tr));
}

int reader_line_error(struct reader *r, const char *why)
{
	r->tr->damaged = true;
	return reader_error(r, "%s:%zu: %s", r->name, r->line, why);
}


int reader_line_too_long(struct reader *r)
{
	return reader_line_error(r, "line longer than " TRACE_MAX_LINE_WORDS
				    " (the longest a trace record may be): not a trace?");
}

int reader_parse_text(struct reader *r, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		r->line++;
		if ((size_t)(le - p) > TRACE_MAX_LINE)
			return reader_line_too_long(r);
		const char *q = skip_ws(p, le);
		if (q < le) {
			int rc = reader_fast_line(r, q, le);
			if (rc < 0)
				return -1;
			if (rc == 0 && (rc = reader_slow_line(r, q, le)) < 0)
				return rc;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* ---- sorting: stable, by t (the first member of both record types) ------ */

struct sort_key {
	double t;
	size_t i;
};

static int cmp_key(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static void sort_by_t(void *base, size_t n, size_t size)
{
	char *b = base;
	struct sort_key *keys = xmalloc(n * sizeof(*keys));
	for (size_t i = 0; i < n; i++) {
		memcpy(&keys[i].t, b + i * size, sizeof(double));
		keys[i].i = i;
	}
	qsort(keys, n, sizeof(*keys), cmp_key);
	char *tmp = xmalloc(n * size);
	for (size_t i = 0; i < n; i++)
		memcpy(tmp + i * size, b + keys[i].i * size, size);
	memcpy(b, tmp, n * size);
	free(tmp);
	free(keys);
}

/* ---- entry points ---------------------------------------------------------- */

/* After the records are in: sort, check for the start record. */
static int finish(struct reader *r, int ret)
{
	struct trace *tr = r->tr;
	if (ret == -2) { /* unknown format: refused with no records */
		records_release(tr);
		tr->damaged = true;
		return -1;
	}
	if (!r->samples_sorted)
		sort_by_t(tr->samples, tr->nsamples, sizeof(*tr->samples));
	if (!r->events_sorted)
		sort_by_t(tr->events, tr->nevents, sizeof(*tr->events));
	if (!ret && !tr->has_start) {
		tr->damaged = true;
		ret = reader_error(r, "%s: no start record (not a stagebench or stageload trace?)",
				   r->name);
	}
	return ret ? -1 : 0;
}

static int read_mem(struct reader *r, const void *data, size_t len)
{
	if (!len) {
		r->tr->damaged = true;
		return reader_error(r, "%s: empty file (no trace records)", r->name);
	}
	if (reader_is_zstd(data, len))
		return finish(r, reader_read_zstd(r, -1, data, len));
	return finish(r, reader_parse_text(r, data, len));
}

int trace_read_mem(const char *name, const void *data, size_t len, struct trace *tr)
{
	struct reader r = { .name = name, .tr = tr, .samples_sorted = true, .events_sorted = true };
	memset(tr, 0, sizeof(*tr));
	tr->path = xstrdup(name);
	return read_mem(&r, data, len);
}

#define READ_CHUNK (256u << 10)

/* Plain JSON lines from fd, a chunk at a time; buf holds the first len bytes. */
static int read_plain_fd(struct reader *r, int fd, char *buf, size_t len)
{
	struct strbuf tail = STRBUF_INIT;
	int ret = 0;
	for (;;) {
		if ((ret = reader_parse_chunk(r, &tail, buf, len)))
			break;
		ssize_t n;
		do
			n = read(fd, buf, READ_CHUNK);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			r->tr->damaged = true;
			ret = reader_error(r, "cannot read '%s': %s", r->name, strerror(errno));
			break;
		}
		if (!n)
			break;
		len = (size_t)n;
	}
	if (!ret && tail.len) /* a last line with no newline */
		ret = reader_parse_text(r, tail.buf, tail.len);
	strbuf_release(&tail);
	return ret;
}

/* The file a chunk at a time: the text of a long trace never sits in memory whole. */
static int read_path(struct reader *r, const char *path)
{
	int fd = open_regular_file(path, r->quiet);
	if (fd < 0) {
		r->tr->damaged = true;
		return -1;
	}
	char *buf = xmalloc(READ_CHUNK);
	ssize_t n;
	size_t len = 0;
	do { /* at least the 4 bytes of a zstd magic, when the file has them */
		n = read(fd, buf + len, READ_CHUNK - len);
		if (n > 0)
			len += (size_t)n;
	} while ((n < 0 && errno == EINTR) || (n > 0 && len < 4));
	int ret;
	if (n < 0) {
		r->tr->damaged = true;
		ret = reader_error(r, "cannot read '%s': %s", path, strerror(errno));
	} else if (!len) {
		r->tr->damaged = true;
		ret = reader_error(r, "%s: empty file (no trace records)", r->name);
	} else if (reader_is_zstd(buf, len)) {
		ret = finish(r, reader_read_zstd(r, fd, buf, len));
	} else {
		ret = finish(r, read_plain_fd(r, fd, buf, len));
	}
	free(buf);
	close(fd);
	return ret;
}

int trace_read(const char *path, struct trace *tr)
{
	struct reader r = { .name = path, .tr = tr, .samples_sorted = true, .events_sorted = true };
	memset(tr, 0, sizeof(*tr));
	tr->path = xstrdup(path);
	return read_path(&r, path);
}

int reader_read_quiet(const char *path, struct trace *tr, struct trace_summary *sum)
{
	struct reader r = { .name = path, .tr = tr, .samples_sorted = true, .events_sorted = true,
			    .quiet = true, .sum = sum };
	memset(tr, 0, sizeof(*tr));
	tr->path = xstrdup(path);
	return read_path(&r, path);
}

