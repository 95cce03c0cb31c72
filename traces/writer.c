/* writer.c -- append-only trace writer: JSON lines, one zstd frame per flush */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
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
	char num_txt[SAMPLE_NFIELDS][40];
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

/* Called after each record is appended: flush when the oldest record has
 * waited a flush interval (or the buffer is large). */
static int record_done(struct trace_writer *w, size_t len_before, int64_t now_ns)
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

/* A double that reads back as the same value, short when it can be. */
static void format_double(char buf[40], double v)
{
	if (!isfinite(v)) {
		strcpy(buf, "null");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, 40, "%.0f", v);
	} else {
		snprintf(buf, 40, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, 40, "%.17g", v);
	}
}

static void add_double(struct strbuf *sb, double v)
{
	char buf[40];
	format_double(buf, v);
	strbuf_addstr(sb, buf);
}

/* Decimal digits of v, without printf (a sample holds several numbers). */
static void add_u64(struct strbuf *sb, uint64_t v)
{
	char buf[24];
	char *p = buf + sizeof(buf);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_add(sb, p, (size_t)(buf + sizeof(buf) - p));
}

static void add_i64(struct strbuf *sb, int64_t v)
{
	if (v < 0) {
		strbuf_addch(sb, '-');
		add_u64(sb, (uint64_t)0 - (uint64_t)v);
	} else {
		add_u64(sb, (uint64_t)v);
	}
}

/* t: seconds, 0.1 ms resolution: the text of "%.4f", built from integers
 * when the rounding is unambiguous (printf otherwise). */
static void add_time(struct strbuf *sb, double t)
{
	if (!isfinite(t)) {
		strbuf_addstr(sb, "null");
		return;
	}
	double x = t * 10000.0;
	if (t >= 0 && x < 1e13) {
		/* x is within 2^-9 of t * 10^4: round only when far from a tie */
		double whole = floor(x), frac = x - whole;
		if (fabs(frac - 0.5) > 0.01) {
			uint64_t q = (uint64_t)whole + (frac > 0.5);
			char dec[4];
			uint64_t f = q % 10000;
			for (int i = 3; i >= 0; i--, f /= 10)
				dec[i] = (char)('0' + f % 10);
			add_u64(sb, q / 10000);
			strbuf_addch(sb, '.');
			strbuf_add(sb, dec, 4);
			return;
		}
	}
	strbuf_addf(sb, "%.4f", t);
}

static void key(struct strbuf *sb, const char *k)
{
	/* keys are literals chosen here: no escaping needed */
	strbuf_addch(sb, ',');
	strbuf_addch(sb, '"');
	strbuf_addstr(sb, k);
	strbuf_addstr(sb, "\":");
}

static void kv_str(struct strbuf *sb, const char *k, const char *v)
{
	if (!v)
		return;
	key(sb, k);
	json_escape(sb, v);
}

static void kv_u64(struct strbuf *sb, const char *k, uint64_t v)
{
	key(sb, k);
	add_u64(sb, v);
}

static void kv_i64(struct strbuf *sb, const char *k, int64_t v)
{
	key(sb, k);
	add_i64(sb, v);
}

static void kv_double(struct strbuf *sb, const char *k, double v)
{
	key(sb, k);
	add_double(sb, v);
}

/* Remove the comma key() put before an object's first key. */
static void drop_comma(struct strbuf *sb, size_t at)
{
	if (at < sb->len && sb->buf[at] == ',') {
		memmove(sb->buf + at, sb->buf + at + 1, sb->len - at); /* with the NUL */
		sb->len--;
	}
}

static void add_extra(struct strbuf *sb, const char *extra)
{
	if (extra && *extra) {
		strbuf_addch(sb, ',');
		strbuf_addstr(sb, extra);
	}
}

static int check(struct trace_writer *w)
{
	if (!w)
		BUG("trace writer is NULL");
	return w->failed ? -1 : 0;
}

