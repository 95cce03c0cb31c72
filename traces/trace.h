/* trace.h -- the trace format v1: records in C, the writer and the reader
 *
 * A trace is JSON lines (spec: traces/FORMAT.md), one record per line:
 *   start, then samples and events in any order, then end (absent when the
 *   recorder itself was killed). stagebench writes `.jsonl.zst`: one complete
 *   zstd frame per flush, so every flushed record survives `kill -9`; it reads
 *   `.jsonl.zst` and plain `.jsonl` (stageload's traces).
 *
 * zstd and jansson are used inside traces/ (and jansson by runner/pipeline.c
 * for pipeline files). Everything else sees the plain C structs below. The
 * reader's layers: bytes.c, lines.c, records.c (with fastpath.c, decode.c),
 * then the sinks reader.c and summary.c (reader_int.h; a sink of one's own:
 * sink.h); the schema's tables: schema.c; the window rule: window.h; the
 * writer: writer.c, through common/jsonw.c, with records' typed extra keys
 * (fields.c).
 *
 * Absent fields: a sample field the platform lacks is absent from the line and
 * its bit is clear in `fields`, never a 0.
 */
#ifndef SB_TRACE_H
#define SB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TRACE_FORMAT "stagebench/1"

/* The longest line a trace may hold (one record), newline excluded: the
 * reader refuses a longer one ("FILE:LINE: line longer than ..."), the
 * writer does not write one. */
#define TRACE_MAX_LINE (4u << 20)
#define TRACE_MAX_LINE_WORDS "4 MiB"

/* ---- samples ----------------------------------------------------------- */

/*
 * The sample fields: the one list that the struct, the writer, the reader
 * and the table below are generated from (FORMAT.md, "sample", documents the
 * same keys). In the order the writer writes them.
 *   X(UPPER, key, bit, kind, what)
 * key is the JSON key and the struct member; its bit in `fields` is
 * SF_UPPER = 1 << bit; kind is BYTES (uint64_t), NUMBER (double) or COUNT
 * (int, >= 0); majflt follows procs, two ints in one 8-byte slot. The reader refuses a `mapped` above the start record's
 * host memory (records.c).
 */
#define TRACE_SAMPLE_FIELDS(X) \
	X(FOOTPRINT, footprint, 0, BYTES, "tree footprint, bytes") \
	X(RSS, rss, 1, BYTES, "tree resident set, bytes") \
	X(SWAPPED, swapped, 2, BYTES, "tree swapped-out bytes") \
	X(SWAP_USED, swap_used, 3, BYTES, "system swap in use, bytes") \
	X(SWAP_TOTAL, swap_total, 7, BYTES, "system swap size, bytes") \
	X(LEVEL, level, 4, NUMBER, "system memory available, percent") \
	X(GPU, gpu, 5, BYTES, "tree GPU memory, bytes") \
	X(PROCS, procs, 6, COUNT, "processes in the tree") \
	X(MAJFLT, majflt, 11, COUNT, "major page faults of the tree since it started (pages read back from disk)") \
	X(DEVMEM, devmem, 8, BYTES, "device memory read by the probe (MPS driver, CUDA reserved), bytes") \
	X(DEVMEM_ALLOCATED, devmem_allocated, 9, BYTES, "the tensors' share of devmem, bytes") \
	X(MAPPED, mapped, 10, BYTES, "resident pages of the data files the tree maps, each once, bytes")

#define SF_CTYPE_BYTES uint64_t
#define SF_CTYPE_NUMBER double
#define SF_CTYPE_COUNT int

enum sample_field {
#define X(UP, key, bit, kind, what) SF_##UP = 1u << (bit),
	TRACE_SAMPLE_FIELDS(X)
#undef X
};

/* Index of each field in TRACE_SAMPLE_FIELDS (and trace_sample_fields[]). */
enum sample_field_index {
#define X(UP, key, bit, kind, what) SFI_##UP,
	TRACE_SAMPLE_FIELDS(X)
#undef X
	SAMPLE_NFIELDS
};

struct trace_sample {
	double t; /* seconds since the run started */
	unsigned fields; /* SF_* bits of the fields present */
	unsigned merged; /* trace_read_summary(): samples dropped that this one
			  * stands for (all with a footprint when it has one,
			  * all without when it has none); 0 otherwise */
#define X(UP, key, bit, kind, what) SF_CTYPE_##kind key;
	TRACE_SAMPLE_FIELDS(X)
#undef X
};

