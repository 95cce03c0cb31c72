/* meter_int.h -- what the Linux meter's files share: struct linux_meter, its limits, small
 * read helpers, and the entry points of tree.c (finding the tree) and shared.c (shared pages
 * once). meter.c is the backend on top of both. Not for use outside platform/linux/. */
#ifndef SB_PLATFORM_LINUX_METER_INT_H
#define SB_PLATFORM_LINUX_METER_INT_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "linux.h"
#include "procfs.h"

struct ppid_pair {
	pid_t pid, ppid;
};

/* A memory cgroup of the run's own (cgroup.c): "" dir when none. */
struct memcg {
	char dir[4096], parent[4096];
	char leaf[4096];      /* v2: the recorder's own leaf under parent, "" none */
	const char *how;      /* where parent came from (cgroup_home.c), for the mark */
	bool v2;
	bool enabled;         /* memory turned on below leaf's parent by the recorder */
	int lock_fd;          /* dir, flock'ed while the recorder lives */
	int leaf_fd;          /* leaf, flock'ed likewise */
	int stat_fd;  /* memory.stat */
	int procs_fd; /* cgroup.procs, written by the command before its exec */
	int peak_fd;  /* v1 memory.max_usage_in_bytes, v2 memory.peak; -1 */
	int dir_fd;   /* the directory (O_PATH): cgroup.procs is opened in it */
	char stat_text[8192]; /* memory.stat's text at the last reading */
	size_t stat_len;      /* its length, 0: none kept */
	bool stat_same;       /* the last reading read the same text as the one before */
};

struct linux_meter {
	struct proctab tab;
	struct linux_proc self; /* the recorder: orphans are re-parented to it */
	pid_t self_pid;
	int meminfo_fd;
	int loadavg_fd;         /* /proc/loadavg: the last pid handed out */
	long last_pid;          /* at the last sample, -1 = unknown */
	int64_t walk_until_ns;  /* samples walk the tree until then */
	bool walking;           /* this sample walks (pids were handed out lately) */
	unsigned long walks;    /* samples that walked (meter_linux_walks) */
	int proc_fd;            /* /proc, for the scan fallback */
	bool scan;              /* no CONFIG_PROC_CHILDREN: scan /proc/PID/stat */
	bool peaks;             /* clear_refs works */
	bool warned_clear;
	bool warned_files;      /* said that the open files limit stopped discovery */
	size_t statm_fds;       /* statm descriptors open */
	size_t statm_budget;    /* at most this many (statm_budget_now) */
	/* Window peaks (docs/platforms.md, Linux): window_best is the highest sum
	 * since the reset of the live processes' peak parts and of what those gone
	 * since the sample before held alone (dep_now), at samples where the
	 * shares are not stale (shared.c); at the others, the largest such
	 * group of departures waits in dep_pending. Never below a sample's
	 * footprint (linux_sample). */
	uint64_t window_best, dep_now, dep_pending;
	uint64_t files_best;    /* the most file pages the tree mapped at a sample of
				 * the window (peak_bound: they may be charged elsewhere) */
	struct memcg cg;
	bool cg_on;             /* the tree is in cg: samples read its footprint there */
	char words[512];        /* the cgroup reader's words, where its cgroup was made */
	pid_t *listed;          /* the cgroup's pids at the last reading, sorted */
	size_t nlisted, listed_alloc;
	size_t outside;         /* tree processes outside the cgroup (struct linux_proc) */
	bool cg_news;           /* the cgroup listed a process the table lacks */
	pid_t *known;           /* the table's pids and the foreign ones, sorted */
	size_t nknown, known_alloc;
	unsigned known_gen;     /* the table's gen they were taken at */
	bool known_built;
	int64_t prev_ns;        /* when the sample before began, 0: none */
	int64_t gap_ns;         /* between the last two samples: the sampling interval */
	uint64_t hwm_seen;      /* highest VmHWM read in the tree this run, and the
				 * recorder's own at meter_track (peak_exited) */
	int64_t now_ns;         /* when the current sample began */
	struct meminfo_fields mi; /* the last /proc/meminfo reading */
	int64_t mi_ns;          /* when it was taken, 0 = never */
	struct ppid_pair *pairs;
	size_t npairs, pairs_alloc;
	uint64_t root_start;    /* the root's start time at meter_track, 0: unknown */
	bool pss;               /* smaps_rollup has Pss_Anon (Linux 5.7+) */
	/* The sharing group (shared.c): every process that shares, the partners of
	 * new children, and those whose shmem moved. */
	bool roll_all;          /* the next round reads every live process */
	bool share_pending;     /* the group changed since its last round: one is due */
	bool share_stale;       /* a member's pages moved since: shares may count pages twice */
	bool share_news;        /* a member joined or left at this sample */
	bool share_torn;        /* torn's: a child the table lacks was listed */
	unsigned roll_gen;      /* rounds of smaps_rollup readings */
	int64_t roll_next_ns;   /* the next look for a change in a still group */
	int64_t roll_wait_ns;   /* ROLL_COST_FACTOR times the last round's cost */
	int64_t roll_credit;    /* reading time allowed now (ns, at most 0): the budget */
	int64_t credit_ns;      /* when it was last brought up to date */
	uint64_t round_shmem;   /* the system's Shmem (meminfo) at the last round */
	unsigned long rollups;  /* smaps_rollup readings made (meter_linux_rollups) */
	struct mapped_state *mapped; /* mapped.c's, NULL until the first sample */
	/* A still tree (tree_still): the sums of the last sample that read every
	 * process, taken at table generation gen (any pid added, removed or made
	 * foreign since moves it), stand for run more samples. */
	struct {
		bool valid;
		unsigned gen;
		unsigned run;   /* samples in a row that reused them */
		size_t live;
		uint64_t rss, swapped;
		int procs;
	} sums;
	unsigned long still_samples; /* samples that reused them (meter_linux_still) */
	char buf[16384];
	char dents[16384];
};

