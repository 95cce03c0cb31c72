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

/* Whether p faulted since its last look (or reading): a write to a
 * copy-on-write page, a page mapped or swapped in (the first moves neither
 * statm nor status). Running alone changes nothing: a process that only polls
 * or computes is not read again. A single thread that has not run since
 * cannot have faulted: its run time is read first, its faults only when it
 * moved. */
static bool faulted(struct linux_meter *lm, struct linux_proc *p)
{
	uint64_t rt = runtime_of(lm, p);
	if (rt != UINT64_MAX && rt == p->runtime)
		return false;
	uint64_t f = faults_of(lm, p);
	bool moved = f != p->faults;
	p->faults = f;
	p->runtime = rt;
	return moved;
}

static bool shares(const struct linux_proc *p)
{
	return p->excess > SHARE_MIN_BYTES &&
	       p->excess > (p->last.rss_anon + p->last.rss_shmem) / 32;
}

/* p's shares from its last reading's figures: excess (linux.h), 0 when it
 * shares less than the counters can tell; what it carries of shared pages. */
static void shares_from_reading(struct linux_proc *p)
{
	p->excess = sat_sub(p->read_rss_as, p->pss_as);
	if (!shares(p))
		p->excess = 0;
	p->rss_excess = p->excess && p->read_rss ? sat_sub(p->read_rss, p->pss_all) : p->excess;
	p->carried = p->excess ? sat_sub(p->pss_as, p->private_dirty) : 0;
	p->carried_rss = p->excess && p->read_rss ? sat_sub(p->pss_all, p->uss) : p->carried;
	p->provisional = p->partner = false;
}

/* p's reading lists under half the resident pages its status read at this
 * sample showed: its memory went in between (an exec replaced it, or it
 * unmapped most of it). The status figures stand for the old pages: those of
 * the reading stand instead (alone, each page its own) until status is read
 * again, as it is at the next sample (its statm moved). */
static void replaced(struct linux_proc *p, const struct rollup_fields *ru)
{
	if (ru->rss + SHARE_MIN_BYTES >= p->last.vm_rss / 2)
		return;
	p->last.rss_anon = ru->pss_anon;
	p->last.rss_shmem = ru->pss_shmem;
	p->last.vm_rss = ru->rss;
	if (p->super.hwm > ru->rss)
		p->super.hwm = ru->rss;
}

/* One smaps_rollup reading of p (shares_from_reading); a process caught in
 * its exit has no pages to list and keeps its last figures. Returns whether
 * it shares. */
static bool roll(struct linux_meter *lm, struct linux_proc *p)
{
	struct rollup_fields ru;
	p->roll_gen = lm->roll_gen;
	p->rolled = true;
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
	bool all = (ru.have & (RU_RSS | RU_PSS | RU_PRIVATE_CLEAN | RU_PRIVATE_DIRTY)) ==
		   (RU_RSS | RU_PSS | RU_PRIVATE_CLEAN | RU_PRIVATE_DIRTY);
	if (all)
		replaced(p, &ru);
	p->read_rss_as = p->last.rss_anon + p->last.rss_shmem;
	p->read_shmem = p->last.rss_shmem;
	p->pss_as = ru.pss_anon + ru.pss_shmem;
	p->read_rss = all ? ru.rss : 0;
	p->pss_all = all ? ru.pss : 0;
	p->uss = all ? ru.private_clean + ru.private_dirty : 0;
	p->shared_rss = all ? sat_sub(ru.rss, p->uss) : 0;
	p->private_dirty = ru.have & RU_PRIVATE_DIRTY ? ru.private_dirty : 0;
	shares_from_reading(p);
	return p->excess != 0;
}

/* Gone or going: a zombie, or its last status had no Vm lines (its memory
 * released in its exit). */
bool leaving(const struct linux_proc *p)
{
	return p->super.zombie || !(p->last.have & ST_VM_HWM);
}

/* p's part of the tree's peak: its VmHWM less what others also map; one
 * leaving (or whose reading found it exiting) what it held alone, unless it
 * shared: the others' shares take over those pages, and what it held alone
 * counts once it is gone (held_alone). */
