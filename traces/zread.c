/* zread.c -- zstd traces: decompressed a chunk ahead in a second thread,
 * parsed in place; only the records of complete frames are kept */
#include "reader_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

/* A zstd frame (or a skippable frame) starts here: the magic, not the name. */
bool reader_is_zstd(const void *data, size_t len)
{
	const unsigned char *b = data;
	if (len < 4)
		return false;
	uint32_t magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
			 (uint32_t)b[3] << 24;
	return magic == ZSTD_MAGICNUMBER || (magic & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START;
}

/* What the reader had at the end of the last complete zstd frame. */
struct mark {
	size_t nsamples, nevents, line;
	bool has_start, has_end;
};

static void take_mark(const struct reader *r, struct mark *m)
{
	m->nsamples = r->tr->nsamples;
	m->nevents = r->tr->nevents;
	m->line = r->line;
	m->has_start = r->tr->has_start;
	m->has_end = r->tr->has_end;
}

/* Drop the records read after the mark (those of a frame cut short). */
static void back_to_mark(struct reader *r, const struct mark *m)
{
	struct trace *tr = r->tr;
	tr->nsamples = m->nsamples;
	while (tr->nevents > m->nevents)
		trace_event_release(&tr->events[--tr->nevents]);
	if (tr->has_end && !m->has_end) {
		reader_end_release(&tr->end);
		tr->has_end = false;
	}
	if (tr->has_start && !m->has_start) {
		reader_start_release(&tr->start);
		tr->has_start = false;
	}
}

/*
 * Decompression runs in a second thread, a chunk ahead of the parser: one
 * producer, one consumer, two chunk buffers handed back and forth under a
 * mutex. Without the thread (pthread_create failed) the parser decompresses
 * each chunk itself; the chunks and what is done with them are the same.
 */
#define ZSTD_CHUNK (256u << 10)

struct zchunk {
	char *buf;  /* ZSTD_CHUNK bytes */
	size_t len; /* text in buf */
	size_t z;   /* what ZSTD_decompressStream() returned */
	bool last;  /* nothing follows: an error, or the input is all used */
};

struct zsource {
	ZSTD_DStream *ds;
	ZSTD_inBuffer in;
	/* input from a file (fd >= 0): read ZSTD_IN bytes at a time into inbuf;
	 * from memory (fd -1): in holds it all */
	int fd;
	char *inbuf;
	bool eof;
	bool frame_done; /* the last call ended a frame */
	int read_errno;
	struct zchunk chunk[2];
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool full[2]; /* chunk[i] holds text the parser has not given back */
	bool quit;    /* the parser stopped: the producer stops too */
};

#define ZSTD_IN (128u << 10)

/* More compressed input from the file; sets eof at its end or on an error. */
static void refill(struct zsource *src)
{
	ssize_t n;
	do
		n = read(src->fd, src->inbuf, ZSTD_IN);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		src->eof = true;
		src->read_errno = n < 0 ? errno : 0;
		n = 0;
	}
	src->in = (ZSTD_inBuffer){ src->inbuf, (size_t)n, 0 };
}

/* Text until the chunk is full, a frame ends (z == 0), an error, or the
 * input is all used (last). */
static void decompress_chunk(struct zsource *src, struct zchunk *c)
{
	ZSTD_outBuffer ob = { c->buf, ZSTD_CHUNK, 0 };
	for (;;) {
		if (src->in.pos == src->in.size && !src->eof)
			refill(src);
		if (src->in.pos == src->in.size && src->eof && src->frame_done) {
			c->z = 0; /* the input ends where a frame did */
			c->last = true;
			break;
		}
		c->z = ZSTD_decompressStream(src->ds, &ob, &src->in);
		src->frame_done = c->z == 0;
		if (src->in.pos == src->in.size && !src->eof)
			refill(src); /* to know whether this is the end */
		c->last = ZSTD_isError(c->z) || (src->in.pos == src->in.size && src->eof &&
						 ob.pos < ob.size);
		if (c->last || c->z == 0 || ob.pos == ob.size)
			break;
	}
	c->len = ob.pos;
}

static void *zproducer(void *arg)
{
	struct zsource *src = arg;
	for (int i = 0;; i ^= 1) {
		pthread_mutex_lock(&src->mu);
		while (src->full[i] && !src->quit)
			pthread_cond_wait(&src->cond, &src->mu);
		bool quit = src->quit;
		pthread_mutex_unlock(&src->mu);
		if (quit)
			break;
		decompress_chunk(src, &src->chunk[i]);
		bool last = src->chunk[i].last;
		pthread_mutex_lock(&src->mu);
		src->full[i] = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->mu);
		if (last)
			break;
	}
	return NULL;
}

/* Chunk i (0, 1, 0, ...) of the text, in order. */
static struct zchunk *next_chunk(struct zsource *src, int i)
{
	if (!src->threaded) {
		decompress_chunk(src, &src->chunk[i]);
		return &src->chunk[i];
	}
	pthread_mutex_lock(&src->mu);
	while (!src->full[i])
		pthread_cond_wait(&src->cond, &src->mu);
	pthread_mutex_unlock(&src->mu);
	return &src->chunk[i];
}

