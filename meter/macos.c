/* macos.c -- the macOS meter: proc_pid_rusage footprint, interval-max peaks, group + parent walk */
#include "meter_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <libproc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/proc_info.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/util.h"

/*
 * Facts (PLATFORMS.md): proc_pid_rusage(pid, RUSAGE_INFO_V4) gives
 * ri_phys_footprint (what Activity Monitor shows), ri_resident_size and the
 * exact ri_interval_max_phys_footprint, which proc_reset_footprint_interval
 * (private: found with dlsym) resets to the current footprint. There is no
 * subreaper: the tree is the root's descendants (proc_listchildpids) plus
 * its process group (proc_listpgrppids), and every pid seen is remembered
 * until it is gone. A pid reused by an unrelated process is told apart by
 * its start time (ri_proc_start_abstime).
 */

#ifndef SZOMB
#define SZOMB 5
#endif

#define LIST_MAX 2048

struct macos_meter {
	struct proctab tab;
	pid_t self_pid;
	pid_t pgid;             /* the root's group when it has its own, else 0 */
	int (*reset_interval)(pid_t);
	bool warned_reset;
	uint64_t departed_peak; /* interval max of processes gone since the reset */
	pid_t list[LIST_MAX];
};

static const char footprint_words[] =
	"physical footprint of the process tree (ri_phys_footprint: private anonymous and "
	"compressed memory, IOKit/Metal buffers, page tables), as Activity Monitor shows";

static int read_rusage(pid_t pid, struct rusage_info_v4 *ri)
{
	return proc_pid_rusage(pid, RUSAGE_INFO_V4, (rusage_info_t *)ri);
}

static bool is_zombie(pid_t pid)
{
	struct proc_bsdshortinfo sh;
	int n = proc_pidinfo(pid, PROC_PIDT_SHORTBSDINFO, 1, &sh, PROC_PIDT_SHORTBSDINFO_SIZE);
	return n == PROC_PIDT_SHORTBSDINFO_SIZE && sh.pbsi_status == SZOMB;
}

static void add_pid(struct macos_meter *mm, pid_t pid, bool from_self)
{
	struct rusage_info_v4 ri;
	if (pid <= 0 || pid == mm->self_pid || proctab_find(&mm->tab, pid) >= 0)
		return;
	if (from_self && proctab_is_foreign(&mm->tab, pid))
		return;
	if (read_rusage(pid, &ri))
		return; /* already gone, or not ours to read */
	struct mproc *p = proctab_add(&mm->tab, pid);
	p->start = ri.ri_proc_start_abstime;
}

/* The pids a list call wrote: the buffer is zeroed first and read up to the
 * first 0, so a count of pids and a count of bytes read the same. */
static size_t list_len(struct macos_meter *mm, int r)
{
	size_t n = r > 0 ? (size_t)r : 0;
	if (n > LIST_MAX)
		n = LIST_MAX;
	for (size_t i = 0; i < n; i++)
		if (mm->list[i] == 0)
			return i;
	return n;
}

static void add_children(struct macos_meter *mm, pid_t ppid, bool from_self)
{
	memset(mm->list, 0, sizeof(mm->list));
	size_t n = list_len(mm, proc_listchildpids(ppid, mm->list, (int)sizeof(mm->list)));
	for (size_t i = 0; i < n; i++)
		add_pid(mm, mm->list[i], from_self);
}

static void add_group(struct macos_meter *mm)
{
	if (!mm->pgid)
		return;
	memset(mm->list, 0, sizeof(mm->list));
	size_t n = list_len(mm, proc_listpgrppids(mm->pgid, mm->list, (int)sizeof(mm->list)));
	for (size_t i = 0; i < n; i++)
		add_pid(mm, mm->list[i], false);
}

static void macos_track(struct meter *m, pid_t root)
{
	struct macos_meter *mm = m->priv;
	struct rusage_info_v4 ri;
	proctab_release(&mm->tab, NULL);
	mm->departed_peak = 0;
	struct mproc *p = proctab_add(&mm->tab, root);
	if (!read_rusage(root, &ri))
		p->start = ri.ri_proc_start_abstime;
	pid_t pg = getpgid(root);
	mm->pgid = (pg > 0 && pg != getpgrp()) ? pg : 0;

	/* The recorder's other children are not part of the tree. */
	memset(mm->list, 0, sizeof(mm->list));
	size_t n = list_len(mm, proc_listchildpids(mm->self_pid, mm->list, (int)sizeof(mm->list)));
	for (size_t i = 0; i < n; i++)
		if (mm->list[i] != root)
			proctab_add_foreign(&mm->tab, mm->list[i]);
}

static void macos_ignore(struct meter *m, pid_t pid)
{
	struct macos_meter *mm = m->priv;
	long i = proctab_find(&mm->tab, pid);
	proctab_add_foreign(&mm->tab, pid);
	if (i > 0)
		proctab_remove(&mm->tab, (size_t)i, NULL);
}

static const pid_t *macos_pids(struct meter *m, size_t *n)
{
	struct macos_meter *mm = m->priv;
	return proctab_pids(&mm->tab, n);
}

/* Entry i's rusage. Returns 0, or -1 when the process is gone or its pid now
 * names another process (the entry is then removed, its peak kept). */
static int refresh(struct macos_meter *mm, size_t i, struct rusage_info_v4 *ri)
{
	struct mproc *p = &mm->tab.p[i];
	if (read_rusage(p->pid, ri) || (p->start && ri->ri_proc_start_abstime != p->start)) {
		mm->departed_peak += p->hwm;
		proctab_remove(&mm->tab, i, NULL);
		return -1;
	}
	p->hwm = mm->reset_interval ? ri->ri_interval_max_phys_footprint
				    : ri->ri_lifetime_max_phys_footprint;
	return 0;
}