uint64_t peak_part(struct linux_meter *lm, const struct linux_proc *p)
{
	if (leaving(p) || p->no_mm)
		return p->excess ? 0 : held_alone(lm, p);
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

/* A member of the sharing group: it shares, or its partners' readings are
 * older than a child it shares with. */
static bool member(const struct linux_proc *p)
{
	return p->excess || p->provisional || p->partner;
}

static bool live(const struct linux_proc *p)
{
	return !leaving(p) && !p->no_mm;
}

/* p's parent when it is a live tree process, else NULL. */
static struct linux_proc *live_parent(struct linux_meter *lm, const struct linux_proc *p)
{
	long i = p->ppid > 0 ? proctab_find(&lm->tab, p->ppid) : -1;
	struct linux_proc *q = i >= 0 ? entry(lm, (size_t)i) : NULL;
	return q && live(q) ? q : NULL;
}

/* q takes over what it can of shares *a (anon + shmem) and *r (all pages). */
static void take(struct linux_proc *q, uint64_t *a, uint64_t *r)
{
	uint64_t x = *a < q->excess ? *a : q->excess;
	q->excess -= x;
	q->carried += x;
	*a -= x;
	x = *r < q->rss_excess ? *r : q->rss_excess;
	q->rss_excess -= x;
	q->carried_rss += x;
	*r -= x;
}

static void give(struct linux_meter *lm, struct linux_proc *p, uint64_t a, uint64_t r,
		 unsigned skip);

/* Whether q can take over the shares of p, which left: a live member whose
 * reading is older than the sample that found p gone (skip: this sample's
 * generation; a later reading already counts those pages). */
static bool heir(const struct linux_proc *q, const struct linux_proc *p, unsigned skip)
{
	return q && q != p && live(q) && q->rolled && member(q) && q->roll_gen != skip;
}

/* p leaves (or left): the shares of shared pages it counted go to its
 * partners, whose Pss grows by as much (each such page is mapped by one
 * process fewer): its parent first, then the other members. The group's sum
 * loses only p's private pages, with no reading. Once per process. */
static void shares_hand_over(struct linux_meter *lm, struct linux_proc *p, unsigned skip)
{
	if (p->gave || !p->pss_read || !p->excess)
		return;
	p->gave = true;
	lm->share_news = true;
	give(lm, p, p->carried, p->carried_rss, skip);
}

/* Shares a (anon + shmem) and r (all pages) that p counted go to its heirs. */
static void give(struct linux_meter *lm, struct linux_proc *p, uint64_t a, uint64_t r,
		 unsigned skip)
{
	struct linux_proc *q = live_parent(lm, p);
	if (heir(q, p, skip))
		take(q, &a, &r);
	for (size_t i = 0; (a || r) && i < lm->tab.n; i++)
		if (heir(entry(lm, i), p, skip))
			take(entry(lm, i), &a, &r);
}

/* p, live, holds fewer pages than at its reading, beyond its private ones:
 * it unmapped pages it shared (an exec drops them all), whose other mappers'
 * Pss grew. That part of its shares goes to its partners, as at a departure. */
static void shrunk(struct linux_meter *lm, struct linux_proc *p)
{
	uint64_t now = p->last.rss_anon + p->last.rss_shmem;
	uint64_t shared = sat_sub(p->read_rss_as, p->private_dirty);
	uint64_t gone = sat_sub(sat_sub(p->read_rss_as, now), p->private_dirty);
	if (!gone || !shared || !p->excess)
		return;
	double f = gone >= shared ? 1.0 : (double)gone / (double)shared;
	uint64_t a = (uint64_t)(f * (double)p->carried);
	uint64_t r = (uint64_t)(f * (double)p->carried_rss);
	p->carried -= a;
	p->carried_rss -= r;
	p->excess -= (uint64_t)(f * (double)p->excess);
	p->rss_excess -= (uint64_t)(f * (double)p->rss_excess);
	p->read_rss_as -= gone;
	lm->share_news = true;
	give(lm, p, a, r, lm->roll_gen);
}

/* p's entry goes (refresh, before this sample's readings). */
void share_gone(struct linux_meter *lm, struct linux_proc *p)
{
	shares_hand_over(lm, p, lm->roll_gen + 1);
}

/* p, just read, shares: a child of a live partner read at an earlier sample
 * (before its fork: the parent's reading counts every page they share), or
 * of one that is itself provisional (an older reading up the chain counts
 * them), counts its private dirty pages only until the group's round, and
 * its parent is read in that round; read at this sample (after the fork),
 * both readings agree. A sharer with no such parent shares with someone unknown: every
 * live process is read. */
static void joined(struct linux_meter *lm, struct linux_proc *p)
{
	struct linux_proc *q = live_parent(lm, p);
	lm->share_news = true;
	if (!q || !q->rolled) {
		lm->roll_all = lm->share_stale = true;
		return;
	}
	if (q->roll_gen == lm->roll_gen && !q->provisional)
		return;
	p->provisional = true;
	p->excess = sat_sub(p->read_rss_as, p->private_dirty);
	p->rss_excess = p->shared_rss;
	p->carried = p->carried_rss = 0;
	q->partner = true;
}

/* Every live process first seen (not read while it had partners) is read;
 * returns whether one was. */
static bool read_new(struct linux_meter *lm)
{
	bool any = false;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie || p->rolled)
			continue;
		any = true;
		if (roll(lm, p))
			joined(lm, p);
	}
	return any;
}