enum sample_kind { SAMPLE_BYTES, SAMPLE_NUMBER, SAMPLE_COUNT };

struct sample_field_info {
	const char *key;   /* JSON key */
	size_t len;        /* strlen(key) */
	unsigned bit;      /* SF_* */
	enum sample_kind kind;
	size_t offset;     /* of the member in struct trace_sample */
	const char *what;  /* in words */
};
extern const struct sample_field_info trace_sample_fields[SAMPLE_NFIELDS];
/* The field of a JSON key, or NULL. */
const struct sample_field_info *trace_sample_field(const char *key, size_t len);

/* ---- typed extra keys -------------------------------------------------- */

/*
 * Keys a record carries beyond its struct's own (the start record's "peaks"
 * and "stagebench", compare's "cache_state", a guard event's readings), as
 * typed values: the writer writes them with common/jsonw.c after the record's
 * own keys and before its extra_json. The reader leaves them empty (keys it
 * does not know go to extra_json). Strings are not copied: they must live
 * until the record is written. An object is a TV_OBJECT field (its key) and
 * the fields up to its TV_END.
 */
enum trace_value { TV_STRING, TV_BOOL, TV_U64, TV_DOUBLE, TV_NULL, TV_OBJECT, TV_END };
struct trace_field {
	const char *key; /* NULL for TV_END */
	enum trace_value type;
	union {
		const char *s;
		bool b;
		uint64_t u;
		double d;
	} v;
};
struct trace_fields {
	struct trace_field *items;
	size_t n, alloc;
};
#define TRACE_FIELDS_INIT { NULL, 0, 0 }
void trace_fields_string(struct trace_fields *f, const char *key, const char *s); /* NULL: null */
void trace_fields_bool(struct trace_fields *f, const char *key, bool b);
void trace_fields_u64(struct trace_fields *f, const char *key, uint64_t u);
void trace_fields_double(struct trace_fields *f, const char *key, double d);
void trace_fields_null(struct trace_fields *f, const char *key);
void trace_fields_object(struct trace_fields *f, const char *key); /* until trace_fields_end() */
void trace_fields_end(struct trace_fields *f);
void trace_fields_append(struct trace_fields *f, const struct trace_fields *more); /* NULL ok */
void trace_fields_release(struct trace_fields *f);
/* Write them as members of w's open object (the writer's records). */
struct jsonw;
void trace_fields_write(struct jsonw *w, const struct trace_fields *f);
/* The text they are written as: a JSON object's body ("a":1,"b":"x"), "" for
 * none. Caller frees. */
char *trace_fields_json(const struct trace_fields *f);

/* ---- events ------------------------------------------------------------ */

enum event_kind {
	EV_OTHER = 0, /* unknown kind: kept, kind_name says which */
	EV_STAGE,     /* stage */
	EV_LOAD,      /* name, stage, nbytes, seconds */
	EV_RELOAD,    /* name, stage, nbytes, seconds */
	EV_RELEASE,   /* name, stage, nbytes */
	EV_MARK,      /* note */
	EV_LATENT,    /* name, stage, sha256, dtype, shape, file */
	EV_PEAK,      /* stage, metric, bytes, from: exact kernel high-water mark */
	EV_GPU,       /* stage, device, bytes (+ max_bytes): device memory from inside */
	EV_GUARD,     /* action, reason, readings */
	EV_VERSIONS,  /* "versions": {name: version} (in extra_json); the reader
		       * also gathers them into trace.versions */
	EV_MAPPED,    /* name (the file's path), nbytes (its size, when known): a data
		       * file the tree maps, first seen resident */
};

#define EVENT_MAX_DIMS 8

struct trace_event {
	/* (members ordered by size: no padding between them; a trace of many
	 * events holds one of these for each) */
	double t;
	enum event_kind kind;
	int ndim; /* latent: -1 when no shape */
	char *kind_name; /* the "kind" string as read */
	char *stage;     /* NULL when absent */
	char *name;
	char *note;
	uint64_t nbytes;  /* when has_nbytes */
	double seconds;   /* when has_seconds */
	/* latent */
	char *sha256, *dtype, *file;
	int64_t shape[EVENT_MAX_DIMS];
	/* peak, gpu */
	char *metric;    /* peak: "rss" (Linux VmHWM), "footprint" (macOS) ; gpu: "cuda_reserved", "mps_driver" */
	char *device;    /* gpu: "cuda:0", "mps" */
	uint64_t bytes;  /* when has_bytes; peak: the high-water mark; gpu: the current figure */
	uint64_t max_bytes; /* when has_max_bytes; gpu: per-stage maximum where the device has one */
	double from;     /* when has_from; peak: window start (t) */
	/* guard */
	char *action;    /* "wait", "admit", "timeout", "stop", "interrupted", ... */
	char *reason;
	struct trace_fields fields; /* typed keys to write (a guard's readings); the
				     * reader leaves it empty */
	/* Any other keys, as the body of a JSON object ("\"a\":1,\"b\":\"x\""),
	 * written back verbatim; NULL when none. */
	char *extra_json;
	size_t line; /* source line when read from a file, else 0 */
	bool has_nbytes, has_seconds, has_bytes, has_max_bytes, has_from;
};

