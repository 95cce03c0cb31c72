/* meter.c -- the Linux meter: /proc tree walk, RssAnon + RssShmem footprint (shared pages
 * once: smaps_rollup PSS where processes share), clear_refs peaks */
#include "meter_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/* Cost model (docs/platforms.md, Linux): one pread of /proc/PID/status is
 * ~10 us, of /proc/PID/statm ~1-2 us, of /proc/meminfo ~8 us. A sample reads
 * statm and re-reads status only when statm moved (status_stands). Every file
 * the sampler reads each time is opened once and re-read with pread(fd, 0),
 * which the seq_file code regenerates. The fd of /proc/PID/status is bound to
 * the process, not to the number: after the process is reaped the read fails
 * with ESRCH, so a reused pid is never mistaken for the old one. Nothing is
 * allocated in steady state: buffers live in struct linux_meter, directories
 * are read with getdents64 on kept fds, and the tables only grow when the
 * tree does. Per sample: one pread of statm per process (and of status when
 * it moved), /proc/loadavg, /proc/meminfo (reused within half the interval),
 * the cgroup's memory.stat when the tree has one (meter_enclose), again after
 * the processes when they were read (reread_cgroup); with it, no process at
 * all while that text stands still (tree_still). While pids are
 * being handed out (linux_sample's walk) also an fstat of task/ and a pread of
 * children per process (and of each other thread's children file), and a
 * task/ directory listing when a thread count changed or every 100 ms; with
 * the cgroup, only when its cgroup.procs (read instead) lists a process the
 * table lacks (cgroup_lists_news).
 */

static const char footprint_words[] =
	"resident anonymous + shared memory of the process tree (the anon + shmem of a memory "
	"cgroup of the run's own where one can be made, each page once; else RssAnon + "
	"RssShmem per process, proportional shares, smaps_rollup Pss_Anon + Pss_Shmem, for "
	"processes that share pages): a 'meter:' mark names the reader that ran; swapped-out "
	"bytes in 'swapped'";

static const char cgroup_words_v1[] =
	"footprint read from the run's own memory cgroup (v1 memory.stat total_rss + total_shmem), "
	"every process of the tree in it";
static const char cgroup_words_v2[] =
	"footprint read from the run's own memory cgroup (v2 memory.stat anon + shmem), "
	"every process of the tree in it";
static const char per_process_words[] =
	"footprint read process by process (RssAnon + RssShmem of each process of the tree, "
	"smaps_rollup Pss_Anon + Pss_Shmem for processes that share pages)";

static const char mapped_words[] =
	"resident pages of the data files the tree maps (not programs, shared libraries, "
	"system or tmpfs files), each page once (smaps Pss less Anonymous, summed); "
	"not in footprint: the kernel can drop them and read them back (majflt)";

static void close_fds(struct linux_proc *p)
{
	close_threads(p, true);
	if (p->status_fd >= 0)
		close(p->status_fd);
	if (p->task_fd >= 0)
		close(p->task_fd);
	if (p->children_fd >= 0)
		close(p->children_fd);
	if (p->statm_fd >= 0)
		close(p->statm_fd);
	if (p->faults_fd >= 0)
		close(p->faults_fd);
	if (p->runtime_fd >= 0)
		close(p->runtime_fd);
	p->status_fd = p->task_fd = p->children_fd = p->statm_fd = -1;
	p->faults_fd = p->runtime_fd = -1;
}

static void close_proc(struct mproc *m)
{
	close_fds((struct linux_proc *)m);
}

/* ---- the backend ------------------------------------------------------- */

static void linux_track(struct meter *m, pid_t root)
{
	struct linux_meter *lm = m->priv;
	proctab_release(&lm->tab, close_proc);
	lm->statm_fds = 0;
	lm->last_pid = -1;
	lm->window_best = lm->dep_now = lm->dep_pending = lm->files_best = 0;
	lm->outside = 0;
	lm->prev_ns = 0;
	lm->roll_all = lm->share_pending = lm->share_stale = lm->share_news = false;
	/* Samples read the tree's footprint from its cgroup when the root is in it
	 * (it joined before its exec: meter_enclose), or was and left already. */
	lm->cg_on = lm->cg.dir[0] && (memcg_holds(&lm->cg, root) || memcg_ran(&lm->cg));
	if (lm->cg.dir[0] && !lm->cg_on)
		memcg_remove(&lm->cg);
	m->info.reader = !lm->cg_on ? SB_READER_PER_PROCESS
		       : lm->cg.v2 ? SB_READER_CGROUP_V2 : SB_READER_CGROUP_V1;
	if (lm->cg_on)
		snprintf(lm->words, sizeof(lm->words), "%s; made in %s",
			 lm->cg.v2 ? cgroup_words_v2 : cgroup_words_v1, lm->cg.how);
	m->info.reader_words = !lm->cg_on ? per_process_words : lm->words;
	mapped_reset(lm);
	/* The root's image before its exec was our forked copy: its high-water
	 * mark, at most ours now, is in the root's ru_maxrss (peak_exited). */
	struct rusage ru;
	lm->hwm_seen = !getrusage(RUSAGE_SELF, &ru) && ru.ru_maxrss > 0
			       ? (uint64_t)ru.ru_maxrss * 1024 : 0;
	struct linux_proc *p = (struct linux_proc *)proctab_add(&lm->tab, root);
	p->threads = 1;
	p->task_fd = p->children_fd = p->statm_fd = p->faults_fd = p->runtime_fd = -1;
	p->status_fd = open_proc_file(root, "status", O_RDONLY);
	struct pl_proc rp;
	lm->root_start = procfs_read_stat(lm->proc_fd, root, lm->buf, sizeof(lm->buf), &rp)
				 ? 0 : rp.start;

	/* The recorder's children now, except the root and what it made, are not ours. */
	if (lm->scan) {
		scan_parents(lm);
		for (size_t i = 0; i < lm->npairs; i++)
			if (lm->pairs[i].ppid == lm->self_pid)
				collect_recorder_children(lm->pairs[i].pid, lm);
		return;
	}
	lm->self.threads = 2; /* always walk every thread of the recorder */
	if (lm->self.task_fd < 0)
		lm->self.task_fd = open_proc_file(lm->self_pid, "task", O_RDONLY | O_DIRECTORY);
	if (lm->self.task_fd >= 0)
		procfs_each_number(lm->self.task_fd, lm->dents, sizeof(lm->dents),
				   recorder_thread_children, lm);
}

static void linux_ignore(struct meter *m, pid_t pid)
{
	struct linux_meter *lm = m->priv;
	long i = proctab_find(&lm->tab, pid);
	proctab_add_foreign(&lm->tab, pid);
	if (i > 0) {
		if (entry(lm, (size_t)i)->statm_fd >= 0)
			lm->statm_fds--;
		proctab_remove(&lm->tab, (size_t)i, close_proc);
	}
}

static const pid_t *linux_pids(struct meter *m, size_t *n)
{
	struct linux_meter *lm = m->priv;
	return proctab_pids(&lm->tab, n);
}

static int read_meminfo(struct linux_meter *lm, struct meminfo_fields *mi)
{
	ssize_t n = reread(lm, lm->meminfo_fd);
	if (n <= 0) {
		memset(mi, 0, sizeof(*mi));
		return -1;
	}
	linux_parse_meminfo(lm->buf, (size_t)n, mi);
	return 0;
}

/* Whether entry i's last status reading still stands: its statm (one pread,
 * about a sixth of status's cost) shows the same size, resident and shared
 * pages as when status was read, and that reading answered fewer than
 * STATUS_REUSE_MAX samples. resident - shared = RssAnon and shared =
 * RssFile + RssShmem: unchanged, the footprint (RssAnon + RssShmem) is too,
 * unless file and shmem pages traded places exactly; pages swapped in or out
 * move resident (VmSwap follows). The bound catches the rest (swapped pages
 * freed, such a trade). Its thread count comes from its task/ directory
 * while pids are being handed out, else stands.
 * On return *v holds the statm just read (*have_v). */
static bool status_stands(struct linux_meter *lm, struct linux_proc *p, uint64_t v[3],
			  bool *have_v)
{
	*have_v = false;
	if (p->statm_fd < 0) {
		p->moved = true; /* no statm to tell */
		if (lm->statm_fds >= lm->statm_budget || p->status_fd < 0)
			return false;
		p->statm_fd = open_proc_file(p->super.pid, "statm", O_RDONLY);
		if (p->statm_fd < 0)
			return false;
		lm->statm_fds++;
	}
	ssize_t n = reread(lm, p->statm_fd);
	*have_v = n > 0 && !linux_parse_statm(lm->buf, (size_t)n, v);
	bool moved = !*have_v || !p->have_last || memcmp(v, p->statm, sizeof(p->statm));
	/* For the sharing group: moved since the sample before (shared.c). */
	p->moved = !*have_v || memcmp(v, p->statm_seen, sizeof(p->statm_seen));
	if (*have_v)
		memcpy(p->statm_seen, v, sizeof(p->statm_seen));
	if (moved || p->reused >= STATUS_REUSE_MAX)
		return false;
	/* No pid was handed out for a while (linux_sample's walk): no thread
	 * started, and the count read last stands (one that ended leaves it
	 * high: a task/ listing too many while walking, stat for schedstat). */
	if (!lm->walking)
		return true;
	if (p->task_fd < 0)
		p->task_fd = open_proc_file(p->super.pid, "task", O_RDONLY | O_DIRECTORY);
	struct stat sb;
	if (p->task_fd < 0 || fstat(p->task_fd, &sb) || sb.st_nlink < 3)
		return false;
	p->threads = (int)(sb.st_nlink - 2);
	return true;
}

/* Entry i's status fields into *st: re-read, or (fresh false, status_stands)
 * the last reading. Returns 0, or -1 when the process is gone (the entry is
 * then removed and its last VmHWM kept for peaks). Peak resets and reads ask
 * for fresh readings: VmHWM can rise and fall back between two samples. */
static int refresh(struct linux_meter *lm, size_t i, struct status_fields *st, bool fresh)
{
	struct linux_proc *p = entry(lm, i);
	uint64_t v[3];
	bool have_v = false;
	if (!fresh && status_stands(lm, p, v, &have_v)) {
		p->reused++;
		*st = p->last;
		return 0;
	}
	ssize_t n = p->status_fd >= 0 ? reread(lm, p->status_fd) : -1;
	if (n <= 0) {
		if (p->statm_fd >= 0)
			lm->statm_fds--;
		/* What it held alone counts once in the window's peak; the
		 * others take over what it shared. */
		share_gone(lm, p); /* its partners' shares grew */
		lm->dep_now += lm->cg_on ? cg_departed(p) : held_alone(lm, p);
		mapped_departed(lm, p);
		proctab_remove(&lm->tab, i, close_proc);
		return -1;
	}
	linux_parse_status(lm->buf, (size_t)n, st);
	p->last = *st;
	p->majflt_stale = true;
	p->reused = 0;
	p->status_ns = lm->now_ns;
	p->have_last = have_v; /* a statm read just before: the next sample compares */
	if (have_v)
		memcpy(p->statm, v, sizeof(p->statm));
	if (st->have & ST_VM_HWM) {
		p->super.hwm = st->vm_hwm;
		if (st->vm_hwm > lm->hwm_seen)
			lm->hwm_seen = st->vm_hwm;
	}
	if (st->have & ST_THREADS)
		p->threads = st->threads;
	p->super.zombie = (st->have & ST_STATE) && (st->state == 'Z' || st->state == 'X');
	if (p->super.zombie && !p->hwm_read)
		p->super.stale_exit = true; /* never seen alive: when it exited is unknown */
	p->hwm_read |= (st->have & ST_VM_HWM) != 0;
	return 0;
}

/* A sample's part in the window's peak: peaks, the live processes' parts, with
 * what those gone since the sample before held alone. Not while the sharing
 * group's shares are stale (shared.c: a member's pages moved since its last
 * round, pages may count twice): the departures wait, the largest group of
 * them counting once with a later sample's parts (the footprint counts still). */
static void window_peak(struct linux_meter *lm, uint64_t peaks)
{
	if (lm->dep_now > lm->dep_pending)
		lm->dep_pending = lm->dep_now;
	lm->dep_now = 0;
	if (lm->share_stale)
		return;
	peaks += lm->dep_pending;
	lm->dep_pending = 0;
	if (peaks > lm->window_best)
		lm->window_best = peaks;
}

/* The sum of the tree's peak parts now. With its cgroup (cf): its anonymous
 * and shmem pages, the most file pages one live process maps, and each live
 * process's rise above its resident set since the window's start (VmHWM -
 * VmRSS: what it held between samples), or a zombie's ru_maxrss that
 * meter_peak_exited took: one process's VmHWM; what those gone held is in
 * the earlier samples' sums. Without: peak_part's (shared.c). */
static uint64_t peak_sum(struct linux_meter *lm, const struct memcg_fields *cf)
{
	uint64_t sum = cf ? cf->anon + cf->shmem : 0, file = 0, files = 0;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (!cf)
			sum += peak_part(lm, p);
		else if (p->maxrss_taken)
			sum += p->super.hwm;
		else if (!p->super.zombie && (p->last.have & ST_VM_HWM)) {
			file = p->last.rss_file > file ? p->last.rss_file : file;
			files += p->last.rss_file;
			sum += sat_sub(p->super.hwm, p->last.vm_rss) + outside_part(p);
		}
	}
	if (files > lm->files_best)
		lm->files_best = files;
	return sum + file;
}

static int linux_sample(struct meter *m, struct trace_sample *s)
{
	struct linux_meter *lm = m->priv;
	struct meminfo_fields mi;
	struct status_fields st;

	lm->now_ns = mono_ns();
	if (lm->prev_ns)
		lm->gap_ns = lm->now_ns - lm->prev_ns;
	lm->prev_ns = lm->now_ns;
	int64_t reuse = lm->gap_ns / 2 < MEMINFO_REUSE_NS ? lm->gap_ns / 2 : MEMINFO_REUSE_NS;
	if (!lm->mi_ns || lm->now_ns - lm->mi_ns >= reuse)
		lm->mi_ns = read_meminfo(lm, &lm->mi) ? 0 : lm->now_ns;
	mi = lm->mi;
	if (lm->mi_ns) {
		if ((mi.have & (MI_SWAP_TOTAL | MI_SWAP_FREE)) == (MI_SWAP_TOTAL | MI_SWAP_FREE)) {
			s->swap_total = mi.swap_total;
			s->swap_used = mi.swap_total > mi.swap_free ? mi.swap_total - mi.swap_free : 0;
			s->fields |= SF_SWAP_USED | SF_SWAP_TOTAL;
		}
		if ((mi.have & (MI_MEM_TOTAL | MI_MEM_AVAILABLE)) ==
			    (MI_MEM_TOTAL | MI_MEM_AVAILABLE) && mi.mem_total) {
			s->level = (double)mi.mem_available * 100.0 / (double)mi.mem_total;
			s->fields |= SF_LEVEL;
		}
	}
	s->fields |= SF_FOOTPRINT | SF_RSS | SF_SWAPPED | SF_PROCS;
	if (!lm->tab.n)
		return -1; /* never tracked */

	/* With the cgroup, its list every sample: new processes, and those that
	 * left it (a process that moved itself out is counted on its own). */
	lm->cg_news = lm->cg_on && cgroup_lists_news(lm);
	bool walk = walk_due(lm);
	lm->walking = walk;
	lm->walks += walk;
	if (walk && lm->scan)
		scan_parents(lm);
	/* Orphans re-parented to the recorder (a subreaper) join the tree. */
	if (walk)
		discover_children(lm, -1, true);

	struct memcg_fields cf;
	bool cg = read_cgroup(lm, &cf);
	size_t live = 0;
	if (tree_still(lm, cg, walk)) {
		lm->still_samples++;
		live = lm->sums.live;
		s->procs = lm->sums.procs;
		s->rss = lm->sums.rss;
		s->swapped = lm->sums.swapped;
	} else {
		for (size_t i = 0; i < lm->tab.n;) {
			if (refresh(lm, i, &st, false))
				continue; /* removed: entry i is the next one now */
			if (!lm->tab.p[i]->zombie) {
				if (st.have & ST_VM_RSS)
					s->procs++;
				live++;
				s->rss += st.vm_rss;
				s->swapped += st.vm_swap;
				if (walk)
					discover_children(lm, (long)i, false);
			}
			i++;
		}
		if (cg) /* after the processes' readings: what one freed counts once */
			reread_cgroup(lm, &cf);
		lm->sums.valid = true;
		lm->sums.gen = lm->tab.gen;
		lm->sums.live = live;
		lm->sums.procs = s->procs;
		lm->sums.rss = s->rss;
		lm->sums.swapped = s->swapped;
	}
	if (cg)
		s->footprint = cf.anon + cf.shmem + outside_sum(lm);
	else
		share_update(lm, live);
	for (size_t i = 0; !cg && i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (!p->super.zombie && !p->no_mm)
			s->footprint += sat_sub(p->last.rss_anon + p->last.rss_shmem, p->excess);
	}
	if (!cg)
		s->footprint = sat_sub(s->footprint, share_shmem_over(lm));
	window_peak(lm, peak_sum(lm, cg ? &cf : NULL));
	lm->window_best = s->footprint > lm->window_best ? s->footprint : lm->window_best;
	mapped_sample(lm, s);
	if (linux_out_of_files && !lm->warned_files) {
		struct rlimit rl;
		lm->warned_files = true;
		warning("the open files limit (%lld) stopped the meter from keeping files of "
			"the tree's processes open (%zu metered): processes beyond are not "
			"counted; raise it (ulimit -n, ulimit -Hn)",
			getrlimit(RLIMIT_NOFILE, &rl) ? -1LL : (long long)rl.rlim_cur, lm->tab.n);
	}
	return s->procs ? 0 : -1;
}

static int linux_system(struct meter *m, struct meter_system *sys)
{
	struct linux_meter *lm = m->priv;
	struct meminfo_fields mi;
	const unsigned need = MI_MEM_TOTAL | MI_MEM_AVAILABLE | MI_SWAP_TOTAL | MI_SWAP_FREE;
	if (read_meminfo(lm, &mi)) {
		lm->mi_ns = 0;
		return error("cannot read memory figures from /proc/meminfo");
	}
	lm->mi = mi;
	lm->mi_ns = mono_ns();
	if ((mi.have & need) != need || !mi.mem_total)
		return error("cannot read memory figures from /proc/meminfo");
	sys->total_bytes = mi.mem_total;
	sys->avail_bytes = mi.mem_available;
	sys->avail_pct = (double)mi.mem_available * 100.0 / (double)mi.mem_total;
	sys->swap_total = mi.swap_total;
	sys->swap_used = mi.swap_total > mi.swap_free ? mi.swap_total - mi.swap_free : 0;
	sys->has_swap = true;
	return 0;
}

/* "5" > /proc/PID/clear_refs: VmHWM := current RSS. Returns 0 or -errno. */
static int clear_refs(pid_t pid)
{
	int fd = open_proc_file(pid, "clear_refs", O_WRONLY);
	if (fd < 0)
		return -errno;
	ssize_t n;
	do
		n = write(fd, "5", 1);
	while (n < 0 && errno == EINTR);
	int rc = n == 1 ? 0 : -errno;
	close(fd);
	return rc;
}

static int linux_peak_reset(struct meter *m)
{
	struct linux_meter *lm = m->priv;
	struct status_fields st;
	/* A last reading before the reset (the marks up to now count for
	 * hwm_seen) that also tells which processes are zombies already. */
	for (size_t i = 0; i < lm->tab.n;) {
		if (refresh(lm, i, &st, true))
			continue;
		i++;
	}
	lm->window_best = lm->dep_now = lm->dep_pending = lm->files_best = 0;
	lm->sums.valid = false; /* the readings above moved what they stand on */
	if (lm->cg_on)
		memcg_peak_reset(&lm->cg);
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct mproc *p = lm->tab.p[i];
		p->hwm = 0;
		entry(lm, i)->maxrss_taken = false;
		if (p->zombie) {
			p->stale_exit = true; /* its ru_maxrss is an earlier window's */
			continue;
		}
		int rc = clear_refs(p->pid);
		if (rc && rc != -ENOENT && rc != -ESRCH && !lm->warned_clear) {
			/* Its VmHWM then counts from its birth: an upper bound. */
			warning("cannot reset the peak of process %d (/proc/%d/clear_refs: %s); "
				"its stage peaks are upper bounds", (int)p->pid, (int)p->pid,
				strerror(-rc));
			lm->warned_clear = true;
		}
	}
	return lm->tab.n ? 0 : -1;
}

