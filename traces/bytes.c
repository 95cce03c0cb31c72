/* bytes.c -- the reader's lowest layer: a trace's text as chunks, from a
 * plain file read a chunk at a time, from memory, or from zstd decompressed a
 * chunk ahead in a second thread. It calls nothing of the reader above it. */
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
	uint64_t frame_at; /* compressed offset where the frame this chunk ends in began */
	uint64_t in_at;    /* compressed offset after the input this chunk used */
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
	uint64_t in_base;  /* compressed offset of in.src[0] */
	uint64_t frame_at; /* compressed offset where the current frame began */
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
	src->in_base += src->in.size;
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
		if (src->frame_done)
			src->frame_at = src->in_base + src->in.pos;
		c->frame_at = src->frame_at;
		c->in_at = src->in_base + src->in.pos;
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


/* ---- the byte source ---------------------------------------------------- */

#define READ_CHUNK (256u << 10)

struct bytes {
	const struct read_ctx *c;
	int fd;           /* -1: memory */
	char *buf;        /* READ_CHUNK bytes: a plain file's chunks, a zstd file's first bytes */
	const char *mem;  /* plain text not yet handed out (memory, a file's first chunk) */
	size_t memlen;
	bool zstd;
	struct zsource src;
	int zi;           /* the zstd chunk handed out last; -1 none */
	size_t z;         /* what decompression said last */
	bool last;        /* the chunk handed out is the last one */
	bool ended;
	uint64_t frame_at, in_at; /* the chunk handed out last: struct zchunk */
};

static struct bytes *bytes_new(const struct read_ctx *c, int fd)
{
	struct bytes *b = xcalloc(1, sizeof(*b));
	b->c = c;
	b->fd = fd;
	b->zi = -1;
	return b;
}

/* The text starts at data[0, len): zstd or plain. NULL after a message. */
static struct bytes *bytes_begin(struct bytes *b, const void *data, size_t len)
{
	if (!len) {
		read_error(b->c, "%s: empty file (no trace records)", b->c->name);
		bytes_close(b);
		return NULL;
	}
	if (reader_is_zstd(data, len)) {
		b->zstd = true;
		if (zsource_start(&b->src, b->fd, data, len)) {
			read_error(b->c, "%s: cannot allocate a zstd context", b->c->name);
			b->zstd = false;
			bytes_close(b);
			return NULL;
		}
	} else {
		b->mem = data;
		b->memlen = len;
	}
	return b;
}

struct bytes *bytes_open_mem(const struct read_ctx *c, const void *data, size_t len)
{
	return bytes_begin(bytes_new(c, -1), data, len);
}

/* read(2) again on EINTR; -1 with errno. */
static ssize_t read_some(int fd, char *buf, size_t len)
{
	ssize_t n;
	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* The file a chunk at a time: the text of a long trace never sits in memory whole. */
struct bytes *bytes_open_path(const struct read_ctx *c, const char *path)
{
	int fd = open_regular_file(path, c->quiet);
	if (fd < 0)
		return NULL;
	struct bytes *b = bytes_new(c, fd);
	b->buf = xmalloc(READ_CHUNK);
	ssize_t n;
	size_t len = 0;
	do { /* at least the 4 bytes of a zstd magic, when the file has them */
		n = read_some(fd, b->buf + len, READ_CHUNK - len);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0 && len < 4);
	if (n < 0) {
		read_error(c, "cannot read '%s': %s", path, strerror(errno));
		bytes_close(b);
		return NULL;
	}
	return bytes_begin(b, b->buf, len);
}

static enum bytes_status next_plain(struct bytes *b, const char **p, size_t *len)
{
	if (!b->memlen && b->fd >= 0 && !b->ended) {
		ssize_t n = read_some(b->fd, b->buf, READ_CHUNK);
		if (n < 0) {
			b->ended = true;
			read_error(b->c, "cannot read '%s': %s", b->c->name, strerror(errno));
			return BYTES_EREAD;
		}
		b->mem = b->buf;
		b->memlen = (size_t)n;
	}
	if (!b->memlen) {
		b->ended = true;
		return BYTES_END;
	}
	*p = b->mem;
	*len = b->memlen;
	b->memlen = 0;
	return BYTES_CHUNK;
}

static enum bytes_status next_zstd(struct bytes *b, const char **p, size_t *len, bool *frame_end)
{
	if (b->zi >= 0) {
		give_back_chunk(&b->src, b->zi);
		if (b->last) {
			b->ended = true;
			if (b->src.read_errno) {
				read_error(b->c, "cannot read '%s': %s", b->c->name,
					   strerror(b->src.read_errno));
				return BYTES_EREAD;
			}
			return b->z == 0 ? BYTES_END : BYTES_ETRUNC;
		}
	}
	b->zi = b->zi < 0 ? 0 : b->zi ^ 1;
	struct zchunk *c = next_chunk(&b->src, b->zi);
	b->z = c->z;
	b->last = c->last;
	b->frame_at = c->frame_at;
	b->in_at = c->in_at;
	if (ZSTD_isError(c->z)) {
		b->ended = true;
		if (b->src.read_errno) {
			read_error(b->c, "cannot read '%s': %s", b->c->name, strerror(b->src.read_errno));
			return BYTES_EREAD;
		}
		return BYTES_ECORRUPT;
	}
	*p = c->buf;
	*len = c->len;
	*frame_end = c->z == 0;
	return BYTES_CHUNK;
}

enum bytes_status bytes_next(struct bytes *b, const char **p, size_t *len, bool *frame_end)
{
	*frame_end = true;
	if (b->ended)
		return BYTES_END;
	return b->zstd ? next_zstd(b, p, len, frame_end) : next_plain(b, p, len);
}

const char *bytes_error(const struct bytes *b)
{
	return ZSTD_getErrorName(b->z);
}

void bytes_where(const struct bytes *b, uint64_t *frame_at, uint64_t *in_at)
{
	*frame_at = b->frame_at;
	*in_at = b->in_at;
}

void bytes_close(struct bytes *b)
{
	if (!b)
		return;
	if (b->zstd)
		zsource_stop(&b->src);
	if (b->fd >= 0)
		close(b->fd);
	free(b->buf);
	free(b);
}
