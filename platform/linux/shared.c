/* shared.c -- the Linux meter counts shared pages once: smaps_rollup readings of the processes
 * that share, when they change, within a cost budget (meter_int.h; docs/platforms.md) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "meter_int.h"

/* ---- shared pages (smaps_rollup) ----------------------------------------- */

/* A counter of p from /proc/PID/NAME (the descriptor *fd kept from the first
 * use): stat's minflt + majflt, or the first number of the file; UINT64_MAX
 * when it cannot be read. */
static uint64_t read_counter(struct linux_meter *lm, struct linux_proc *p, int *fd,
			     const char *name)
{
	if (*fd < 0) {
		*fd = open_proc_file(p->super.pid, name, O_RDONLY);
		if (*fd < 0)
			return UINT64_MAX;
	}
	ssize_t n = reread(lm, *fd);
	if (n <= 0)
		return UINT64_MAX;
	lm->buf[n] = '\0';
	uint64_t v = 0;
	if (fd == &p->faults_fd)
		return linux_parse_stat_faults(lm->buf, (size_t)n, &v) ? UINT64_MAX : v;
	return strtoull(lm->buf, NULL, 10);
}

/* p's page faults, minflt + majflt of every thread (/proc/PID/stat). */
static uint64_t faults_of(struct linux_meter *lm, struct linux_proc *p)
{
	return read_counter(lm, p, &p->faults_fd, "stat");
}

/* A single-threaded p's run time (/proc/PID/schedstat, its main thread's: a
 * fifth of stat's cost); UINT64_MAX for several threads or unreadable. */
static uint64_t runtime_of(struct linux_meter *lm, struct linux_proc *p)
{
	return p->threads <= 1 ? read_counter(lm, p, &p->runtime_fd, "schedstat") : UINT64_MAX;
}

/* Whether p may have changed what it shares since its last smaps_rollup
 * reading: its statm moved (pages unmapped, released or swapped out), or it
 * faulted (a write to a copy-on-write page, a page mapped or swapped in: each
 * is a fault, and the first moves neither statm nor status). Running alone
 * changes nothing: a process that only polls or computes is not read again.
 * A single thread that has not run since its faults were last seen unchanged
 * cannot have faulted: its run time is read first, its faults only when it
 * moved. */
static bool changed_since_roll(struct linux_meter *lm, struct linux_proc *p)
{
	if (p->dirty)
		return true;
	uint64_t rt = runtime_of(lm, p);
	if (rt != UINT64_MAX && rt == p->runtime)
		return false;
	if (faults_of(lm, p) != p->faults)
		return true;
	p->runtime = rt;
	return false;
}

static bool shares(const struct linux_proc *p)
{
	return p->excess > SHARE_MIN_BYTES &&
	       p->excess > (p->last.rss_anon + p->last.rss_shmem) / 32;
}

/* One smaps_rollup reading of p: its excess (linux.h), 0 when it shares
 * less than the counters can tell; a process caught in its exit has no
 * pages to list and keeps its last excess. Returns whether it shares. */
static bool roll(struct linux_meter *lm, struct linux_proc *p)
{
	struct rollup_fields ru;
	p->roll_gen = lm->roll_gen;
	p->rolled = true;
	p->dirty = false;
	p->runtime = runtime_of(lm, p); /* before the faults: a later fault moves it */
	p->faults = faults_of(lm, p);
	lm->rollups++;
	int fd = open_proc_file(p->super.pid, "smaps_rollup", O_RDONLY);
	ssize_t n = fd >= 0 ? reread(lm, fd) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0)
		linux_parse_rollup(lm->buf, (size_t)n, &ru);
	if (n <= 0 || !(ru.have & RU_PSS_ANON)) {
		p->no_mm = true; /* exiting: its last reading stands for peaks */
		return p->excess != 0;
	}
	p->no_mm = false;
	p->pss_read = true;
	p->shared_rss = (ru.have & (RU_RSS | RU_PRIVATE_CLEAN | RU_PRIVATE_DIRTY)) ==
				(RU_RSS | RU_PRIVATE_CLEAN | RU_PRIVATE_DIRTY)
			? sat_sub(ru.rss, ru.private_clean + ru.private_dirty) : 0;
	p->excess = sat_sub(p->last.rss_anon + p->last.rss_shmem, ru.pss_anon + ru.pss_shmem);
	if (!shares(p))
		p->excess = 0;
	p->rss_excess = p->excess && (ru.have & (RU_RSS | RU_PSS)) == (RU_RSS | RU_PSS)
				? sat_sub(ru.rss, ru.pss) : p->excess;
	p->excess_pss = p->excess;
	p->private_dirty = ru.have & RU_PRIVATE_DIRTY ? ru.private_dirty : 0;
	p->provisional = false;
	return p->excess != 0;
}

/* Gone or going: a zombie, or its last status had no Vm lines (its memory
 * released in its exit). */
bool leaving(const struct linux_proc *p)
{
	return p->super.zombie || !(p->last.have & ST_VM_HWM);
}

/* p's part of the tree's peak: its VmHWM less what others also map; one
 * leaving keeps its last figure, unless it shared: the others' shares take
 * over those pages (its peak is in shared_best). */
uint64_t peak_part(const struct linux_proc *p)
{
	if (p->excess && leaving(p))
		return 0;
	return sat_sub(p->super.hwm, p->rss_excess);
}