/* How long peak_read waits for a process caught in its exit (memory
 * released, not yet a zombie) to become one, 1 ms at a time. */
#define EXITING_WAIT_MS 20

/* The window's peak, peak, where a bound is lower: the tree's cgroup's own
 * high-water mark since the reset (every page it was charged for, page cache
 * and kernel memory included) plus the file pages its live processes map
 * (which may be charged elsewhere); the machine's memory (a resident set
 * cannot be larger). */
static uint64_t peak_bound(struct linux_meter *lm, uint64_t peak)
{
	uint64_t cg;
	if (lm->cg_on && !memcg_peak(&lm->cg, &cg)) {
		/* file pages another cgroup was charged for (already cached) count
		 * as the most the window's samples saw mapped, not as the last */
		uint64_t files = 0;
		for (size_t i = 0; i < lm->tab.n; i++)
			if (!lm->tab.p[i]->zombie)
				files += entry(lm, i)->last.rss_file;
		cg += (files > lm->files_best ? files : lm->files_best) + outside_sum(lm);
		if (cg < peak)
			peak = cg;
	}
	if ((lm->mi.have & MI_MEM_TOTAL) && lm->mi.mem_total && peak > lm->mi.mem_total)
		peak = lm->mi.mem_total;
	return peak;
}

static int linux_peak_read(struct meter *m, uint64_t *bytes)
{
	struct linux_meter *lm = m->priv;
	struct status_fields st;
	struct memcg_fields cf;
	share_settle(lm);
	for (int tries = 0;; tries++) {
		bool exiting = false;
		for (size_t i = 0; i < lm->tab.n;) {
			if (refresh(lm, i, &st, true))
				continue;
			exiting |= !lm->tab.p[i]->zombie && entry(lm, i)->hwm_read &&
				   !(st.have & ST_VM_HWM);
			i++;
		}
		/* Such a process lost its VmHWM and cannot be reaped yet: once a
		 * zombie, the caller can reap it now, its ru_maxrss counting for
		 * this window (meter_peak_exited) rather than the next. */
		if (!exiting || tries >= EXITING_WAIT_MS)
			break;
		sleep_ns(1000000);
	}
	lm->sums.valid = false; /* the readings above moved what they stand on */
	window_peak(lm, peak_sum(lm, read_cgroup(lm, &cf) ? &cf : NULL));
	if (!lm->tab.n && !lm->window_best)
		return -1;
	*bytes = peak_bound(lm, lm->window_best);
	return 0;
}

