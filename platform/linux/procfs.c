/* procfs.c -- the Linux process table: one /proc walker, one stat parser, host facts */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "platform/linux/linux.h"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int procfs_each_number(int dirfd, char *buf, size_t cap, void (*fn)(pid_t, void *), void *arg)
{
	if (lseek(dirfd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		long n = syscall(SYS_getdents64, dirfd, buf, cap);
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			off += d->d_reclen;
			const char *s = d->d_name;
			if (*s < '1' || *s > '9')
				continue;
			long v = 0;
			while (*s >= '0' && *s <= '9' && v < (1L << 30))
				v = v * 10 + (*s++ - '0');
			if (!*s && v < (1L << 30))
				fn((pid_t)v, arg);
		}
	}
}

/* Skip one blank, then a decimal (a leading '-' allowed: pgrp can be -1 for
 * no terminal fields, never for ours). */
static int field_num(const char **s, const char *end, long long *v)
{
	const char *p = *s;
	bool neg = false;
	while (p < end && *p == ' ')
		p++;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return -1;
	long long x = 0;
	while (p < end && *p >= '0' && *p <= '9')
		x = x * 10 + (*p++ - '0');
	*v = neg ? -x : x;
	*s = p;
	return 0;
}

static void skip_field(const char **s, const char *end)
{
	const char *p = *s;
	while (p < end && *p == ' ')
		p++;
	while (p < end && *p != ' ')
		p++;
	*s = p;
}

int procfs_parse_stat(const char *buf, size_t len, struct pl_proc *p)
{
	const char *end = buf + len, *s = NULL;
	long long pid, ppid, pgrp, start;
	const char *q = buf;
	if (field_num(&q, end, &pid) || pid <= 0)
		return -1;
	for (size_t i = len; i > 0; i--) {
		if (buf[i - 1] == ')') {
			s = buf + i;
			break;
		}
	}
	/* after ')': " S PPID PGRP SESSION TTY TPGID FLAGS MINFLT CMINFLT MAJFLT
	 * CMAJFLT UTIME STIME CUTIME CSTIME PRIORITY NICE THREADS ITREAL START" */
	if (!s || end - s < 4 || s[0] != ' ' || s[2] != ' ')
		return -1;
	p->state = s[1];
	s += 2;
	if (field_num(&s, end, &ppid) || field_num(&s, end, &pgrp))
		return -1;
	for (int f = 6; f < 22; f++)
		skip_field(&s, end);
	if (field_num(&s, end, &start))
		start = 0; /* cut short: the start time is unknown */
	p->pid = (pid_t)pid;
	p->ppid = (pid_t)ppid;
	p->pgrp = (pid_t)pgrp;
	p->start = (uint64_t)start;
	return 0;
}

/* Set by the meter's opens that failed for want of descriptors (meter_int.h). */
bool linux_out_of_files;

int procfs_read_stat(int procfd, pid_t pid, char *buf, size_t cap, struct pl_proc *p)
{
	char name[40];
	snprintf(name, sizeof(name), procfd >= 0 ? "%d/stat" : "/proc/%d/stat", (int)pid);
	int fd = openat(procfd >= 0 ? procfd : AT_FDCWD, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	do
		n = read(fd, buf, cap);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n > 0 ? procfs_parse_stat(buf, (size_t)n, p) : -1;
}

int pl_proc_read(pid_t pid, struct pl_proc *p)
{
	char buf[1024];
	if (pid <= 0)
		return -1;
	return procfs_read_stat(-1, pid, buf, sizeof(buf), p);
}

struct each_ctx {
	int procfd;
	int (*fn)(const struct pl_proc *, void *);
	void *arg;
	int stop;
	char stat[1024];
};

static void each_pid(pid_t pid, void *arg)
{
	struct each_ctx *c = arg;
	struct pl_proc p;
	if (c->stop || procfs_read_stat(c->procfd, pid, c->stat, sizeof(c->stat), &p))
		return; /* stopped, or gone since the listing */
	c->stop = c->fn(&p, c->arg);
}

int pl_proc_each(int (*fn)(const struct pl_proc *p, void *arg), void *arg)
{
	struct each_ctx *c = xcalloc(1, sizeof(*c));
	char *dents = xmalloc(32768);
	int rc = -1;
	c->fn = fn;
	c->arg = arg;
	c->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->procfd >= 0) {
		rc = procfs_each_number(c->procfd, dents, 32768, each_pid, c);
		close(c->procfd);
	}
	free(dents);
	free(c);
	return rc;
}

int pl_proc_cmdline(pid_t pid, char *buf, size_t size)
{
	char path[64];
	if (size < 2)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1; /* kernel threads and zombies have none */
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

int pl_set_subreaper(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		return error("cannot become a child subreaper: %s", strerror(errno));
	return 0;
}

pid_t pl_wait(pid_t pid, int *status, int flags, uint64_t *maxrss)
{
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	pid_t r = wait4(pid, status, flags, &ru);
	*maxrss = r > 0 && ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
	return r;
}

char *pl_self_exe(void)
{
	return realpath("/proc/self/exe", NULL);
}

/* ---- host facts ---------------------------------------------------------- */

static void copy_str(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* PRETTY_NAME from /etc/os-release ("Debian GNU/Linux 12 (bookworm)"). */
static bool os_pretty_name(char *out, size_t cap)
{
	char *data;
	size_t len;
	bool found = false;
	if (access("/etc/os-release", R_OK) || read_file("/etc/os-release", &data, &len))
		return false;
	for (char *line = data; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (str_starts_with(line, "PRETTY_NAME=")) {
			char *v = line + 12;
			size_t n = strlen(v);
			if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
				v++;
				n -= 2;
			}
			if (n) {
				copy_str(out, cap, v, n);
				found = true;
			}
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(data);
	return found;
}

void host_info_get(struct host_info *h)
{
	struct utsname u;
	memset(h, 0, sizeof(*h));
	if (!uname(&u)) {
		copy_str(h->name, sizeof(h->name), u.nodename, strlen(u.nodename));
		copy_str(h->os, sizeof(h->os), u.sysname, strlen(u.sysname));
		copy_str(h->kernel, sizeof(h->kernel), u.release, strlen(u.release));
		copy_str(h->machine, sizeof(h->machine), u.machine, strlen(u.machine));
	}
	os_pretty_name(h->os, sizeof(h->os));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	h->cpus = cpus > 0 ? (int)cpus : 1;

	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char buf[8192];
		ssize_t n = pread(fd, buf, sizeof(buf), 0);
		close(fd);
		if (n > 0) {
			struct meminfo_fields mi;
			linux_parse_meminfo(buf, (size_t)n, &mi);
			h->memory = mi.mem_total;
			h->swap = mi.swap_total;
		}
	}
}
