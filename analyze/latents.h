/* latents.h -- did staged loading change the results? latent copies compared across runs
 *
 * The model behind `stagebench latents`, and what `compare` and `check` use
 * to say whether two sets of runs produced the same latents.
 *
 * What is compared
 * ----------------
 * A run (one trace) fingerprints each sampler output with a `latent` event:
 *   {"type":"event","kind":"latent","name":"structure","stage":"structure",
 *    "sha256":"<hex>","dtype":"float32","shape":[1,8,16,16],
 *    "file":"staged-1.latents/structure.npy","t":...}
 * "file" is relative to the directory of the trace that holds the event.
 *
 * The sha256 contract: "sha256" is the SHA-256 of the array's raw element
 * bytes in C order, little-endian -- the .npy file's data section, NOT the
 * whole file and not its header. The same array hashes the same whatever the
 * header's padding or format version. In Python:
 *   hashlib.sha256(np.ascontiguousarray(a).astype(a.dtype.newbyteorder('<'))
 *                  .tobytes()).hexdigest()
 * For bfloat16 (which NumPy lacks) the element bytes are the 2-byte bfloat16
 * bit patterns, little-endian: `t.view(torch.uint16).numpy()`.
 *
 * dtypes: the event's "dtype" ("float16", "bfloat16", "float32", "float64",
 * optionally "torch."-prefixed) must agree with the .npy descr ('<f2', '<f4',
 * '<f8'). A bfloat16 copy is stored as 2-byte raw bits ('<u2', '<i2', '<V2' or
 * '|V2'); such a file is read as bfloat16 only when its event says
 * "bfloat16", otherwise the copy is reported corrupt (see analyze/npy.h).
 *
 * A latent's identity is (name, stage, occurrence): the k-th event with the
 * same name and stage in one run is occurrence k (shown as "name#k" for k>1).
 * Latents are listed in the order they first appear in the runs, merged so a
 * latent only some runs have sits after the one that precedes it there.
 *
 * Copies and pairs
 * ----------------
 * Each run's copy of a latent (struct latent_copy) is one of:
 *   COPY_ABSENT   the run has no such event;
 *   COPY_OK       the .npy was read and agrees with its event;
 *   COPY_CORRUPT  it disagrees with its event: the sha256 of its data, its
 *                 dtype or its shape (`problem` says which, in words). A
 *                 corrupt copy is never compared: every pair with it is
 *                 LR_CORRUPT, a finding.
 *   COPY_NO_FILE  the event has no "file": only its sha256 can be compared.
 * A .npy that cannot be read at all (no such file, not a .npy, truncated,
 * big-endian, fortran order) is not a finding but unreadable input:
 * latent_compare() fails with the file's name and what is wrong.
 *
 * Every unordered pair of runs gets a result (enum latent_result):
 *   LR_IDENTICAL       equal bit for bit (so a NaN equals a NaN only when
 *                      the bits are equal; -0.0 and +0.0 are not identical);
 *   LR_DIFFERS         same dtype and shape, some bits differ. max_abs_diff
 *                      is the largest |a[i] - b[i]| over differing elements,
 *                      computed in double from the exact values; NaN when an
 *                      element differs and either side is NaN ("nan"); +inf
 *                      when an infinity meets anything else. ndiffer counts
 *                      the elements whose bits differ;
 *   LR_SHAPE_DIFFERS, LR_DTYPE_DIFFERS   not comparable element-wise;
 *   LR_MISSING         one run has the latent, the other does not;
 *   LR_BOTH_ABSENT     neither has it (some third run does): not a finding
 *                      in itself, the pairs with that run report it;
 *   LR_CORRUPT         either copy is corrupt;
 *   LR_UNMEASURED      a side has no file and the sha256 digests differ.
 *
 * Noise
 * -----
 * The baseline mode is the one asked for, else the mode of the first run.
 * A latent's spread is the largest max_abs_diff between any two runs of the
 * baseline mode (0 when they are identical; NaN when such a pair differs by
 * NaN), taken over the baseline pairs that are LR_IDENTICAL or LR_DIFFERS.
 * When no such pair exists (one baseline run has the latent, or its baseline
 * copies are not comparable) the spread is unknown (spread_pairs == 0).
 * A LR_DIFFERS pair is NOISE_WITHIN when max_abs_diff <= spread (never for
 * NaN), NOISE_BEYOND when it is larger, NOISE_UNKNOWN when the spread is
 * unknown. A finding is any pair that is not LR_IDENTICAL, LR_BOTH_ABSENT or
 * an LR_DIFFERS within noise; `latents` exits 1 when there is one.
 *
 * Call order and ownership
 * ------------------------
 *   struct latent_set s = LATENT_SET_INIT;
 *   latent_set_add_path(&s, dir_or_trace) ...   one per RUN_DIR (or trace file)
 *     or latent_set_add_trace(&s, id, mode, &tr) for a trace in memory
 *   latent_compare(&s, baseline_or_NULL)        reads the .npy copies, fills results
 *   latent_findings(&s), latents_render_md/json(&s, &sb), or read the structs
 *   latent_set_release(&s)                      always; NULL ok
 * The set owns everything in it (strings are copies; traces are not kept).
 * .npy data is held only while latent_compare works on one latent.
 */
