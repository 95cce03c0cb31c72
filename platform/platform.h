/* platform.h -- the neutral process and machine interface (after htop's Platform.h)
 *
 * One implementation per operating system, in its own directory:
 *   platform/linux/   procfs.c: the one /proc walker and the one /proc/PID/stat
 *                     parser (used by the meter, runner/spawn.c and runner/guard.c);
 *                     meter.c + parse.c: the Linux memory meter.
 *   platform/darwin/  sys.c: sysctl(KERN_PROC), libproc; meter.c: the macOS
 *                     memory meter, written against a table of libproc/sysctl
 *                     calls (struct darwin_api) so that it also builds and is
 *                     unit-tested on Linux with a scripted fake.
 * Shared by both meters: proctab.c, the table of the processes seen in a
 * metered tree (struct mproc, which each OS's entry extends).
 * The Makefile compiles exactly one of them and refuses any other system.
 * docs/platforms.md holds the platform facts this code relies on.
 */
#ifndef SB_PLATFORM_H
#define SB_PLATFORM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/* One process as the process table reports it. */
struct pl_proc {
	pid_t pid, ppid, pgrp;
	char state;     /* 'R', 'S', ...; 'Z' for a zombie */
	uint64_t start; /* start time in the platform's own unit (Linux: clock
			 * ticks since boot; macOS: microseconds since the epoch):
			 * the same pid with another start is another process */
};

/* The process pid; 0, or -1 when it is gone or cannot be read. */
int pl_proc_read(pid_t pid, struct pl_proc *p);

/* One walk over every process of the machine: fn(p, arg) for each, until fn
 * returns non-zero. Returns 0, or -1 when the process list cannot be read. */
int pl_proc_each(int (*fn)(const struct pl_proc *p, void *arg), void *arg);

/* The command line of pid, arguments joined by spaces, cut to size. Returns
 * 0, or -1 for none (a kernel thread, a zombie, another user's process). */
int pl_proc_cmdline(pid_t pid, char *buf, size_t size);

/* Keep orphaned descendants as our children (Linux: PR_SET_CHILD_SUBREAPER).
 * Returns 0, 1 where the system has no such thing (macOS: descendants that
 * leave are then followed by pid and start time), -1 after error(). */
int pl_set_subreaper(void);

/* waitpid() through wait4(): also sets *maxrss to the process's ru_maxrss in
 * bytes when it was reaped (KiB on Linux, bytes on macOS; 0 = unknown). */
pid_t pl_wait(pid_t pid, int *status, int flags, uint64_t *maxrss);

/* The real path of the running executable (Linux: /proc/self/exe; macOS:
 * _NSGetExecutablePath), or NULL. Caller frees. */
char *pl_self_exe(void);

/* Memory-pressure wakeups for the guard: an fd to poll() for POLLPRI when the
 * machine's memory stalls (Linux: a PSI trigger on /proc/pressure/memory,
 * "some" 150 ms in 1 s, or 300 ms in 2 s where unprivileged triggers need a
 * 2 s window), or -1 where the system offers none (macOS, an old kernel). */
int pl_memory_pressure_open(void);

/* What tells this process apart beyond its pid, for a marker another
 * process checks later: the boot (Linux: /proc/sys/kernel/random/boot_id;
 * macOS: kern.boottime) and the pid namespace its pid is a number of (Linux:
 * /proc/self/ns/pid, "pid:[4026531836]"; macOS: "", it has none). A field
 * that cannot be read is "". Returns 0. */
struct pl_identity {
	char boot[64];
	char pidns[64];
};
int pl_self_identity(struct pl_identity *id);

/* Host facts for the start record. */
struct host_info {
	char name[256]; /* the node name (uname), which tells machines of one cluster apart */
	char os[64], kernel[128], machine[64];
	int cpus;
	uint64_t memory, swap;
};
void host_info_get(struct host_info *h);

#endif
