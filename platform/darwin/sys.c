/* sys.c -- macOS: the libproc and sysctl calls behind the meter, the process table, host facts */
#include "darwin.h"

#include <dlfcn.h>
#include <errno.h>
#include <libproc.h>
#include <limits.h>
#include <mach-o/dyld.h>
#include <mach/vm_prot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/proc_info.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "platform/platform.h"

/* The layouts darwin.h restates (docs/platforms.md, macOS). */
_Static_assert(sizeof(struct darwin_swap) == sizeof(struct xsw_usage), "xsw_usage layout");
_Static_assert(sizeof(struct rusage_info_v4) == 296, "rusage_info_v4 layout");

#ifndef SZOMB
#define SZOMB 5
#endif

static int sys_pid_rusage(pid_t pid, struct darwin_usage *u)
{
	struct rusage_info_v4 ri;
	if (proc_pid_rusage(pid, RUSAGE_INFO_V4, (rusage_info_t *)&ri))
		return -1;
	u->resident = ri.ri_resident_size;
	u->footprint = ri.ri_phys_footprint;
	u->lifetime_max = ri.ri_lifetime_max_phys_footprint;
	u->interval_max = ri.ri_interval_max_phys_footprint;
	u->start = ri.ri_proc_start_abstime;
	u->pageins = ri.ri_pageins + ri.ri_child_pageins;
	return 0;
}

/* The region at or after address, with its file (PROC_PIDREGIONPATHINFO). */
static int sys_region(pid_t pid, uint64_t address, struct darwin_region *r)
{
	struct proc_regionwithpathinfo rp;
	static uint64_t page;
	if (!page) {
		long ps = sysconf(_SC_PAGESIZE);
		page = ps > 0 ? (uint64_t)ps : 16384;
	}
	memset(&rp, 0, sizeof(rp));
	errno = 0;
	int n = proc_pidinfo(pid, PROC_PIDREGIONPATHINFO, address, &rp, (int)sizeof(rp));
	if (n != (int)sizeof(rp)) {
		if (!errno)
			errno = EINVAL; /* no region at or after address */
		return -1;
	}
	r->address = rp.prp_prinfo.pri_address;
	r->size = rp.prp_prinfo.pri_size;
	r->offset = rp.prp_prinfo.pri_offset;
	r->resident = (uint64_t)rp.prp_prinfo.pri_pages_resident * page;
	r->exec = (rp.prp_prinfo.pri_protection & VM_PROT_EXECUTE) != 0;
	r->dev = rp.prp_vip.vip_vi.vi_stat.vst_dev;
	r->ino = rp.prp_vip.vip_vi.vi_stat.vst_ino;
	snprintf(r->path, sizeof(r->path), "%s", rp.prp_vip.vip_path);
	return 0;
}

static int sys_pid_info(pid_t pid, struct darwin_pinfo *p)
{
	struct proc_bsdshortinfo sh;
	errno = 0;
	int n = proc_pidinfo(pid, PROC_PIDT_SHORTBSDINFO, 1, &sh, PROC_PIDT_SHORTBSDINFO_SIZE);
	if (n != PROC_PIDT_SHORTBSDINFO_SIZE) {
		if (n > 0 || !errno)
			errno = ESRCH; /* a short answer, or none without a reason: gone */
		return -1;
	}
	p->pid = pid;
	p->ppid = (pid_t)sh.pbsi_ppid;
	p->pgid = (pid_t)sh.pbsi_pgid;
	p->zombie = sh.pbsi_status == SZOMB;
	return 0;
}

/* sysctl(KERN_PROC_ALL) into a malloc'd kinfo_proc array; NULL on failure. */
static struct kinfo_proc *kproc_all(size_t *count)
{
	int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_ALL, 0 };
	for (int tries = 0; tries < 4; tries++) {
		size_t len = 0;
		if (sysctl(mib, 3, NULL, &len, NULL, 0))
			return NULL;
		len += len / 4 + 16 * sizeof(struct kinfo_proc); /* the list can grow */
		struct kinfo_proc *kp = xmalloc(len);
		if (!sysctl(mib, 3, kp, &len, NULL, 0)) {
			*count = len / sizeof(*kp);
			return kp;
		}
		free(kp);
		if (errno != ENOMEM)
			return NULL;
	}
	return NULL;
}

static int sys_list_all(struct darwin_pinfo **buf, size_t *alloc)
{
	size_t n;
	struct kinfo_proc *kp = kproc_all(&n);
	if (!kp)
		return -1;
	ALLOC_GROW(*buf, n ? n : 1, *alloc);
	for (size_t i = 0; i < n; i++) {
		(*buf)[i].pid = kp[i].kp_proc.p_pid;
		(*buf)[i].ppid = kp[i].kp_eproc.e_ppid;
		(*buf)[i].pgid = kp[i].kp_eproc.e_pgid;
		(*buf)[i].zombie = kp[i].kp_proc.p_stat == SZOMB;
	}
	free(kp);
	return (int)n;
}

static int sys_list_children(pid_t ppid, pid_t *buf, int bytes)
{
	return proc_listchildpids(ppid, buf, bytes);
}

static int sys_list_pgrp(pid_t pgid, pid_t *buf, int bytes)
{
	return proc_listpgrppids(pgid, buf, bytes);
}

static int sys_sysctl(const char *name, void *buf, size_t *len)
{
	return sysctlbyname(name, buf, len, NULL, 0);
}

static pid_t sys_self(void)
{
	return getpid();
}