int trace_writer_start(struct trace_writer *w, const struct trace_start *st)
{
	if (check(w))
		return -1;
	struct strbuf *sb = &w->buf;
	size_t before = sb->len;
	char utc[32];

	strbuf_addstr(sb, "{\"type\":\"start\",\"format\":\"" TRACE_FORMAT "\"");
	if (!st->utc)
		utc_iso8601(real_ns(), utc);
	kv_str(sb, "utc", st->utc ? st->utc : utc);
	if (st->interval > 0)
		kv_double(sb, "interval", st->interval);
	kv_str(sb, "mode", st->mode);
	if (st->has_seed)
		kv_i64(sb, "seed", st->seed);
	if (st->command) {
		key(sb, "command");
		strbuf_addch(sb, '[');
		for (char **a = st->command; *a; a++) {
			if (a != st->command)
				strbuf_addch(sb, ',');
			json_escape(sb, *a);
		}
		strbuf_addch(sb, ']');
	}
	if (st->host_name || st->host_os || st->host_kernel || st->host_machine || st->host_cpus ||
	    st->host_memory) {
		key(sb, "host");
		strbuf_addch(sb, '{');
		size_t open = sb->len;
		kv_str(sb, "name", st->host_name);
		kv_str(sb, "os", st->host_os);
		kv_str(sb, "kernel", st->host_kernel);
		kv_str(sb, "machine", st->host_machine);
		if (st->host_cpus > 0)
			kv_i64(sb, "cpus", st->host_cpus);
		if (st->host_memory)
			kv_u64(sb, "memory", st->host_memory);
		/* written even when 0: a machine without swap is worth knowing */
		kv_u64(sb, "swap", st->host_swap);
		drop_comma(sb, open);
		strbuf_addch(sb, '}');
	}
	if (st->meter_backend || st->meter_footprint) {
		key(sb, "meter");
		strbuf_addch(sb, '{');
		size_t open = sb->len;
		kv_str(sb, "backend", st->meter_backend);
		kv_str(sb, "footprint", st->meter_footprint);
		drop_comma(sb, open);
		strbuf_addch(sb, '}');
	}
	if (st->nlabels) {
		key(sb, "labels");
		strbuf_addch(sb, '{');
		for (size_t i = 0; i < st->nlabels; i++) {
			if (i)
				strbuf_addch(sb, ',');
			json_escape(sb, st->labels[i].key ? st->labels[i].key : "");
			strbuf_addch(sb, ':');
			if (st->labels[i].value)
				json_escape(sb, st->labels[i].value);
			else
				strbuf_addstr(sb, "null");
		}
		strbuf_addch(sb, '}');
	}
	kv_str(sb, "commit", st->commit);
	if (st->has_dirty) {
		key(sb, "dirty");
		strbuf_addstr(sb, st->dirty ? "true" : "false");
	}
	add_extra(sb, st->extra_json);
	strbuf_addch(sb, '}');
	record_done(w, before, mono_ns());
	/* the start record goes out at once: a trace file always begins with it */
	return trace_writer_flush(w);
}

/* The value of a sample field of each kind (TRACE_SAMPLE_FIELDS). */
static inline void put_BYTES(struct trace_writer *w, struct strbuf *sb, int i, uint64_t v)
{
	add_u64(sb, v);
}

static inline void put_COUNT(struct trace_writer *w, struct strbuf *sb, int i, int v)
{
	add_i64(sb, v);
}

static inline void put_NUMBER(struct trace_writer *w, struct strbuf *sb, int i, double v)
{
	unsigned bit = 1u << i;
	if (!(w->num_known & bit) || memcmp(&w->num_v[i], &v, sizeof(double))) {
		format_double(w->num_txt[i], v);
		w->num_v[i] = v;
		w->num_known |= bit;
	}
	strbuf_addstr(sb, w->num_txt[i]);
}