/* An event with nothing set: ndim -1 (no shape). The writer writes "shape"
 * when ndim > 0, or ndim == 0 for a latent (a scalar). */
#define TRACE_EVENT_INIT { .ndim = -1 }

enum event_kind event_kind_from_name(const char *name);
const char *event_kind_name(enum event_kind kind); /* "stage", ...; NULL for EV_OTHER */
void trace_event_release(struct trace_event *ev); /* frees strings; NULL ok */

/* ---- start and end ------------------------------------------------------ */

struct trace_label {
	char *key;
	char *value;
};

struct trace_start {
	char *format;   /* "stagebench/1"; NULL for stageload traces */
	char *utc;      /* ISO 8601 */
	double interval;/* seconds; 0 when absent */
	char *mode;     /* NULL when absent */
	bool has_seed;
	int64_t seed;
	char **command; /* NULL-terminated argv, NULL when absent */
	/* host */
	char *host_name; /* the machine's node name; NULL in traces that predate it */
	char *host_os, *host_kernel, *host_machine;
	int host_cpus;
	uint64_t host_memory, host_swap; /* bytes; 0 when absent */
	/* meter */
	char *meter_backend;   /* "linux", "macos", "fake" */
	char *meter_footprint; /* what footprint counts, in words */
	char *meter_mapped;    /* what mapped counts, in words; NULL when absent */
	struct trace_label *labels;
	size_t nlabels;
	char *commit;   /* pipeline commit (stageload: "port_commit") */
	bool has_dirty;
	bool dirty;     /* stageload: "port_dirty" */
	struct trace_fields fields; /* typed keys to write ("peaks", "stagebench", ...);
				     * the reader leaves it empty */
	char *extra_json; /* other keys as read, JSON object body; NULL when none */
	char *stop_at;    /* stageload's "stop_at": the stage the run was asked to stop
			   * after; NULL when absent or null (also kept in extra_json) */
};

/* STOPPED_LOST: runs.json only, a run of a distributed compare whose task left
 * no result (killed by its engine); no trace's end record says it.
 * STOPPED_RUNNING: runs.json only, a run whose task was still recording when merged. */
enum stopped_by { STOPPED_NONE = 0, STOPPED_GUARD, STOPPED_SIGNAL, STOPPED_LOST, STOPPED_RUNNING };
/* "guard", "signal", "lost", "running"; NULL for STOPPED_NONE. */
const char *stopped_by_name(enum stopped_by by);
/* The value of a "stopped_by" key; false for a string it does not know. */
bool stopped_by_parse(const char *name, enum stopped_by *by);

struct trace_end {
	bool has_exit;
	int exit_code;  /* the command's exit status (what record returned) */
	int signal;     /* signal that ended the command, 0 for none */
	enum stopped_by stopped_by;
	char *reason;   /* why it was stopped, in words */
	bool has_wall;
	double wall;    /* seconds */
	bool has_cpu;
	double cpu;     /* seconds of CPU used by the command's tree (user+sys) */
	char *extra_json;
};

/* ---- a whole trace in memory (the reader's result) ---------------------- */

/*
 * An event of a summary (trace_read_summary) in 24 bytes, not a struct
 * trace_event's 256: a trace of many stage events holds one for each. A
 * "plain" event (one of a known kind with nothing but its kind, t, stage and
 * line) is only this; any other is kept whole in trace.events, kind
 * TRACE_BRIEF_FULL and ref its index there.
 */
#define TRACE_BRIEF_FULL UINT32_MAX
struct trace_brief {
	double t;           /* first: sorted as the records are */
	const char *stage;  /* the trace's shared copy; NULL when absent */
	uint32_t kind;      /* enum event_kind, or TRACE_BRIEF_FULL */
	uint32_t ref;       /* TRACE_BRIEF_FULL: index into events; else the line */
};