/* Children fds kept open for threads other than the main one, over the
 * whole tree; beyond it they are opened and closed on every walk. */
#define THREAD_FD_BUDGET 256

/* System figures change slowly and /proc/meminfo is the costliest file a
 * sample reads: a sample reuses a reading younger than half the interval
 * between the last two samples (one taken out of turn, as at a stage event),
 * and never one older than this (meter_system, the guard's, always reads
 * afresh). */
#define MEMINFO_REUSE_NS (100 * 1000000LL)

/* A multi-threaded process's thread list is read again this often, or as
 * soon as its Threads: count differs from the threads whose children files
 * are kept open; in between those files are re-read without listing. */
#define RELIST_NS (100 * 1000000LL)

/* A process's status is re-read when its statm moved, or once a reading
 * answered this many samples (status_stands): a pread of status costs five
 * statm ones. */
#define STATUS_REUSE_MAX 30
/* Processes sampled through statm (its descriptor kept open); beyond, status
 * is read every sample (no more descriptors). A tree process holds up to
 * FILES_PER_PROC descriptors; FILES_RESERVE are left for everything else. */
#define FILES_PER_PROC 5
#define FILES_RESERVE 64
#define SELF_RELIST_NS (1000 * 1000000LL)

/* Opening and reading the cgroup's process list (cgroup_lists_news) costs
 * about what walking seven processes does (an fstat of task/ and a pread of
 * children each; 7.0 against 0.93 us on 6.18): a table of at most this many
 * is walked instead. */
#define CG_LIST_MIN 4

/* With the tree in its cgroup, a sample skips the per-process readings while
 * the cgroup's memory.stat reads the same text as at the sample before (no
 * page charged, freed or faulted in the tree since) and no walk is due; at
 * most this many samples in a row (tree_still). */
#define STILL_MAX STATUS_REUSE_MAX

/* Sharing (share_update): smaps_rollup costs about 19 ms per resident GiB
 * (measured on 6.18; it walks the page tables under the mmap lock). A sharing
 * group is read whole (a round) when any member changed: its statm moved, it
 * faulted (a copy-on-write write moves neither statm nor status), a member
 * joined (a fork) or left; a process's Pss moves with its partners' pages. The
 * readings are paid from a credit that grows at 1/ROLL_COST_FACTOR of the time
 * (at most 1/20 of a core) up to 0: a round while the group is still moving
 * waits for a credit of 0; one at the first sample that finds it still again
 * (the change over: its readings then stand) only for a credit above
 * -ROLL_DEBT_NS, which goes no lower than twice that. A look for a change in a
 * still group (the fault counters) waits ROLL_COST_FACTOR times the last
 * round's cost after one that found none.
 * A process shares when its excess is over SHARE_MIN_BYTES and over 1/32 of
 * its RssAnon + RssShmem (below, the counters' own error: per-CPU since 6.2). */