static pid_t sys_own_pgrp(void)
{
	return getpgrp();
}

int meter_platform_init(struct meter *m)
{
	static struct darwin_api api = {
		sys_pid_rusage, sys_pid_info, sys_list_all, sys_list_children, sys_list_pgrp,
		NULL, sys_sysctl, sys_self, getpgid, sys_own_pgrp, sys_region,
	};
	/* Private symbol: resolved at run time (meter_darwin_init tries it). */
	void *sym = dlsym(RTLD_DEFAULT, "proc_reset_footprint_interval");
	memcpy(&api.reset_interval, &sym, sizeof(sym));
	return meter_darwin_init(m, &api);
}

/* ---- the process table (platform.h) ------------------------------------ */

static void from_kproc(const struct kinfo_proc *kp, struct pl_proc *p)
{
	p->pid = kp->kp_proc.p_pid;
	p->ppid = kp->kp_eproc.e_ppid;
	p->pgrp = kp->kp_eproc.e_pgid;
	p->state = kp->kp_proc.p_stat == SZOMB ? 'Z' : 'R';
	p->start = (uint64_t)kp->kp_proc.p_starttime.tv_sec * 1000000u +
		   (uint64_t)kp->kp_proc.p_starttime.tv_usec;
}

int pl_proc_read(pid_t pid, struct pl_proc *p)
{
	int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, pid };
	struct kinfo_proc kp;
	size_t len = sizeof(kp);
	if (pid <= 0 || sysctl(mib, 4, &kp, &len, NULL, 0) || len == 0)
		return -1;
	from_kproc(&kp, p);
	return 0;
}

int pl_proc_each(int (*fn)(const struct pl_proc *p, void *arg), void *arg)
{
	size_t n;
	struct kinfo_proc *kp = kproc_all(&n);
	if (!kp)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct pl_proc p;
		from_kproc(&kp[i], &p);
		if (fn(&p, arg))
			break;
	}
	free(kp);
	return 0;
}

/* KERN_PROCARGS2: int argc, the executable path, NULs, then argc strings. */
int pl_proc_cmdline(pid_t pid, char *buf, size_t size)
{
	int mib[3] = { CTL_KERN, KERN_PROCARGS2, pid };
	size_t len = 0;
	if (size < 2 || sysctl(mib, 3, NULL, &len, NULL, 0) || len < sizeof(int))
		return -1;
	char *raw = xmalloc(len);
	if (sysctl(mib, 3, raw, &len, NULL, 0) || len < sizeof(int)) {
		free(raw);
		return -1;
	}
	int argc;
	memcpy(&argc, raw, sizeof(argc));
	char *s = raw + sizeof(int), *end = raw + len;
	s = memchr(s, '\0', (size_t)(end - s)); /* past the executable path */
	while (s && s < end && !*s)
		s++;
	size_t k = 0;
	for (int a = 0; s && s < end && a < argc && k + 1 < size; a++) {
		size_t n = strnlen(s, (size_t)(end - s));
		if (a && k + 1 < size)
			buf[k++] = ' ';
		size_t c = n < size - 1 - k ? n : size - 1 - k;
		memcpy(buf + k, s, c);
		k += c;
		s += n + 1;
	}
	buf[k] = '\0';
	free(raw);
	return k ? 0 : -1;
}

int pl_set_subreaper(void)
{
	return 1; /* no such thing: spawn.c follows descendants by pid and start */
}

pid_t pl_wait(pid_t pid, int *status, int flags, uint64_t *maxrss)
{
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	pid_t r = wait4(pid, status, flags, &ru);
	*maxrss = r > 0 && ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss : 0;
	return r;
}

int pl_memory_pressure_open(void)
{
	return -1; /* the guard polls: no pressure notification is used here */
}

char *pl_self_exe(void)
{
	char buf[PATH_MAX];
	uint32_t size = sizeof(buf);
	if (_NSGetExecutablePath(buf, &size))
		return NULL;
	return realpath(buf, NULL);
}

/* ---- host facts ---------------------------------------------------------- */

void host_info_get(struct host_info *h)
{
	struct utsname u;
	char ver[64];
	size_t len = sizeof(ver);
	uint64_t memsize = 0;
	struct xsw_usage xsw;

	memset(h, 0, sizeof(*h));
	if (!uname(&u)) {
		snprintf(h->name, sizeof(h->name), "%s", u.nodename);
		snprintf(h->os, sizeof(h->os), "%s", u.sysname);
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	}
	if (!sysctlbyname("kern.osproductversion", ver, &len, NULL, 0) && len > 0) {
		ver[sizeof(ver) - 1] = '\0';
		snprintf(h->os, sizeof(h->os), "macOS %s", ver);
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	h->cpus = cpus > 0 ? (int)cpus : 1;
	len = sizeof(memsize);
	if (!sysctlbyname("hw.memsize", &memsize, &len, NULL, 0))
		h->memory = memsize;
	len = sizeof(xsw);
	if (!sysctlbyname("vm.swapusage", &xsw, &len, NULL, 0))
		h->swap = xsw.xsu_total;
}

int pl_self_identity(struct pl_identity *id)
{
	memset(id, 0, sizeof(*id));
	struct timeval tv;
	size_t len = sizeof(tv);
	int mib[2] = { CTL_KERN, KERN_BOOTTIME };
	if (!sysctl(mib, 2, &tv, &len, NULL, 0))
		snprintf(id->boot, sizeof(id->boot), "%lld.%06d", (long long)tv.tv_sec,
			 (int)tv.tv_usec);
	return 0;
}