#ifndef SB_LATENTS_H
#define SB_LATENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../platform/sha256.h"
#include "../common/util.h"
#include "../traces/trace.h"
#include "npy.h"

enum latent_copy_state {
	COPY_ABSENT = 0,
	COPY_OK,
	COPY_CORRUPT,
	COPY_NO_FILE,
};

struct latent_copy {
	/* identity */
	char *name, *stage; /* stage NULL when the event had none */
	int occurrence;     /* 1 for the first event of this name and stage in the run */
	/* the event, as recorded */
	char *sha256;       /* hex, NULL when absent */
	char *dtype;        /* NULL when absent */
	int ndim;           /* -1 when the event had no shape */
	int64_t shape[EVENT_MAX_DIMS];
	char *file;         /* as written; NULL when absent */
	char *path;         /* file resolved against the trace's directory */
	char *trace_path;   /* the trace holding the event, and its line */
	size_t line;
	bool before_models; /* its run has load/reload events and none precedes it */
	/* set by latent_compare */
	enum latent_copy_state state;
	char *problem;      /* COPY_CORRUPT: what disagrees, in words */
	char actual_sha256[SHA256_HEX_BYTES]; /* of the data read; "" when not read */
	enum npy_dtype npy_dtype;
	int npy_ndim;
	int64_t npy_shape[NPY_MAX_DIMS];
};

struct latent_run {
	char *id;        /* "eager-1"; "DIR/eager-1" when ids clash across RUN_DIRs */
	char *mode;
	char *trace_path;
	char *dir_label; /* the RUN_DIR as given (NULL for add_trace) */
	char *note;      /* "stopped by the guard", "no end record", "exit 1", ... or NULL */
	bool failed;     /* the run did not complete: a note says how */
	char *ended_in;  /* the last stage it entered (failed runs); NULL before any */
	char **stages;   /* the stages it entered, in order */
	size_t nstages;
	struct latent_copy *events; /* its latent events in trace order */
	size_t nevents, events_alloc;
};

enum latent_result {
	LR_IDENTICAL = 0,
	LR_DIFFERS,
	LR_SHAPE_DIFFERS,
	LR_DTYPE_DIFFERS,
	LR_MISSING,
	LR_BOTH_ABSENT,
	LR_CORRUPT,
	LR_UNMEASURED,
};

enum latent_noise {
	NOISE_NA = 0,  /* not an LR_DIFFERS pair */
	NOISE_WITHIN,
	NOISE_BEYOND,
	NOISE_UNKNOWN, /* the baseline spread is unknown */
};

/* The comparison of two arrays (latent_diff_arrays). */
struct latent_diff {
	enum latent_result result; /* IDENTICAL, DIFFERS, SHAPE_DIFFERS or DTYPE_DIFFERS */
	double max_abs_diff;       /* 0 unless DIFFERS; may be NaN or +inf */
	uint64_t ndiffer;          /* elements whose bits differ */
};