/* meter.h states the rule and why it is so strict. */
static int linux_peak_exited(struct meter *m, pid_t pid, uint64_t maxrss)
{
	struct linux_meter *lm = m->priv;
	long i = proctab_find(&lm->tab, pid);
	if (i < 0)
		return 0;
	struct mproc *p = lm->tab.p[i];
	if (p->stale_exit || maxrss <= lm->hwm_seen || maxrss <= p->hwm)
		return 0;
	p->hwm = maxrss; /* kept as its last figure when the entry goes */
	((struct linux_proc *)p)->maxrss_taken = true;
	lm->hwm_seen = maxrss;
	return 1;
}

static void linux_free(struct meter *m)
{
	struct linux_meter *lm = m->priv;
	if (!lm)
		return;
	proctab_release(&lm->tab, close_proc);
	close_fds(&lm->self);
	mapped_free(lm);
	memcg_remove(&lm->cg);
	memcg_home_release(&lm->cg);
	if (lm->meminfo_fd >= 0)
		close(lm->meminfo_fd);
	if (lm->loadavg_fd >= 0)
		close(lm->loadavg_fd);
	if (lm->proc_fd >= 0)
		close(lm->proc_fd);
	free(lm->pairs);
	free(lm->known);
	free(lm->listed);
	free(lm);
	m->priv = NULL;
}