static int read_swap(struct xsw_usage *xsw)
{
	size_t len = sizeof(*xsw);
	return sysctlbyname("vm.swapusage", xsw, &len, NULL, 0);
}

static int read_level(int *level)
{
	size_t len = sizeof(*level);
	return sysctlbyname("kern.memorystatus_level", level, &len, NULL, 0);
}

static int macos_sample(struct meter *m, struct trace_sample *s)
{
	struct macos_meter *mm = m->priv;
	struct rusage_info_v4 ri;
	struct xsw_usage xsw;
	int level;

	if (!read_swap(&xsw)) {
		s->swap_used = xsw.xsu_used;
		s->swap_total = xsw.xsu_total;
		s->fields |= SF_SWAP_USED | SF_SWAP_TOTAL;
	}
	if (!read_level(&level)) {
		s->level = level;
		s->fields |= SF_LEVEL;
	}
	s->fields |= SF_FOOTPRINT | SF_RSS | SF_PROCS;
	if (!mm->tab.n)
		return -1;

	add_group(mm);
	add_children(mm, mm->self_pid, true);
	for (size_t i = 0; i < mm->tab.n;) {
		if (refresh(mm, i, &ri))
			continue;
		pid_t pid = mm->tab.p[i].pid;
		mm->tab.p[i].zombie = is_zombie(pid);
		if (!mm->tab.p[i].zombie) {
			s->procs++;
			s->footprint += ri.ri_phys_footprint;
			s->rss += ri.ri_resident_size;
			add_children(mm, pid, false);
		}
		i++;
	}
	return s->procs ? 0 : -1;
}

static int macos_system(struct meter *m, struct meter_system *sys)
{
	struct xsw_usage xsw;
	int level;
	uint64_t memsize = 0;
	size_t len = sizeof(memsize);
	(void)m;
	if (read_level(&level) || sysctlbyname("hw.memsize", &memsize, &len, NULL, 0) ||
	    !memsize)
		return error("cannot read kern.memorystatus_level / hw.memsize: %s",
			     strerror(errno));
	sys->avail_pct = level;
	sys->total_bytes = memsize;
	sys->avail_bytes = (uint64_t)((double)memsize * level / 100.0);
	if (!read_swap(&xsw)) {
		sys->has_swap = true;
		sys->swap_used = xsw.xsu_used;
		sys->swap_total = xsw.xsu_total;
	}
	return 0;
}

static int macos_peak_reset(struct meter *m)
{
	struct macos_meter *mm = m->priv;
	mm->departed_peak = 0;
	for (size_t i = 0; i < mm->tab.n; i++) {
		struct mproc *p = &mm->tab.p[i];
		p->hwm = 0;
		if (p->zombie)
			continue;
		if (mm->reset_interval(p->pid) && errno != ESRCH && !mm->warned_reset) {
			warning("cannot reset the footprint peak of process %d: %s; its stage "
				"peaks are upper bounds", (int)p->pid, strerror(errno));
			mm->warned_reset = true;
		}
	}
	return mm->tab.n ? 0 : -1;
}

static int macos_peak_read(struct meter *m, uint64_t *bytes)
{
	struct macos_meter *mm = m->priv;
	struct rusage_info_v4 ri;
	uint64_t sum = 0;
	for (size_t i = 0; i < mm->tab.n;) {
		if (refresh(mm, i, &ri))
			continue;
		sum += mm->tab.p[i].hwm;
		i++;
	}
	if (!mm->tab.n && !mm->departed_peak)
		return -1;
	*bytes = sum + mm->departed_peak;
	return 0;
}

static void macos_free(struct meter *m)
{
	struct macos_meter *mm = m->priv;
	if (!mm)
		return;
	proctab_release(&mm->tab, NULL);
	free(mm);
	m->priv = NULL;
}

static const struct meter_backend macos_backend = {
	.track = macos_track,
	.pids = macos_pids,
	.sample = macos_sample,
	.system = macos_system,
	.peak_reset = macos_peak_reset,
	.peak_read = macos_peak_read,
	.ignore = macos_ignore,
	.free = macos_free,
};

void meter_linux_force_scan(struct meter *m)
{
	(void)m; /* the Linux test hook has nothing to do here */
}

int meter_platform_init(struct meter *m)
{
	struct macos_meter *mm = xcalloc(1, sizeof(*mm));
	struct rusage_info_v4 ri;

	proctab_init(&mm->tab);
	mm->self_pid = getpid();
	m->priv = mm;
	m->be = &macos_backend;
	if (read_rusage(mm->self_pid, &ri))
		return error("proc_pid_rusage(RUSAGE_INFO_V4) failed: %s (macOS 10.14 or later "
			     "is needed)", strerror(errno));

	/* Private symbol: resolve at run time, degrade to sampled peaks. */
	void *sym = dlsym(RTLD_DEFAULT, "proc_reset_footprint_interval");
	memcpy(&mm->reset_interval, &sym, sizeof(sym));

	m->info.backend = "macos";
	m->info.footprint = footprint_words;
	m->info.fields = SF_FOOTPRINT | SF_RSS | SF_SWAP_USED | SF_SWAP_TOTAL | SF_LEVEL |
			 SF_PROCS;
	m->info.peak_metric = mm->reset_interval ? "footprint" : NULL;
	m->info.gpu = false;
	return 0;
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
	if (!read_swap(&xsw))
		h->swap = xsw.xsu_total;
}