struct trace {
	char *path;
	struct trace_start start;
	bool has_start;
	struct trace_sample *samples; /* sorted by t (stable) */
	size_t nsamples, samples_alloc;
	struct trace_event *events;   /* sorted by t (stable); the reader's share
				       * their kind_name, stage, name, metric and
				       * device strings (one copy of each, in
				       * `strings`): do not free or change those */
	size_t nevents, events_alloc;
	/* trace_read_summary(): every event, sorted by t (stable), as a brief;
	 * `events` then holds only those that are not plain (struct
	 * trace_brief), in the same order. NULL after trace_read(). Either way
	 * trace_nevents() and trace_event_at() give every event. An event with
	 * anything beyond kind, t, stage and line (a name, note, metric, action,
	 * bytes, ...) is always in `events`: a loop that looks only at such
	 * events may read `events` alone. */
	struct trace_brief *briefs;
	size_t nbriefs, briefs_alloc;
	struct trace_strings *strings; /* reader.c; NULL when none */
	bool has_end;
	struct trace_end end;
	/* The versions of Python and the libraries the run imported (FORMAT.md,
	 * "versions"): name -> version, in order of first appearance, the first
	 * value of a name kept; from the start record's `versions` object and
	 * stageload's top-level `python`, `torch`, `diffusers`, `transformers`,
	 * `accelerate` keys, then `versions` events in file order. At most
	 * TRACE_MAX_VERSIONS names. A library the run never imported is absent. */
	struct trace_label *versions;
	size_t nversions;
	bool damaged; /* a read error stopped the reader; records before it kept */
	bool cut;     /* damaged so: the file ends inside its last zstd frame or
		       * line (a recording stopped before it closed the file);
		       * trace_read() warned and returned 0 */
	bool summary; /* trace_read_summary(): samples reduced (see there) */
	size_t stray_devmem; /* device samples dropped, timed before the start or more
			      * than TRACE_DEVMEM_SLACK_S after the end (a warning said so) */
};
#define TRACE_DEVMEM_SLACK_S 10
#define TRACE_INIT { 0 }
#define TRACE_MAX_VERSIONS 64

/*
 * Read a trace file (.jsonl.zst, .zst, or plain JSON lines; detected by the
 * zstd magic, not the name). Records are sorted by t, unknown keys ignored.
 * Returns 0 when the whole file read cleanly, and 0 after a warning naming the
 * byte offset when the file ends inside its last zstd frame or line (cut: a
 * recording stopped before it closed the file; the complete frames, the whole
 * lines before the cut kept, tr->damaged and tr->cut set); -1 after printing one line
 * "FILE:LINE: what was wrong" when it did not: corrupt zstd data, a
 * malformed line, a missing start record, an unknown "format". On -1 *tr
 * still holds every record read before the fault (tr->damaged = true), except
 * for an unknown format version, which is refused with no records.
 * A known key whose value is null counts as absent; unknown keys go to
 * extra_json (start, event, end); unknown record types are skipped; a second
 * start or end record is ignored. `data` need not be NUL-terminated.
 * The caller releases *tr with trace_release() either way.
 */
int trace_read(const char *path, struct trace *tr);
/*
 * The same, for the stage-window analysis in memory bounded by the events,
 * not the samples: of each stretch between two event times (and a release's
 * t + 2 s, a peak's from) only its extreme samples are kept (largest and
 * smallest footprint, the smallest only within 2 s after a release, last,
 * largest rss, first and largest swap_used, lowest level, largest devmem and
 * gpu, less those that others stand for: summary.c), `merged` counting the
 * others, so that every window, release and
 * kernel-peak figure of analyze/analysis.c comes out as from trace_read().
 * Falls back to trace_read() for a damaged trace or one whose records are
 * more than 10 s out of time order. tr->summary tells which. A summary keeps
 * its events as briefs (struct trace_brief, tr->briefs): read them with
 * trace_nevents() and trace_event_at().
 */
int trace_read_summary(const char *path, struct trace *tr);
/* Same, from memory (tests, benchmarks); `name` is used in messages. */
int trace_read_mem(const char *name, const void *data, size_t len, struct trace *tr);
void trace_release(struct trace *tr);
/* Every event of *tr, a summary's too (above): their number, and the i-th
 * in t order. `tmp` must hold TRACE_EVENT_INIT and stay untouched between
 * calls: a plain event of a summary is given as *tmp with its t, kind,
 * kind_name (event_kind_name()'s static string), stage and line set. */
