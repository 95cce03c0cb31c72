/* procfs.h -- /proc on Linux: the one directory walker and the one stat parser
 *
 * Used by the Linux meter (platform/linux/meter.c), by pl_proc_each() and
 * pl_proc_read() (runner/spawn.c, runner/guard.c). Not for other systems.
 */
#ifndef SB_PROCFS_H
#define SB_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

#include "platform/platform.h"

/* The numeric entries (pids, or tids in a task/ directory) of the open
 * directory dirfd, from its start: fn(number, arg) for each. buf (cap bytes,
 * 4 KiB or more) holds the raw entries: callers on a hot path keep one, so a
 * walk allocates nothing. Returns 0, or -1 when the directory cannot be read. */
int procfs_each_number(int dirfd, char *buf, size_t cap, void (*fn)(pid_t, void *), void *arg);

/* Parse /proc/PID/stat text (need not be NUL-terminated): "PID (comm) S PPID
 * PGRP ... STARTTIME(22) ...". comm may hold spaces and ')', so fields are
 * read after the last ')'. Returns 0, or -1 when the text is not a stat line. */
int procfs_parse_stat(const char *buf, size_t len, struct pl_proc *p);

/* Read and parse the stat file of pid under the open /proc directory procfd
 * (AT_FDCWD-relative "/proc" when procfd < 0), with buf as scratch space.
 * Returns 0 or -1 (gone). */
int procfs_read_stat(int procfd, pid_t pid, char *buf, size_t cap, struct pl_proc *p);

#endif
