/* lines.c -- the reader's second layer: the bytes of bytes.c split into
 * lines, in place where a line lies whole in a chunk, with a mark at the end
 * of each complete zstd frame; it calls only bytes.c */
#include "reader_int.h"

#include <stdlib.h>

void lines_init(struct lines *L, const struct read_ctx *c, struct bytes *b)
{
	memset(L, 0, sizeof(*L));
	L->c = c;
	L->b = b;
	strbuf_init(&L->tail);
}

void lines_release(struct lines *L)
{
	strbuf_release(&L->tail);
}

static enum line_kind too_long(struct lines *L)
{
	L->done = true;
	read_error(L->c, "%s:%zu: line longer than " TRACE_MAX_LINE_WORDS
			 " (the longest a trace record may be): not a trace?", L->c->name, L->line);
	return LINE_ERROR;
}

/* The line p[0, len): counted, checked against the limit. */
static enum line_kind line_out(struct lines *L, const char *p, size_t len, const char **lp,
			       const char **le)
{
	L->line++;
	if (len > TRACE_MAX_LINE)
		return too_long(L);
	*lp = p;
	*le = p + len;
	return LINE_TEXT;
}

/* The input ended: the last line if it had no newline, then the end. */
static enum line_kind at_end(struct lines *L, const char **lp, const char **le)
{
	L->done = true;
	if (!L->tail.len)
		return LINE_END;
	/* the tail stays valid until lines_release() */
	L->unended = true;
	return line_out(L, L->tail.buf, L->tail.len, lp, le);
}

/* The bytes failed: say why (a read error is printed by bytes.c). A file
 * that ends inside its last zstd frame is what a recorder killed while it
 * wrote leaves: the frames before it are whole and checked, so it is a
 * warning; the lines of the cut frame (its checksum never read) are dropped. */
static enum line_kind bytes_fault(struct lines *L, enum bytes_status st)
{
	L->done = true;
	if (st == BYTES_EREAD)
		return LINE_ERROR;
	uint64_t frame_at, in_at;
	bytes_where(L->b, &frame_at, &in_at);
	if (st == BYTES_ECORRUPT) {
		read_error(L->c, "%s:%zu: corrupt zstd data in the frame at byte %llu: %s (the %zu "
				 "lines before it are kept)",
			   L->c->name, L->mark_line + 1, (unsigned long long)frame_at,
			   bytes_error(L->b), L->mark_line);
		return LINE_CORRUPT;
	}
	read_warning(L->c, "%s: cut at byte %llu, inside its last zstd frame (from byte %llu): "
			   "the recording stopped before it closed the file; reading the %zu "
			   "lines before that frame",
		     L->c->name, (unsigned long long)in_at, (unsigned long long)frame_at,
		     L->mark_line);
	return LINE_CUT;
}

void lines_cut_warning(struct lines *L)
{
	read_warning(L->c, "%s:%zu: cut at byte %llu, inside its last line (no newline ends it): "
			   "the recording stopped before it closed the file; reading the %zu "
			   "lines before it",
		     L->c->name, L->line, (unsigned long long)L->tail_at, L->line - 1);
}

enum line_kind lines_next(struct lines *L, const char **lp, const char **le)
{
	if (L->tail_out) {
		strbuf_reset(&L->tail);
		L->tail_out = false;
	}
	for (;;) {
		if (L->done)
			return LINE_END;
		if (L->p < L->end) {
			const char *nl = memchr(L->p, '\n', (size_t)(L->end - L->p));
			if (nl && !L->tail.len) {
				const char *p = L->p;
				L->p = nl + 1;
				return line_out(L, p, (size_t)(nl - p), lp, le);
			}
			if (nl) { /* the rest of a line cut by the chunk's end */
				strbuf_add(&L->tail, L->p, (size_t)(nl - L->p));
				L->p = nl + 1;
				L->tail_out = true; /* emptied at the next call */
				return line_out(L, L->tail.buf, L->tail.len, lp, le);
			}
			/* no newline left: the start of a line the next chunk ends */
			if (!L->tail.len)
				L->tail_at = L->text_at + (uint64_t)(L->p - L->chunk);
			strbuf_add(&L->tail, L->p, (size_t)(L->end - L->p));
			L->p = L->end;
			if (L->tail.len > TRACE_MAX_LINE) {
				/* a small compressed file must not make the reader hold a huge line */
				L->line++;
				return too_long(L);
			}
		}
		bool had_chunk = L->end != NULL;
		if (had_chunk && L->frame_end) {
			L->frame_end = false;
			L->mark_line = L->line;
			return LINE_MARK;
		}
		size_t len = 0;
		const char *p = NULL;
		enum bytes_status st = bytes_next(L->b, &p, &len, &L->frame_end);
		if (st == BYTES_END)
			return at_end(L, lp, le);
		if (st != BYTES_CHUNK)
			return bytes_fault(L, st);
		L->text_at += (uint64_t)(L->end - L->chunk);
		L->chunk = L->p = p;
		L->end = p + len;
	}
}