static int linux_mapped_file(struct meter *m, const char **path, uint64_t *size)
{
	return mapped_next_file(m->priv, path, size);
}

/* A cgroup for the next command (meter.h): cgroup.c's memcg_enclose. */
static int linux_enclose(struct meter *m)
{
	return memcg_enclose(&((struct linux_meter *)m->priv)->cg);
}

static const struct meter_backend linux_backend = {
	.track = linux_track,
	.pids = linux_pids,
	.sample = linux_sample,
	.system = linux_system,
	.peak_reset = linux_peak_reset,
	.peak_read = linux_peak_read,
	.peak_exited = linux_peak_exited,
	.ignore = linux_ignore,
	.mapped_file = linux_mapped_file,
	.enclose = linux_enclose,
	.free = linux_free,
};

/* Test hook (meter_internal.h): force the /proc/PID/stat scan. */
void meter_linux_force_scan(struct meter *m)
{
	struct linux_meter *lm = m->priv;
	if (lm->proc_fd >= 0)
		lm->scan = true;
}

unsigned long meter_linux_walks(const struct meter *m)
{
	return ((const struct linux_meter *)m->priv)->walks;
}

unsigned long meter_linux_still(const struct meter *m)
{
	return ((const struct linux_meter *)m->priv)->still_samples;
}