/* Whether the group moved at this sample: a member joined or left, a
 * member's statm moved or it faulted (looked for at every sample while a
 * round is due, else once the wait since the last look has passed), a
 * process holding shmem that shares nothing moved (the pages it faulted in
 * may be mapped by others, unknown which: every live one is read). Members
 * seen leaving hand their shares over (share_gone). */
static bool group_moved(struct linux_meter *lm, int64_t t0)
{
	bool look = lm->share_pending || t0 >= lm->roll_next_ns, stale = false;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (!live(p)) {
			shares_hand_over(lm, p, lm->roll_gen);
			continue;
		}
		if (member(p)) {
			if (p->moved && p->rolled)
				shrunk(lm, p);
			bool f = look && (lm->share_pending || !stale) && faulted(lm, p);
			stale |= p->moved || f;
		} else if (p->moved && p->last.rss_shmem > SHARE_MIN_BYTES) {
			stale = lm->roll_all = true;
		}
	}
	if (look && !stale && !lm->share_pending)
		lm->roll_next_ns = t0 + lm->roll_wait_ns; /* the next look waits */
	lm->share_stale |= stale;
	bool moved = stale || lm->share_news;
	lm->share_news = false;
	return moved;
}

/* The system's Shmem now (/proc/meminfo, read again). */
static uint64_t system_shmem(struct linux_meter *lm)
{
	ssize_t n = reread(lm, lm->meminfo_fd);
	if (n > 0)
		linux_parse_meminfo(lm->buf, (size_t)n, &lm->mi);
	return lm->mi.shmem;
}

static void save(struct linux_proc *p)
{
	p->saved.excess = p->excess;
	p->saved.rss_excess = p->rss_excess;
	p->saved.carried = p->carried;
	p->saved.carried_rss = p->carried_rss;
	p->saved.provisional = p->provisional;
	p->saved.partner = p->partner;
	p->saved.read_rss_as = p->read_rss_as;
	p->saved.read_shmem = p->read_shmem;
}

static void restore(struct linux_proc *p)
{
	p->excess = p->saved.excess;
	p->rss_excess = p->saved.rss_excess;
	p->carried = p->saved.carried;
	p->carried_rss = p->saved.carried_rss;
	p->provisional = p->saved.provisional;
	p->partner = p->saved.partner;
	p->read_rss_as = p->saved.read_rss_as;
	p->read_shmem = p->saved.read_shmem;
}

static void unknown_child(pid_t pid, void *arg)
{
	struct linux_meter *lm = arg;
	if (proctab_find(&lm->tab, pid) < 0 && !proctab_is_foreign(&lm->tab, pid))
		lm->share_torn = true;
}

/* Whether p, read in this round, changed while the round ran: its statm
 * moved since the sample read it (pages mapped or freed, an exec) or reads
 * no resident page (it left), or its children file lists a process the table
 * lacks (a fork): its partners' readings may count those pages or not. */
static bool torn(struct linux_meter *lm, struct linux_proc *p)
{
	uint64_t v[3];
	ssize_t n;
	if (p->no_mm)
		return true;
	if (p->statm_fd >= 0 && ((n = reread(lm, p->statm_fd)) <= 0 ||
				 linux_parse_statm(lm->buf, (size_t)n, v) || !v[1] ||
				 memcmp(v, p->statm_seen, sizeof(v))))
		return true;
	if (p->children_fd < 0 || (n = reread(lm, p->children_fd)) <= 0)
		return false;
	lm->share_torn = false;
	linux_parse_pidlist(lm->buf, (size_t)n, unknown_child, lm);
	return lm->share_torn;
}

/* A round of readings in generation lm->roll_gen: every member not yet read
 * in it (every live process: all); a new child read in it keeps its own
 * reading, which agrees with its partners'. Then nothing is due. A round
 * torn by a member that left or forked while it ran (torn) does not agree
 * with itself: the shares before it stand, and a round is still due. */