size_t trace_nevents(const struct trace *tr);
const struct trace_event *trace_event_at(const struct trace *tr, size_t i, struct trace_event *tmp);

/* ---- the writer --------------------------------------------------------- */

struct trace_writer;

/*
 * Open PATH for writing (truncating). A path ending in ".zst" is written as
 * zstd frames, anything else as plain JSON lines. Samples are buffered and
 * written by trace_writer_flush() (one zstd frame per flush); the writer also
 * flushes by itself when its buffer is older than flush_every_ns (default 1 s)
 * at the next record. start, end and every event are flushed at once: events
 * are few and precious, and kill -9 must not take the last second's with it.
 * A record longer than TRACE_MAX_LINE is not written (a warning says so).
 * A failed write is reported at once (error()); that call and every later
 * one returns -1. Returns NULL after error().
 * Call order: open, start, { sample | event }*, end, close.
 */
struct trace_writer *trace_writer_open(const char *path);
void trace_writer_set_flush_interval(struct trace_writer *w, int64_t ns);
int trace_writer_start(struct trace_writer *w, const struct trace_start *st);
int trace_writer_sample(struct trace_writer *w, const struct trace_sample *s);
int trace_writer_event(struct trace_writer *w, const struct trace_event *ev);
int trace_writer_end(struct trace_writer *w, const struct trace_end *end);
int trace_writer_flush(struct trace_writer *w);
/* Flushes and closes; NULL ok. Returns 0 or -1 when a write failed. */
int trace_writer_close(struct trace_writer *w);
/* Tests (fault injection): the writer's write(2) calls go through fn, which
 * returns what write(2) would (setting errno). NULL restores write(2). */
typedef ssize_t (*trace_write_fn)(int fd, const void *buf, size_t len, void *arg);
void trace_writer_set_write_fn(struct trace_writer *w, trace_write_fn fn, void *arg);

/*
 * Parse one line the pipeline wrote to STAGEBENCH_FD (an event record whose
 * time key is "mono", seconds on CLOCK_MONOTONIC) into *ev, with
 * t = mono - mono_origin_s. A line with "t" and no "mono" keeps its t.
 * Returns 0, or -1 with *errmsg set (static string) for a line that is not a
 * JSON object of type "event" with a "kind".
 */
int trace_parse_probe_line(const char *line, size_t len, double mono_origin_s,
			   struct trace_event *ev, const char **errmsg);

/* What a devmem line says beside its sample. */
struct devmem_extra {
	uint64_t total; /* "total", the device's size; 0 absent */
	int64_t pid;    /* "pid", the writer's process; -1 absent */
};
/*
 * A probe line of kind "devmem" (the device memory the probe reads on the
 * interval; FORMAT.md "The probe line protocol") as the sample the recorder
 * writes: t, devmem = its "bytes", devmem_allocated = its "allocated" when
 * given; *x gets its "total" and "pid".
 * Returns -1 (nothing set but zeros) for any other line or one without bytes.
 */
int trace_devmem_sample(const struct trace_event *ev, struct trace_sample *s,
			struct devmem_extra *x);

/*
 * The device readings of a run as the guard judges them: the last reading of
 * each device (a devmem line's "device") and writer ("pid"), each with the
 * last size ("total") any line reported for that device, so a line without
 * "total" is judged against the size known before. At most
 * DEVMEM_MAX_READINGS pairs: one more takes the place of the smallest reading
 * (counted in `evicted`), so a flood of small readings never hides a large one.
 */
#define DEVMEM_MAX_READINGS 16
struct devmem_reading {
	char device[48]; /* cut to 47 bytes: longer names alike in those are one */
	int64_t pid;     /* -1: the line named none */
	uint64_t bytes;
	uint64_t total;  /* the device's last known size; 0 never reported */
	double t;
	uint64_t seq;    /* the order readings came in */
};
struct devmem_table {
	struct devmem_reading r[DEVMEM_MAX_READINGS];
	size_t n;
	uint64_t seq;
	size_t evicted;
};
/* Take a devmem line (trace_devmem_sample()'s *s and *x). Returns the reading
 * it updated. *tab starts zeroed. */
const struct devmem_reading *devmem_table_take(struct devmem_table *tab, const struct trace_event *ev,
					       const struct trace_sample *s,
					       const struct devmem_extra *x);

#endif