unsigned long meter_linux_rollups(const struct meter *m)
{
	return ((const struct linux_meter *)m->priv)->rollups;
}

/* Whether our own smaps_rollup has Pss_Anon (Linux 5.7+). */
static bool pss_works(struct linux_meter *lm)
{
	int fd = open_proc_file(lm->self_pid, "smaps_rollup", O_RDONLY);
	ssize_t n = fd >= 0 ? reread(lm, fd) : -1;
	if (fd >= 0)
		close(fd);
	struct rollup_fields ru;
	if (n <= 0)
		return false;
	linux_parse_rollup(lm->buf, (size_t)n, &ru);
	return (ru.have & RU_PSS_ANON) != 0;
}

int meter_platform_init(struct meter *m)
{
	struct linux_meter *lm = xcalloc(1, sizeof(*lm));
	char path[64];

	proctab_init(&lm->tab, sizeof(struct linux_proc));
	lm->self_pid = getpid();
	lm->self.super.pid = lm->self_pid;
	lm->self.status_fd = lm->self.task_fd = lm->self.children_fd = lm->self.statm_fd = -1;
	lm->self.faults_fd = lm->self.runtime_fd = -1;
	lm->self.threads = 2;
	lm->proc_fd = lm->loadavg_fd = -1;
	memcg_init(&lm->cg);
	m->priv = lm;
	m->be = &linux_backend;
	fd_limit_raise(); /* files kept open per process of the tree */
	struct rlimit rl;
	rlim_t files = getrlimit(RLIMIT_NOFILE, &rl) ? 1024 : rl.rlim_cur;
	if (files == RLIM_INFINITY || files > (rlim_t)1 << 20)
		files = (rlim_t)1 << 20;
	lm->statm_budget = files > FILES_RESERVE + 16 * FILES_PER_PROC
				   ? (size_t)(files - FILES_RESERVE) / FILES_PER_PROC : 16;

	lm->last_pid = -1;
	lm->loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC); /* -1: walk every sample */
	lm->meminfo_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (lm->meminfo_fd < 0)
		return error("cannot open /proc/meminfo: %s (is /proc mounted?)", strerror(errno));

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)lm->self_pid,
		 (int)lm->self_pid);
	if (access(path, R_OK)) {
		/* Kernel without CONFIG_PROC_CHILDREN: find parents by scanning. */
		lm->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (lm->proc_fd < 0)
			return error("cannot open /proc: %s", strerror(errno));
		lm->scan = true;
	} else {
		lm->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}

	/* Exact peaks need clear_refs mode 5 (Linux 4.0+); resetting our own
	 * high-water mark is harmless and tells us whether it works. */
	lm->peaks = clear_refs(lm->self_pid) == 0;
	lm->pss = pss_works(lm);

	m->info.backend = "linux";
	m->info.footprint = footprint_words;
	m->info.mapped = mapped_words;
	m->info.fields = SF_FOOTPRINT | SF_RSS | SF_SWAPPED | SF_SWAP_USED | SF_SWAP_TOTAL |
			 SF_LEVEL | SF_PROCS | SF_MAPPED | SF_MAJFLT;
	m->info.peak_metric = lm->peaks ? "rss" : NULL;
	m->info.gpu = false;
	return 0;
}
