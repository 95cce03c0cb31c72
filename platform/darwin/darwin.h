/* darwin.h -- the macOS meter's own parts: the table of libproc/sysctl calls it makes
 *
 * platform/darwin/meter.c makes no macOS call itself: every one goes through
 * struct darwin_api. platform/darwin/sys.c fills the table from libproc and
 * sysctl on macOS; the unit tests fill it with a scripted fake, so the meter
 * builds and is tested on Linux too (docs/platforms.md says what that covers).
 */
#ifndef SB_PLATFORM_DARWIN_H
#define SB_PLATFORM_DARWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "meter/meter_internal.h"

/* What the meter reads of proc_pid_rusage(pid, RUSAGE_INFO_V4), in bytes. */
struct darwin_usage {
	uint64_t resident;     /* ri_resident_size */
	uint64_t footprint;    /* ri_phys_footprint */
	uint64_t lifetime_max; /* ri_lifetime_max_phys_footprint */
	uint64_t interval_max; /* ri_interval_max_phys_footprint */
	uint64_t start;        /* ri_proc_start_abstime: tells a reused pid apart */
	uint64_t pageins;      /* ri_pageins + ri_child_pageins: pages read from disk */
};

/* One memory region of a process (proc_pidinfo PROC_PIDREGIONPATHINFO). */
struct darwin_region {
	uint64_t address, size; /* pri_address, pri_size */
	uint64_t offset;        /* pri_offset: where in its file */
	uint64_t resident;      /* pri_pages_resident, in bytes */
	bool exec;              /* pri_protection has VM_PROT_EXECUTE */
	uint64_t dev, ino;      /* its file's vst_dev, vst_ino; ino 0: no file */
	char path[1024];        /* its file's path (vip_path), "" for none */
};

/* One process of the process list (sysctl KERN_PROC_ALL, or proc_pidinfo). */
struct darwin_pinfo {
	pid_t pid, ppid, pgid;
	bool zombie; /* SZOMB */
};

struct darwin_api {
	/* proc_pid_rusage(RUSAGE_INFO_V4): 0, or -1 with errno (ESRCH gone,
	 * EPERM another user's or a setuid process) */
	int (*pid_rusage)(pid_t pid, struct darwin_usage *u);
	/* proc_pidinfo(PROC_PIDT_SHORTBSDINFO): 0, or -1 with errno */
	int (*pid_info)(pid_t pid, struct darwin_pinfo *p);
	/* Every process in one call (sysctl KERN_PROC_ALL) into *buf (grown
	 * with xrealloc, *alloc entries): the count, or -1 */
	int (*list_all)(struct darwin_pinfo **buf, size_t *alloc);
	/* proc_listchildpids / proc_listpgrppids into buf (bytes long): libproc
	 * returns a count of pids, the kernel call below it a count of bytes;
	 * the meter accepts either (it zeroes buf and reads up to the first 0) */
	int (*list_children)(pid_t ppid, pid_t *buf, int bytes);
	int (*list_pgrp)(pid_t pgid, pid_t *buf, int bytes);
	/* proc_reset_footprint_interval (private, found with dlsym): NULL when
	 * absent; 0, or -1 with errno (EINVAL: a kernel built without it) */
	int (*reset_interval)(pid_t pid);
	/* sysctlbyname() read: 0 or -1 */
	int (*sysctl)(const char *name, void *buf, size_t *len);
	pid_t (*self)(void);            /* getpid */
	pid_t (*pgid_of)(pid_t pid);    /* getpgid */
	pid_t (*own_pgrp)(void);        /* getpgrp */
	/* proc_pidinfo(PROC_PIDREGIONPATHINFO): the region at or after address;
	 * 0, or -1 when there is none (EINVAL) or the process is gone; NULL: no
	 * region walk (no mapped figure) */
	int (*region)(pid_t pid, uint64_t address, struct darwin_region *r);
};

/* The macOS meter on the given calls (sys.c: the real ones). */
int meter_darwin_init(struct meter *m, const struct darwin_api *api);

/* A tree process on macOS. */
struct darwin_proc {
	struct mproc super;
	uint64_t start;  /* ri_proc_start_abstime when first read */
	uint64_t resident; /* ri_resident_size at the last reading */
	uint64_t walked; /* ... at its last region walk (mapped.c) */
	uint64_t pageins; /* its pageins at the last reading */
	bool unreadable; /* EPERM: kept for its children, counted as nothing */
	bool seen_alive; /* read once while not a zombie */
	bool was_walked; /* walked is set */
};

/* mapped.c: the mapped figure of the macOS meter. The resident pages of the
 * tree's file-backed regions of data files (not of files some process maps
 * executable, not under the system's directories), a region of a file at an
 * offset counted once across the tree (a forked child's copy of its parent's
 * mapping is the same pages); walked again when a process's resident size
 * moved or the process set changed, within a cost budget. And the tree's
 * pageins (major faults). */
struct darwin_mapped;
struct darwin_mapped *darwin_mapped_new(void);
void darwin_mapped_free(struct darwin_mapped *dm); /* NULL ok */
/* A new tree (meter_track). */
void darwin_mapped_reset(struct darwin_mapped *dm);
/* A process gone: its pageins count on when no tree process reaped it
 * (outside: the root, which the recorder reaps). */
void darwin_mapped_departed(struct darwin_mapped *dm, const struct darwin_proc *p, bool outside);
/* The sample's mapped and majflt, after the tree's readings. */
void darwin_mapped_sample(struct darwin_mapped *dm, const struct darwin_api *api,
			  struct proctab *tab, struct trace_sample *s);
/* A data file first seen resident since the last call: 1, or 0 when none. */
int darwin_mapped_next_file(struct darwin_mapped *dm, const char **path, uint64_t *size);

/* sys.c's structures as the xnu headers lay them out (checked there with
 * static asserts): the swap figures of vm.swapusage. */
struct darwin_swap {
	uint64_t total, avail, used;
	uint32_t pagesize;
	uint32_t encrypted;
};

#endif