int trace_writer_sample(struct trace_writer *w, const struct trace_sample *s)
{
	if (check(w))
		return -1;
	struct strbuf *sb = &w->buf;
	size_t before = sb->len;
	unsigned f = s->fields;

	strbuf_addstr(sb, "{\"type\":\"sample\",\"t\":");
	add_time(sb, s->t);
#define X(UP, key, bit, kind, what) \
	if (f & SF_##UP) { \
		strbuf_add(sb, ",\"" #key "\":", sizeof(#key) + 3); \
		put_##kind(w, sb, SFI_##UP, s->key); \
	}
	TRACE_SAMPLE_FIELDS(X)
#undef X
	strbuf_addch(sb, '}');
	return record_done(w, before, mono_ns());
}

/* The body of an event record after "type" (shared with tests through the
 * writer only). */
static void event_body(struct strbuf *sb, const struct trace_event *ev)
{
	const char *kind = event_kind_name(ev->kind);
	if (!kind)
		kind = ev->kind_name ? ev->kind_name : "other";
	key(sb, "kind");
	json_escape(sb, kind);
	key(sb, "t");
	add_time(sb, ev->t);
	kv_str(sb, "stage", ev->stage);
	kv_str(sb, "name", ev->name);
	if (ev->has_nbytes)
		kv_u64(sb, "nbytes", ev->nbytes);
	if (ev->has_seconds)
		kv_double(sb, "seconds", ev->seconds);
	kv_str(sb, "sha256", ev->sha256);
	kv_str(sb, "dtype", ev->dtype);
	if (ev->ndim > 0 || (ev->ndim == 0 && ev->kind == EV_LATENT)) {
		int n = ev->ndim > EVENT_MAX_DIMS ? EVENT_MAX_DIMS : ev->ndim;
		key(sb, "shape");
		strbuf_addch(sb, '[');
		for (int i = 0; i < n; i++)
			strbuf_addf(sb, i ? ",%lld" : "%lld", (long long)ev->shape[i]);
		strbuf_addch(sb, ']');
	}
	kv_str(sb, "file", ev->file);
	kv_str(sb, "metric", ev->metric);
	kv_str(sb, "device", ev->device);
	if (ev->has_bytes)
		kv_u64(sb, "bytes", ev->bytes);
	if (ev->has_max_bytes)
		kv_u64(sb, "max_bytes", ev->max_bytes);
	if (ev->has_from) {
		key(sb, "from");
		add_time(sb, ev->from);
	}
	kv_str(sb, "action", ev->action);
	kv_str(sb, "reason", ev->reason);
	kv_str(sb, "note", ev->note);
	add_extra(sb, ev->extra_json);
}

int trace_writer_event(struct trace_writer *w, const struct trace_event *ev)
{
	if (check(w))
		return -1;
	size_t before = w->buf.len;
	strbuf_addstr(&w->buf, "{\"type\":\"event\"");
	event_body(&w->buf, ev);
	strbuf_addch(&w->buf, '}');
	if (record_done(w, before, mono_ns()))
		return -1;
	/* events go out at once, as their own frame with whatever samples wait */
	return trace_writer_flush(w);
}

int trace_writer_end(struct trace_writer *w, const struct trace_end *end)
{
	if (check(w))
		return -1;
	struct strbuf *sb = &w->buf;
	size_t before = sb->len;
	strbuf_addstr(sb, "{\"type\":\"end\"");
	if (end->has_exit)
		kv_i64(sb, "exit", end->exit_code);
	if (end->signal)
		kv_i64(sb, "signal", end->signal);
	kv_str(sb, "stopped_by", stopped_by_name(end->stopped_by));
	kv_str(sb, "reason", end->reason);
	if (end->has_wall)
		kv_double(sb, "wall", end->wall);
	if (end->has_cpu)
		kv_double(sb, "cpu", end->cpu);
	add_extra(sb, end->extra_json);
	strbuf_addch(sb, '}');
	record_done(w, before, mono_ns());
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
