/* writer.c -- append-only trace writer: JSON lines, one zstd frame per flush */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../common/jsonw.h"
#include "../common/util.h"

#define DEFAULT_FLUSH_NS 1000000000LL
/* Flush early when this much text is buffered, whatever its age. */
#define MAX_BUFFERED (1u << 20)

struct trace_writer {
	char *path;
	int fd;
	bool zst;
	bool failed;         /* a write failed: every later call returns -1 */
	struct strbuf buf;   /* records not yet written */
	int64_t buf_since_ns;/* when the oldest buffered record was added */
	int64_t flush_every_ns;
	ZSTD_CCtx *cctx;
	trace_write_fn write_fn; /* NULL: write(2) */
	void *write_arg;
	void *frame;
	size_t frame_alloc;
	/* the text of each NUMBER sample field's last value (level): it changes
	 * only when the meter re-reads the system figures, and formatting it is
	 * the costly part */
	unsigned num_known; /* SF_* bits */
	double num_v[SAMPLE_NFIELDS];
	char num_txt[SAMPLE_NFIELDS][JW_DOUBLE_MAX];
};

struct trace_writer *trace_writer_open(const char *path)
{
	int fd = open_output(path, 0);
	if (fd < 0)
		return NULL;
	struct trace_writer *w = xcalloc(1, sizeof(*w));
	w->path = xstrdup(path);
	w->fd = fd;
	w->zst = str_ends_with(path, ".zst");
	w->flush_every_ns = DEFAULT_FLUSH_NS;
	strbuf_init(&w->buf);
	if (w->zst) {
		w->cctx = ZSTD_createCCtx();
		if (!w->cctx) {
			error("cannot create a zstd context for '%s'", path);
			close(fd);
			free(w->path);
			free(w);
			return NULL;
		}
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, 3);
		/* a checksum per frame lets the reader tell a damaged frame */
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	}
	return w;
}

void trace_writer_set_flush_interval(struct trace_writer *w, int64_t ns)
{
	if (w)
		w->flush_every_ns = ns > 0 ? ns : DEFAULT_FLUSH_NS;
}

void trace_writer_set_write_fn(struct trace_writer *w, trace_write_fn fn, void *arg)
{
	w->write_fn = fn;
	w->write_arg = arg;
}

