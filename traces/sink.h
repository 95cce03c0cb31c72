/* sink.h -- the trace reader's records handed to a consumer as they are read
 *
 * The reader is layered (traces/reader_int.h): bytes (a plain file, memory,
 * zstd) -> lines -> records -> a sink, each layer calling only the one below.
 * A sink is what the records go to: trace_read() keeps them all in a struct
 * trace, trace_read_summary() keeps the samples the analysis needs, the charts
 * (plots/) reduce the samples to what a chart can show while they are read.
 * A consumer of its own fills a struct trace_sink and calls trace_read_sink().
 */
#ifndef SB_TRACE_SINK_H
#define SB_TRACE_SINK_H

#include <stdbool.h>
#include <stddef.h>

struct trace_sample;
struct trace_event;
struct trace_start;
struct trace_end;

/*
 * The records in file order (not sorted by t). Each member may be NULL (the
 * record is dropped). start, event and end hand the record over: the sink
 * owns its strings from then on (trace_event_release() frees an event's).
 * A repeated start or end record is not handed over. version: a name and
 * version the record gives (FORMAT.md "versions"), the strings the caller's.
 * mark: every record so far came from complete zstd frames (plain text:
 * after each chunk read). rollback: a zstd frame was cut short or corrupt: the
 * records since the last mark must be forgotten (a corrupt one fails the read;
 * a cut one, the file ending inside it, is a warning).
 */
struct trace_sink {
	void *arg;
	void (*start)(void *arg, struct trace_start *st);
	void (*sample)(void *arg, const struct trace_sample *s);
	void (*event)(void *arg, struct trace_event *ev);
	void (*end)(void *arg, struct trace_end *end);
	void (*version)(void *arg, const char *name, const char *value);
	void (*mark)(void *arg);
	void (*rollback)(void *arg);
};

/* Reading flags. */
#define TRACE_READ_QUIET 1u /* a fault makes -1 without a message */

/*
 * Read PATH (zstd or plain JSON lines, as trace_read) into the sink.
 * Returns 0 when the whole file read cleanly; 1 when it ends inside its last
 * zstd frame or line (cut, a warning naming the byte offset printed unless
 * quiet; the records of complete frames, the whole lines, handed over); -1 after printing one
 * line "FILE:LINE: what was wrong" (unless quiet) on the first fault, the
 * records before it handed over; -2 for an unknown format version (printed).
 * A trace without a start record is a fault.
 */
int trace_read_sink(const char *path, const struct trace_sink *sink, unsigned flags);
/* The same from memory; `name` is used in messages. */
int trace_read_mem_sink(const char *name, const void *data, size_t len,
			const struct trace_sink *sink, unsigned flags);

struct trace;
/*
 * trace_read_summary() (trace.h) that also hands every sample, mark and
 * rollback to `also` as it reads (its other members are not called): one
 * pass for a summary and a consumer of the samples. When the summary falls
 * back to trace_read() (tr->summary false) `also` has seen the samples of
 * the first pass only; the caller then takes tr->samples instead.
 */
int trace_read_summary_also(const char *path, struct trace *tr, const struct trace_sink *also);

#endif