static void round_of(struct linux_meter *lm, bool all)
{
	bool bad = false;
	uint64_t shmem = system_shmem(lm);
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie)
			continue;
		save(p);
		if (p->roll_gen == lm->roll_gen && p->rolled)
			shares_from_reading(p);
		else if (all || member(p))
			roll(lm, p);
	}
	for (size_t i = 0; !bad && i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		bad = !p->super.zombie && p->roll_gen == lm->roll_gen && torn(lm, p);
	}
	if (bad) {
		for (size_t i = 0; i < lm->tab.n; i++)
			if (!entry(lm, i)->super.zombie)
				restore(entry(lm, i));
		lm->share_stale = true;
		return;
	}
	lm->roll_all = lm->share_pending = lm->share_stale = false;
	/* Pages faulted in while it ran are in some readings, not in others. */
	lm->round_shmem = shmem / 2 + system_shmem(lm) / 2;
}

/* The budget (meter_int.h): the credit grows with the time since it was
 * brought up to date, up to 0. */
static void credit_accrue(struct linux_meter *lm, int64_t now)
{
	if (lm->credit_ns)
		lm->roll_credit += (now - lm->credit_ns) / ROLL_COST_FACTOR;
	lm->credit_ns = now;
	if (lm->roll_credit > 0)
		lm->roll_credit = 0;
}

static void credit_spend(struct linux_meter *lm, int64_t cost)
{
	lm->roll_credit -= cost;
	if (lm->roll_credit < -2 * ROLL_DEBT_NS)
		lm->roll_credit = -2 * ROLL_DEBT_NS;
}

/* With one live process nothing is shared inside the tree: it stands as if
 * read now, alone (a child forked later counts its own pages: joined). */
static void share_none(struct linux_meter *lm)
{
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie)
			continue; /* its excess says it shared (peak_part) */
		p->excess = p->rss_excess = p->carried = p->carried_rss = 0;
		p->provisional = p->partner = false;
		p->rolled = lm->pss && live(p);
		p->roll_gen = lm->roll_gen;
	}
	lm->roll_all = lm->share_pending = lm->share_stale = lm->share_news = false;
	lm->round_shmem = lm->mi.shmem;
}

/* What the processes' shmem growth since their readings counts twice: shmem
 * pages a process faulted in may be another's already (a worker mapping what
 * a partner wrote raises its RssShmem, and lowers the partner's Pss with no
 * change to its statm); the pages new to the tree are at most what the
 * system's Shmem grew by since the last round. */
uint64_t share_shmem_over(struct linux_meter *lm)
{
	if (!lm->pss || !(lm->mi.have & MI_SHMEM))
		return 0;
	uint64_t grew = 0;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (live(p) && p->rolled && p->pss_read)
			grew += sat_sub(p->last.rss_shmem, p->read_shmem);
	}
	if (grew <= sat_sub(lm->mi.shmem, lm->round_shmem))
		return 0;
	return sat_sub(grew, sat_sub(system_shmem(lm), lm->round_shmem)); /* after statm's */
}

/* Keep every live process's excess true enough (docs/platforms.md, Linux):
 * a process first seen is read (joined, read_new); when the sharing group
 * moved since its last round (group_moved), it is read whole (round_of)
 * within the budget (meter_int.h): while it still moves once the credit is
 * back to 0, at the first sample that finds it still with less. In between,
 * each process counts its last shares plus what statm shows it grew by, those
 * that left handing theirs to their partners (share_gone). */
void share_update(struct linux_meter *lm, size_t live_n)
{
	if (!lm->pss)
		return;
	if (live_n < 2) {
		share_none(lm);
		return;
	}
	int64_t t0 = mono_ns();
	credit_accrue(lm, t0);
	lm->roll_gen++;
	bool any = read_new(lm);
	bool moved = group_moved(lm, t0);
	lm->share_pending |= moved || lm->roll_all;
	bool round = lm->share_pending &&
		     (lm->roll_credit >= 0 || (!moved && lm->roll_credit > -ROLL_DEBT_NS));
	if (round)
		round_of(lm, lm->roll_all);
	if (!any && !round)
		return;
	int64_t t1 = mono_ns();
	credit_spend(lm, t1 - t0);
	if (round) {
		lm->roll_wait_ns = ROLL_COST_FACTOR * (t1 - t0);
		lm->roll_next_ns = t1 + lm->roll_wait_ns;
	}
}

/* A round due (share_update) is read now, whatever the budget: a window's
 * peak is read from shares that are not stale. */
void share_settle(struct linux_meter *lm)
{
	if (!lm->share_pending && !lm->roll_all)
		return;
	int64_t t0 = mono_ns();
	lm->roll_gen++;
	round_of(lm, lm->roll_all);
	credit_accrue(lm, t0);
	credit_spend(lm, mono_ns() - t0);
}

/* Test hook (linux.h). */
void meter_linux_owe(struct meter *m)
{
	struct linux_meter *lm = m->priv;
	lm->roll_credit = -ROLL_DEBT_NS;
	lm->credit_ns = mono_ns();
}