/* The parser is done with chunk i: the producer may fill it again. */
static void give_back_chunk(struct zsource *src, int i)
{
	if (!src->threaded)
		return;
	pthread_mutex_lock(&src->mu);
	src->full[i] = false;
	pthread_cond_broadcast(&src->cond);
	pthread_mutex_unlock(&src->mu);
}

static int zsource_start(struct zsource *src, int fd, const void *data, size_t len)
{
	memset(src, 0, sizeof(*src));
	if (!(src->ds = ZSTD_createDStream()))
		return -1;
	ZSTD_initDStream(src->ds);
	src->fd = fd;
	src->eof = fd < 0;
	if (fd >= 0)
		src->inbuf = xmalloc(ZSTD_IN);
	src->in = (ZSTD_inBuffer){ data, len, 0 };
	src->chunk[0].buf = xmalloc(ZSTD_CHUNK);
	src->chunk[1].buf = xmalloc(ZSTD_CHUNK);
	pthread_mutex_init(&src->mu, NULL);
	pthread_cond_init(&src->cond, NULL);
	src->threaded = !pthread_create(&src->thread, NULL, zproducer, src);
	return 0;
}

static void zsource_stop(struct zsource *src)
{
	if (src->threaded) {
		pthread_mutex_lock(&src->mu);
		src->quit = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->mu);
		pthread_join(src->thread, NULL);
	}
	pthread_cond_destroy(&src->cond);
	pthread_mutex_destroy(&src->mu);
	free(src->chunk[0].buf);
	free(src->chunk[1].buf);
	free(src->inbuf);
	ZSTD_freeDStream(src->ds);
}

/*
 * Parse the complete lines of text[0, len), in place; a line cut by the end
 * of the chunk waits in tail for the rest.
 */
/* A line still without its end may not grow past the limit: a small
 * compressed file must not make the reader hold a huge line. */
static int tail_check(struct reader *r, const struct strbuf *tail)
{
	if (tail->len <= TRACE_MAX_LINE)
		return 0;
	r->line++;
	return reader_line_too_long(r);
}

int reader_parse_chunk(struct reader *r, struct strbuf *tail, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	const char *nl;
	int ret;

	if (tail->len) {
		if (!(nl = memchr(p, '\n', len))) {
			strbuf_add(tail, p, len);
			return tail_check(r, tail);
		}
		strbuf_add(tail, p, (size_t)(nl + 1 - p));
		ret = reader_parse_text(r, tail->buf, tail->len);
		strbuf_reset(tail);
		if (ret)
			return ret;
		p = nl + 1;
	}
	const char *last = end;
	while (last > p && last[-1] != '\n')
		last--; /* just past the last newline (memrchr is GNU-only) */
	if (last > p) {
		if ((ret = reader_parse_text(r, p, (size_t)(last - p))))
			return ret;
		p = last;
	}
	strbuf_add(tail, p, (size_t)(end - p));
	return tail_check(r, tail);
}

/*
 * Decompress and parse as the text comes, a chunk at a time (the text of a
 * long trace never sits in memory whole). Only the records of complete
 * frames are kept: a frame cut short (the writer killed inside write(2)) or
 * corrupt is reported at the line after the last complete one.
 */
int reader_read_zstd(struct reader *r, int fd, const void *data, size_t len)
{
	struct zsource src;
	struct strbuf tail = STRBUF_INIT;
	struct mark mark;
	size_t z = 0;
	int ret = 0;

	if (zsource_start(&src, fd, data, len))
		return reader_error(r, "%s: cannot allocate a zstd context", r->name);
	take_mark(r, &mark);
	for (int i = 0;; i ^= 1) {
		struct zchunk *c = next_chunk(&src, i);
		bool last = c->last;
		z = c->z;
		if (ZSTD_isError(z))
			break;
		ret = reader_parse_chunk(r, &tail, c->buf, c->len);
		give_back_chunk(&src, i);
		if (ret)
			break;
		if (z == 0) /* a frame ended and all of its text is out */
			take_mark(r, &mark);
		if (last)
			break;
	}
	int read_errno = src.read_errno;
	zsource_stop(&src);
	if (!ret && read_errno) {
		r->tr->damaged = true;
		ret = reader_error(r, "cannot read '%s': %s", r->name, strerror(read_errno));
	} else if (!ret && ZSTD_isError(z)) {
		back_to_mark(r, &mark);
		r->tr->damaged = true;
		ret = reader_error(r, "%s:%zu: corrupt zstd data: %s (the %zu lines before it are kept)",
			    r->name, mark.line + 1, ZSTD_getErrorName(z), mark.line);
	} else if (!ret && z != 0) {
		back_to_mark(r, &mark);
		r->tr->damaged = true;
		ret = reader_error(r, "%s:%zu: truncated zstd frame (the recording was cut off here; "
			    "the %zu lines before it are kept)", r->name, mark.line + 1, mark.line);
	} else if (!ret && tail.len) { /* a last line with no newline */
		ret = reader_parse_text(r, tail.buf, tail.len);
	}
	strbuf_release(&tail);
	return ret;
}