/* What p, gone, held alone: its VmHWM less the pages others also map (they
 * count them), as its last reading found them; one never read (it left
 * first) that a live tree process forked: less its parent's resident pages,
 * the most it can share with it. A window's peak adds it to the others' parts
 * once, at the sample that found it gone (linux_sample), never its whole
 * high-water mark when it shared. */
uint64_t held_alone(struct linux_meter *lm, const struct linux_proc *p)
{
	if (p->pss_read)
		return p->excess ? sat_sub(p->super.hwm, p->shared_rss) : p->super.hwm;
	long i = p->ppid > 0 ? proctab_find(&lm->tab, p->ppid) : -1;
	if (i < 0 || lm->tab.p[i]->zombie)
		return p->super.hwm;
	return sat_sub(p->super.hwm, entry(lm, (size_t)i)->last.vm_rss);
}

/* Whether a process that shares changed since its reading (changed_since_roll).
 * Stops at the first. */
static bool sharers_changed(struct linux_meter *lm)
{
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie || !p->excess)
			continue;
		if (changed_since_roll(lm, p))
			return true;
	}
	return false;
}

/* Whether a live process that shared nothing at its reading holds shmem
 * (MAP_SHARED memory, /dev/shm, a memfd) and its statm moved since: pages it
 * faulted in may be mapped by others, unknown which: every live one is read. */
static bool shmem_moved(struct linux_meter *lm)
{
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (!p->super.zombie && !p->excess && p->dirty &&
		    p->last.rss_shmem > SHARE_MIN_BYTES)
			return true;
	}
	return false;
}

/* Whether p's parent is a live tree process whose last reading, taken while
 * it had partners, says it shares. */
static bool parent_shares(struct linux_meter *lm, const struct linux_proc *p)
{
	long i = p->ppid > 0 ? proctab_find(&lm->tab, p->ppid) : -1;
	if (i < 0)
		return false;
	const struct linux_proc *q = entry(lm, (size_t)i);
	return !q->super.zombie && q->rolled && q->excess;
}

/* Its partners read again (or all of them as old as it is): each new child's
 * own reading stands. */
static void end_provisional(struct linux_meter *lm)
{
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->provisional) {
			p->excess = p->excess_pss;
			p->provisional = false;
		}
	}
}

/* Whether p's reading is older than the last sharer's child read since
 * (a round owed: those read after it are exact). */
static bool before_owed(const struct linux_meter *lm, const struct linux_proc *p)
{
	return (int)(p->roll_gen - lm->owed_gen) < 0;
}

/* A round of readings in generation lm->roll_gen: every live process not yet
 * read in it (all), or those that share, only those read before the last
 * sharer's child when a round was owed (owed); then no round is owed. */
static void round_of(struct linux_meter *lm, bool all, bool owed)
{
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (!p->super.zombie && p->roll_gen != lm->roll_gen &&
		    (all || (p->excess && (!owed || before_owed(lm, p)))))
			roll(lm, p);
	}
	end_provisional(lm);
	lm->roll_owed = false;
}

/* Keep every live process's excess true enough (docs/platforms.md, Linux):
 * with one live process nothing is shared inside the tree; a process first
 * seen is read, and when it shares (a fork not yet exec'd) every live one
 * is, unless its parent already shares: then those that share are, within
 * the cost budget; when a sharing process left, every live one is; when one
 * that shares changed, those that share are, within the cost budget, and
 * when one holding shmem that shared nothing changed, every live one is. */
void share_update(struct linux_meter *lm, size_t live)
{
	if (!lm->pss)
		return;
	if (live < 2) {
		for (size_t i = 0; i < lm->tab.n; i++) {
			if (lm->tab.p[i]->zombie)
				continue; /* its excess says it shared (peak_part) */
			entry(lm, i)->excess = entry(lm, i)->rss_excess = 0;
			entry(lm, i)->rolled = entry(lm, i)->provisional = false;
		}
		lm->roll_all = lm->roll_owed = false;
		return;
	}
	int64_t t0 = mono_ns();
	bool all = lm->roll_all, any = false;
	lm->roll_gen++;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie || p->rolled)
			continue;
		any = true;
		if (!roll(lm, p))
			continue;
		if (parent_shares(lm, p)) {
			/* A sharer's child: its partners can wait. Their readings
			 * count what it shares with them once already: until
			 * they are read again it counts its own pages only. */
			lm->roll_owed = true;
			lm->owed_gen = lm->roll_gen;
			p->provisional = true;
			p->excess = sat_sub(p->last.rss_anon + p->last.rss_shmem, p->private_dirty);
		}
		else
			all = true; /* its parent's reading says it shares nothing */
	}
	bool changed = false, owed = false;
	if (!all && t0 >= lm->roll_next_ns) {
		owed = lm->roll_owed;
		changed = owed || sharers_changed(lm);
		all = !changed && shmem_moved(lm);
		changed |= all;
		if (!changed) /* nothing to read: the next look waits as a round would */
			lm->roll_next_ns = mono_ns() + lm->roll_wait_ns;
	}
	if (all || changed) {
		round_of(lm, all, owed);
		lm->roll_all = false;
		any = true;
	}
	if (any) {
		int64_t t1 = mono_ns();
		lm->roll_next_ns = t1 + ROLL_COST_FACTOR * (t1 - t0);
		if (all || changed)
			lm->roll_wait_ns = ROLL_COST_FACTOR * (t1 - t0);
	}
}

/* A round owed (share_update) is read now: a window's peak is read from
 * exact shares. */
void share_settle(struct linux_meter *lm)
{
	if (!lm->roll_owed)
		return;
	lm->roll_gen++;
	round_of(lm, false, true);
}
