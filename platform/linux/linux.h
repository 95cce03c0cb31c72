/* linux.h -- the Linux meter's own parts: its process entry and its /proc parsers
 *
 * Not for use outside platform/linux/ except by the unit tests.
 */
#ifndef SB_PLATFORM_LINUX_H
#define SB_PLATFORM_LINUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "meter/meter_internal.h"

/* Test hook: find children by scanning /proc/PID/stat, as on a kernel
 * without CONFIG_PROC_CHILDREN. */
void meter_linux_force_scan(struct meter *m);
/* Test hook: smaps_rollup readings made so far. */
unsigned long meter_linux_rollups(const struct meter *m);
/* Test hook: the sharing group's reading budget spent (meter_int.h): no
 * round of readings at a sample that found the group moved until it grows
 * back (1 s of debt: 20 s). */
void meter_linux_owe(struct meter *m);
/* Test hook: samples that walked the tree (children files) so far. */
unsigned long meter_linux_walks(const struct meter *m);
/* Test hook: samples that stood on the last per-process readings (a still
 * tree in its cgroup: tree_still) so far. */
unsigned long meter_linux_still(const struct meter *m);
/* Test hook: the mapped figure's readings of /proc/PID/smaps (pages true) or
 * /proc/PID/maps made so far. */
unsigned long meter_linux_mapping_reads(const struct meter *m, bool pages);

struct status_fields {
	unsigned have;     /* ST_* bits of the lines found */
	uint64_t rss_anon, rss_file, rss_shmem, vm_rss, vm_swap, vm_hwm; /* bytes */
	int threads;
	char state;        /* 'R', 'S', 'Z', ... ; 0 when absent */
};
enum {
	ST_RSS_ANON = 1u << 0, ST_RSS_SHMEM = 1u << 1, ST_VM_RSS = 1u << 2,
	ST_VM_SWAP = 1u << 3, ST_VM_HWM = 1u << 4, ST_THREADS = 1u << 5,
	ST_STATE = 1u << 6, ST_RSS_FILE = 1u << 7,
};
struct mthread {
	pid_t tid;
	int fd;       /* /proc/PID/task/TID/children */
	unsigned gen; /* walk in which it was last seen */
};

/* A tree process on Linux: struct mproc plus its kept /proc descriptors. */
struct linux_proc {
	struct mproc super;
	int status_fd;   /* /proc/PID/status, -1 when not open */
	int task_fd;     /* /proc/PID/task directory, -1 */
	int children_fd; /* /proc/PID/task/PID/children, -1 */
	int statm_fd;    /* /proc/PID/statm, -1 (not open, or over the budget) */
	uint64_t statm[3]; /* statm's size, resident, shared pages at the last status read */
	unsigned reused; /* samples answered from the last status reading since */
	int64_t status_ns; /* when status was last read */
	pid_t ppid;      /* the tree process whose children listed it, 0: none */
	int threads;     /* Threads: from the last status read */
	int64_t listed_ns; /* when task/ was last listed, 0 = never */
	bool hwm_read;   /* VmHWM was read once (seen alive) */
	bool have_last;  /* last and statm hold a status reading and its statm */
	struct status_fields last; /* the last status reading */
	/* Sharing (meter.c, share_update): the part of RssAnon + RssShmem that
	 * other tree processes also map, (RssAnon + RssShmem) - (Pss_Anon +
	 * Pss_Shmem) at its last smaps_rollup reading; 0 when it shares nothing
	 * (or too little to tell from the counters' error). */
	uint64_t excess;
	uint64_t rss_excess; /* Rss - Pss (all pages) then, for VmHWM; 0 with excess */
	/* That reading's figures (shares_from_reading): RssAnon + RssShmem at it, Rss,
	 * Pss_Anon + Pss_Shmem, Pss, Private_Clean + Private_Dirty, Private_Dirty. */
	uint64_t read_rss_as, read_rss, pss_as, pss_all, uss, private_dirty;
	uint64_t read_shmem; /* RssShmem at that reading */
	uint64_t shared_rss; /* Rss - Private_Clean - Private_Dirty then: its pages others map */
	/* The shares of shared pages it counts (Pss less its private pages: anon + shmem,
	 * and all pages for peaks), with those handed over by partners that left; they go
	 * to a partner when it leaves (share_gone). */
	uint64_t carried, carried_rss;
	bool no_mm;        /* its last reading found no pages left: it is exiting */
	bool pss_read;     /* an smaps_rollup reading of it succeeded */
	bool maxrss_taken; /* its hwm is its ru_maxrss (meter_peak_exited) */
	bool provisional;  /* a new child of a partner read before its fork: excess leaves
			    * out all but its private dirty pages (its parent counts the rest) */
	bool partner;      /* the parent of such a child: read in the group's next round */
	bool gave;         /* it left, and its carried shares went to a partner */
	bool moved;        /* its statm differed from the sample before's (statm_seen) */
	uint64_t statm_seen[3]; /* the last statm read */
	struct {              /* its shares before a round (round_of: restored when torn) */
		uint64_t excess, rss_excess, carried, carried_rss, read_rss_as, read_shmem;
		bool provisional, partner;
	} saved;
	uint64_t faults;   /* its minflt + majflt (stat, every thread's) at the last look */
	uint64_t runtime;  /* its main thread's run time (schedstat) then; UINT64_MAX: not known */
	int faults_fd;     /* /proc/PID/stat, -1 */
	int runtime_fd;    /* /proc/PID/schedstat, -1 */
	bool rolled;       /* excess is from a reading taken while it had partners */
	unsigned roll_gen; /* the reading's round (linux_meter.roll_gen) */
	/* Mapped files (mapped.c): RssFile when its smaps was last read (map_read),
	 * its major faults (majflt + cmajflt of stat) at the last reading, and
	 * whether status was re-read since (stat follows). */
	uint64_t map_file;
	uint64_t map_vsize;  /* its statm size (pages) then: its mappings */
	uint64_t majflt;
	bool map_read, majflt_stale;
	/* Left the run's cgroup (a tree process that moved itself): counted by
	 * its own RssAnon + RssShmem above outside_base, what it had when it
	 * left (those pages stay charged to the run's cgroup). */
	bool outside;
	uint64_t outside_base;
	struct mthread *thr; /* children fds of the other threads */
	size_t nthr, thr_alloc;
	unsigned gen;
};