static int writer_write(struct trace_writer *w, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = w->write_fn ? w->write_fn(w->fd, p, len, w->write_arg) :
					  write(w->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			w->failed = true;
			return error("cannot write trace '%s': %s", w->path, strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int trace_writer_flush(struct trace_writer *w)
{
	if (!w)
		return 0;
	if (w->failed)
		return -1;
	if (!w->buf.len)
		return 0;
	int ret;
	if (w->zst) {
		size_t bound = ZSTD_compressBound(w->buf.len);
		if (bound > w->frame_alloc) {
			w->frame = xrealloc(w->frame, bound);
			w->frame_alloc = bound;
		}
		size_t n = ZSTD_compress2(w->cctx, w->frame, w->frame_alloc, w->buf.buf, w->buf.len);
		if (ZSTD_isError(n)) {
			w->failed = true;
			return error("cannot compress trace '%s': %s", w->path, ZSTD_getErrorName(n));
		}
		ret = writer_write(w, w->frame, n);
	} else {
		ret = writer_write(w, w->buf.buf, w->buf.len);
	}
	strbuf_reset(&w->buf);
	return ret;
}

/* Called after each record is appended: drop it when it is longer than a
 * trace line may be, else end its line, and flush when the oldest record has
 * waited a flush interval (or the buffer is large). */
static int record_added(struct trace_writer *w, size_t len_before, int64_t now_ns)
{
	size_t len = w->buf.len - len_before;
	if (len > TRACE_MAX_LINE) {
		const char *type = w->buf.buf + len_before + strlen("{\"type\":\"");
		warning("trace '%s': %.*s record of %zu bytes not written (a trace line is at most "
			TRACE_MAX_LINE_WORDS ")", w->path, (int)strcspn(type, "\""), type, len);
		w->buf.len = len_before;
		w->buf.buf[len_before] = '\0';
		return 0;
	}
	strbuf_addch(&w->buf, '\n');
	if (len_before == 0)
		w->buf_since_ns = now_ns;
	if (now_ns - w->buf_since_ns >= w->flush_every_ns || w->buf.len >= MAX_BUFFERED)
		return trace_writer_flush(w);
	return 0;
}

/* Records are JSON objects on one line; times have 0.1 ms resolution. */
#define TIME_DECIMALS 4

static void opt_string(struct jsonw *j, const char *key, const char *v)
{
	if (v) {
		jw_key(j, key);
		jw_string(j, v);
	}
}

/* A record's typed extra keys, then those it was read with. */
static void extra_keys(struct jsonw *j, const struct trace_fields *fields, const char *extra_json)
{
	trace_fields_write(j, fields);
	jw_members(j, extra_json);
}

/* The writer cannot take a record: it is NULL (a bug), or a write failed. */
static bool writer_failed(const struct trace_writer *w)
{
	if (!w)
		BUG("trace writer is NULL");
	return w->failed;
}

static void writer_start_host(struct jsonw *j, const struct trace_start *st)
{
	if (!(st->host_name || st->host_os || st->host_kernel || st->host_machine ||
	      st->host_cpus || st->host_memory))
		return;
	jw_key(j, "host");
	jw_object_begin(j);
	opt_string(j, "name", st->host_name);
	opt_string(j, "os", st->host_os);
	opt_string(j, "kernel", st->host_kernel);
	opt_string(j, "machine", st->host_machine);
	if (st->host_cpus > 0) {
		jw_key(j, "cpus");
		jw_i64(j, st->host_cpus);
	}
	if (st->host_memory) {
		jw_key(j, "memory");
		jw_u64(j, st->host_memory);
	}
	/* written even when 0: a machine without swap is worth knowing */
	jw_key(j, "swap");
	jw_u64(j, st->host_swap);
	jw_object_end(j);
}

static void start_meter_labels(struct jsonw *j, const struct trace_start *st)
{
	if (st->meter_backend || st->meter_footprint) {
		jw_key(j, "meter");
		jw_object_begin(j);
		opt_string(j, "backend", st->meter_backend);
		opt_string(j, "footprint", st->meter_footprint);
		jw_object_end(j);
	}
	if (st->nlabels) {
		jw_key(j, "labels");
		jw_object_begin(j);
		for (size_t i = 0; i < st->nlabels; i++) {
			jw_key(j, st->labels[i].key ? st->labels[i].key : "");
			jw_string(j, st->labels[i].value);
		}
		jw_object_end(j);
	}
}

int trace_writer_start(struct trace_writer *w, const struct trace_start *st)
{
	if (writer_failed(w))
		return -1;
	size_t before = w->buf.len;
	struct jsonw j = JSONW_COMPACT(&w->buf);
	char utc[32];

	jw_object_begin(&j);
	opt_string(&j, "type", "start");
	opt_string(&j, "format", TRACE_FORMAT);
	if (!st->utc)
		utc_iso8601(real_ns(), utc);
	opt_string(&j, "utc", st->utc ? st->utc : utc);
	if (st->interval > 0) {
		jw_key(&j, "interval");
		jw_double(&j, st->interval);
	}
	opt_string(&j, "mode", st->mode);
	if (st->has_seed) {
		jw_key(&j, "seed");
		jw_i64(&j, st->seed);
	}
	if (st->command) {
		jw_key(&j, "command");
		jw_array_begin(&j);
		for (char **a = st->command; *a; a++)
			jw_string(&j, *a);
		jw_array_end(&j);
	}
	writer_start_host(&j, st);
	start_meter_labels(&j, st);
	opt_string(&j, "commit", st->commit);
	if (st->has_dirty) {
		jw_key(&j, "dirty");
		jw_bool(&j, st->dirty);
	}
	extra_keys(&j, &st->fields, st->extra_json);
	jw_object_end(&j);
	record_added(w, before, mono_ns());
	/* the start record goes out at once: a trace file always begins with it */
	return trace_writer_flush(w);
}

/* The value of a sample field of each kind (TRACE_SAMPLE_FIELDS). */
static inline void put_BYTES(struct trace_writer *w, struct jsonw *j, int i, uint64_t v)
{
	jw_u64(j, v);
}

static inline void put_COUNT(struct trace_writer *w, struct jsonw *j, int i, int v)
{
	jw_i64(j, v);
}

static inline void put_NUMBER(struct trace_writer *w, struct jsonw *j, int i, double v)
{
	unsigned bit = 1u << i;
	if (!(w->num_known & bit) || memcmp(&w->num_v[i], &v, sizeof(double))) {
		jw_format_double(w->num_txt[i], v);
		w->num_v[i] = v;
		w->num_known |= bit;
	}
	jw_raw(j, w->num_txt[i]);
}

int trace_writer_sample(struct trace_writer *w, const struct trace_sample *s)
{
	if (writer_failed(w))
		return -1;
	size_t before = w->buf.len;
	struct jsonw j = JSONW_COMPACT(&w->buf);
	unsigned f = s->fields;

	jw_object_begin(&j);
	opt_string(&j, "type", "sample");
	jw_key(&j, "t");
	jw_fixed(&j, s->t, TIME_DECIMALS);
#define X(UP, key, bit, kind, what) \
	if (f & SF_##UP) { \
		jw_key(&j, #key); \
		put_##kind(w, &j, SFI_##UP, s->key); \
	}
	TRACE_SAMPLE_FIELDS(X)
#undef X
	jw_object_end(&j);
	return record_added(w, before, mono_ns());
}

static void opt_u64(struct jsonw *j, bool has, const char *key, uint64_t v)
{
	if (has) {
		jw_key(j, key);
		jw_u64(j, v);
	}
}

/* The keys of an event record after "type". */
static void event_body(struct jsonw *j, const struct trace_event *ev)
{
	const char *kind = event_kind_name(ev->kind);
	if (!kind)
		kind = ev->kind_name ? ev->kind_name : "other";
	opt_string(j, "kind", kind);
	jw_key(j, "t");
	jw_fixed(j, ev->t, TIME_DECIMALS);
	opt_string(j, "stage", ev->stage);
	opt_string(j, "name", ev->name);
	opt_u64(j, ev->has_nbytes, "nbytes", ev->nbytes);
	if (ev->has_seconds) {
		jw_key(j, "seconds");
		jw_double(j, ev->seconds);
	}
	opt_string(j, "sha256", ev->sha256);
	opt_string(j, "dtype", ev->dtype);
	if (ev->ndim > 0 || (ev->ndim == 0 && ev->kind == EV_LATENT)) {
		int n = ev->ndim > EVENT_MAX_DIMS ? EVENT_MAX_DIMS : ev->ndim;
		jw_key(j, "shape");
		jw_array_begin(j);
		for (int i = 0; i < n; i++)
			jw_i64(j, ev->shape[i]);
		jw_array_end(j);
	}
	opt_string(j, "file", ev->file);
	opt_string(j, "metric", ev->metric);
	opt_string(j, "device", ev->device);
	opt_u64(j, ev->has_bytes, "bytes", ev->bytes);
	opt_u64(j, ev->has_max_bytes, "max_bytes", ev->max_bytes);
	if (ev->has_from) {
		jw_key(j, "from");
		jw_fixed(j, ev->from, TIME_DECIMALS);
	}
	opt_string(j, "action", ev->action);
	opt_string(j, "reason", ev->reason);
	opt_string(j, "note", ev->note);
	extra_keys(j, &ev->fields, ev->extra_json);
}

int trace_writer_event(struct trace_writer *w, const struct trace_event *ev)
{
	if (writer_failed(w))
		return -1;
	size_t before = w->buf.len;
	struct jsonw j = JSONW_COMPACT(&w->buf);
	jw_object_begin(&j);
	opt_string(&j, "type", "event");
	event_body(&j, ev);
	jw_object_end(&j);
	if (record_added(w, before, mono_ns()))
		return -1;
	/* events go out at once, as their own frame with whatever samples wait */
	return trace_writer_flush(w);
}

int trace_writer_end(struct trace_writer *w, const struct trace_end *end)
{
	if (writer_failed(w))
		return -1;
	size_t before = w->buf.len;
	struct jsonw j = JSONW_COMPACT(&w->buf);
	jw_object_begin(&j);
	opt_string(&j, "type", "end");
	if (end->has_exit) {
		jw_key(&j, "exit");
		jw_i64(&j, end->exit_code);
	}
	if (end->signal) {
		jw_key(&j, "signal");
		jw_i64(&j, end->signal);
	}
	opt_string(&j, "stopped_by", stopped_by_name(end->stopped_by));
	opt_string(&j, "reason", end->reason);
	if (end->has_wall) {
		jw_key(&j, "wall");
		jw_double(&j, end->wall);
	}
	if (end->has_cpu) {
		jw_key(&j, "cpu");
		jw_double(&j, end->cpu);
	}
	jw_members(&j, end->extra_json);
	jw_object_end(&j);
	record_added(w, before, mono_ns());
	return trace_writer_flush(w);
}

int trace_writer_close(struct trace_writer *w)
{
	if (!w)
		return 0;
	int ret = trace_writer_flush(w);
	if (close(w->fd) < 0 && !ret)
		ret = error("cannot write trace '%s': %s", w->path, strerror(errno));
	if (w->failed)
		ret = -1;
	ZSTD_freeCCtx(w->cctx);
	free(w->frame);
	strbuf_release(&w->buf);
	free(w->path);
	free(w);
	return ret;
}
