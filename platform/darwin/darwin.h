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
};

/* The macOS meter on the given calls (sys.c: the real ones). */
int meter_darwin_init(struct meter *m, const struct darwin_api *api);

/* A tree process on macOS. */
struct darwin_proc {
	struct mproc super;
	uint64_t start;  /* ri_proc_start_abstime when first read */
	bool unreadable; /* EPERM: kept for its children, counted as nothing */
	bool seen_alive; /* read once while not a zombie */
};

/* sys.c's structures as the xnu headers lay them out (checked there with
 * static asserts): the swap figures of vm.swapusage. */
struct darwin_swap {
	uint64_t total, avail, used;
	uint32_t pagesize;
	uint32_t encrypted;
};

#endif