/* ---- parsers (parse.c; pure) -------------------------------------------- */

/* Parse /proc/PID/status text (need not be NUL-terminated). A zombie or a
 * kernel thread has no Vm* lines: their bits stay clear. */
void linux_parse_status(const char *buf, size_t len, struct status_fields *f);

struct meminfo_fields {
	unsigned have; /* MI_* bits */
	uint64_t mem_total, mem_available, swap_total, swap_free, shmem; /* bytes */
};
enum { MI_MEM_TOTAL = 1u << 0, MI_MEM_AVAILABLE = 1u << 1, MI_SWAP_TOTAL = 1u << 2,
       MI_SWAP_FREE = 1u << 3, MI_SHMEM = 1u << 4 };
void linux_parse_meminfo(const char *buf, size_t len, struct meminfo_fields *f);

/* Parse a list of decimal pids separated by spaces/newlines (the children
 * file), calling fn(pid, arg) for each. Returns the number parsed. */
size_t linux_parse_pidlist(const char *buf, size_t len, void (*fn)(pid_t, void *), void *arg);

/* The first three fields of /proc/PID/statm (size, resident, shared; pages).
 * Returns 0, or -1 when the text has fewer. */
int linux_parse_statm(const char *buf, size_t len, uint64_t v[3]);

/* Rss, Pss, Pss_Anon, Pss_Shmem (since Linux 5.7), Private_Clean and Private_Dirty of
 * /proc/PID/smaps_rollup, bytes. */
struct rollup_fields {
	unsigned have; /* RU_* */
	uint64_t rss, pss, pss_anon, pss_shmem, private_clean, private_dirty;
};
enum { RU_PSS_ANON = 1u << 0, RU_PSS_SHMEM = 1u << 1, RU_RSS = 1u << 2, RU_PSS = 1u << 3,
       RU_PRIVATE_DIRTY = 1u << 4, RU_PRIVATE_CLEAN = 1u << 5 };
void linux_parse_rollup(const char *buf, size_t len, struct rollup_fields *f);

/* One header line of /proc/PID/smaps ("START-END PERMS OFFSET MAJ:MIN INODE PATH",
 * no newline): *exec (PERMS has x), the device, the inode and the path (NULL
 * when the mapping has none; not NUL-terminated, *plen bytes). Returns 0, or -1
 * when the line is not a header (a "Key: value" line). */
struct smaps_header {
	bool exec;
	uint64_t dev; /* makedev(MAJ, MIN) */
	uint64_t ino;
	const char *path;
	size_t plen;
};
int linux_parse_smaps_header(const char *line, size_t len, struct smaps_header *h);

/* majflt + cmajflt of /proc/PID/stat text (fields 12 and 13). Returns 0, or -1
 * when they are absent. */
int linux_parse_stat_majflt(const char *buf, size_t len, uint64_t *majflt);

/* minflt + majflt of /proc/PID/stat text (fields 10 and 12, counted after
 * the last ')': comm may hold one). Returns 0, or -1 when they are absent. */
int linux_parse_stat_faults(const char *buf, size_t len, uint64_t *faults);

/* A memory cgroup's memory.stat (bytes): v1 total_rss, total_shmem,
 * total_mapped_file; v2 anon, shmem, file_mapped. */
struct memcg_fields {
	unsigned have; /* MC_* */
	uint64_t anon, shmem, file_mapped;
};
enum { MC_ANON = 1u << 0, MC_SHMEM = 1u << 1, MC_FILE_MAPPED = 1u << 2 };
void linux_parse_memcg_stat(const char *buf, size_t len, bool v2, struct memcg_fields *f);

#endif