#define ROLL_COST_FACTOR 20
#define SHARE_MIN_BYTES (1024 * 1024ULL)
#define ROLL_DEBT_NS (1000 * 1000000LL)

static inline struct linux_proc *entry(struct linux_meter *lm, size_t i)
{
	return (struct linux_proc *)lm->tab.p[i];
}

static inline uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* pread at 0 into lm->buf; returns the length or -1 (errno set). */
static inline ssize_t reread(struct linux_meter *lm, int fd)
{
	ssize_t n;
	do
		n = pread(fd, lm->buf, sizeof(lm->buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Set when an open failed for want of descriptors (the open files limit):
 * linux_sample warns once, since processes go unmetered. */
extern bool linux_out_of_files;

static inline int open_proc_file(pid_t pid, const char *name, int flags)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE))
		linux_out_of_files = true;
	return fd;
}

/* tree.c */
void close_threads(struct linux_proc *p, bool all);
void scan_parents(struct linux_meter *lm);
void collect_recorder_children(pid_t pid, void *arg);
void recorder_thread_children(pid_t tid, void *arg);
void discover_children(struct linux_meter *lm, long idx, bool from_self);
bool cgroup_lists_news(struct linux_meter *lm);
bool walk_due(struct linux_meter *lm);
/* shared.c */
void share_update(struct linux_meter *lm, size_t live);
void share_settle(struct linux_meter *lm);
void share_gone(struct linux_meter *lm, struct linux_proc *p);
uint64_t share_shmem_over(struct linux_meter *lm);
bool leaving(const struct linux_proc *p);
uint64_t peak_part(struct linux_meter *lm, const struct linux_proc *p);
/* mapped.c: the sample's mapped and majflt fields (after the tree's status
 * readings); a process gone (before its entry is removed); a new tree (track);
 * the data files first seen resident since the last call, one per call (path
 * valid until mapped_free); the state freed. */
void mapped_sample(struct linux_meter *lm, struct trace_sample *s);
void mapped_departed(struct linux_meter *lm, const struct linux_proc *p);
void mapped_reset(struct linux_meter *lm);
bool mapped_next_file(struct linux_meter *lm, const char **path, uint64_t *size);
void mapped_free(struct linux_meter *lm);
uint64_t held_alone(struct linux_meter *lm, const struct linux_proc *p);
/* cgroup.c */
void memcg_init(struct memcg *cg);
int memcg_create(struct memcg *cg);
bool memcg_holds(const struct memcg *cg, pid_t pid);
/* Whether a process ran in cg, made new for the run: its peak is above 0
 * (the root that joined it and exited at once is a zombie, whose
 * /proc/PID/cgroup names the root cgroup). */
bool memcg_ran(struct memcg *cg);
int memcg_read(struct memcg *cg, char *buf, size_t size, struct memcg_fields *f);
ssize_t memcg_procs(const struct memcg *cg, char *buf, size_t size);
int memcg_peak_reset(struct memcg *cg);
int memcg_peak(struct memcg *cg, uint64_t *bytes);
void memcg_remove(struct memcg *cg);
/* cgroup_home.c */
int memcg_home(struct memcg *cg);
void memcg_home_release(struct memcg *cg);
int memcg_open_in(const char *dir, const char *name, int flags);
int memcg_write_in(const char *dir, const char *name, const char *text);
int memcg_move_all(const char *from, const char *to);
void memcg_unique(char *out, size_t size, const char *what, unsigned seq);
int memcg_make_locked(const char *parent, const char *what, char *dir, size_t size,
		      int *lock_fd);
/* The sample's reading of the tree's cgroup (cgroup.c): its figures, and
 * whether the last per-process readings stand for this sample. */
bool read_cgroup(struct linux_meter *lm, struct memcg_fields *cf);
void reread_cgroup(struct linux_meter *lm, struct memcg_fields *cf);
uint64_t cg_departed(const struct linux_proc *p);
int memcg_enclose(struct memcg *cg);
uint64_t outside_part(const struct linux_proc *p);
uint64_t outside_sum(struct linux_meter *lm);
bool tree_still(struct linux_meter *lm, bool cg, bool walk);

#endif