struct latent_pair {
	size_t a, b;               /* run indices, a < b */
	struct latent_diff diff;   /* diff.result is any enum latent_result */
	enum latent_noise noise;
};

struct latent {
	char *name, *stage;
	int occurrence;
	struct latent_copy **copies; /* [nruns]; NULL = absent in that run */
	struct latent_pair *pairs;   /* nruns*(nruns-1)/2, (0,1), (0,2), ..., (1,2), ... */
	size_t npairs;
	size_t baseline_copies;      /* baseline runs that have this latent */
	size_t spread_pairs;         /* comparable baseline pairs; 0 = spread unknown */
	double spread;               /* largest baseline difference (0 identical, may be NaN) */
};

struct latent_set {
	struct latent_run *runs;
	size_t nruns, runs_alloc;
	struct latent *latents;
	size_t nlatents, latents_alloc;
	char *baseline;   /* the baseline mode, set by latent_compare */
	bool compared;
};
#define LATENT_SET_INIT { 0 }

/*
 * Add the runs found at PATH: a run directory (every *.trace.jsonl.zst and
 * *.trace.jsonl in it, in runs.json order when that file lists them, else by
 * name in version order), or one trace file. A run's id is its file name
 * without ".trace.jsonl[.zst]" ("eager-1"), or MODE-N (N = its ordinal
 * among that mode's traces at PATH) for other names; its mode is the start
 * record's "mode", else the id without its "-N" suffix.
 * Returns the number of runs added, or -1 after error() (a trace that cannot
 * be read: the reader names file and line; a directory that cannot be listed).
 */
int latent_set_add_path(struct latent_set *s, const char *path);

/* Add one run from a trace in memory; copies what it needs from *tr
 * (tr->path locates the latent files). dir_label may be NULL. */
void latent_set_add_trace(struct latent_set *s, const char *id, const char *mode,
			  const char *dir_label, const struct trace *tr);

/*
 * Compare: orders runs by mode (modes in order of first appearance, runs in
 * the order added), prefixes ids with their RUN_DIR when two are equal,
 * builds the latent list, reads and verifies every copy, fills pairs, spreads
 * and noise marks. baseline_mode NULL = the first run's mode.
 * Returns 0; -1 after error() when a copy cannot be read (file and problem
 * named) or baseline_mode names no run. Call once per set.
 */
int latent_compare(struct latent_set *s, const char *baseline_mode);

/*
 * Compare two arrays. Dtypes differ -> LR_DTYPE_DIFFERS; shapes differ ->
 * LR_SHAPE_DIFFERS; same bytes -> LR_IDENTICAL; else LR_DIFFERS with
 * max_abs_diff and ndiffer as described above. Never fails.
 */
void latent_diff_arrays(const struct npy_array *a, const struct npy_array *b,
			struct latent_diff *out);

bool latent_pair_is_finding(const struct latent_pair *p);
size_t latent_findings(const struct latent_set *s); /* over every latent and pair */
const char *latent_result_name(enum latent_result r); /* "identical", "shape differs", ... */
const char *latent_noise_name(enum latent_noise n);   /* NULL, "within", "beyond", "unknown" */
/* "structure" or "structure#2" (occurrence > 1); caller frees. */
char *latent_label(const struct latent *l);
/* "[1, 8, 16, 16]" */
void latent_shape_text(struct strbuf *sb, int ndim, const int64_t *shape);

/*
 * Render the compared set. Markdown: a heading per latent (stage, dtype and
 * shape, the baseline spread), then an upper-triangular table whose rows
 * are runs 1..n-1 and columns runs 2..n, each cell one pair; corrupt copies
 * listed under their table; a summary line last. JSON: the same facts, with
 * full digests, element counts and unrounded differences.
 */
void latents_render_md(const struct latent_set *s, struct strbuf *out);
void latents_render_json(const struct latent_set *s, struct strbuf *out);

void latent_set_release(struct latent_set *s);

#endif
