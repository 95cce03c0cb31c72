/* test_darwin.c -- the macOS meter (platform/darwin/meter.c) on a scripted fake libproc/sysctl
 *
 * The meter makes every macOS call through struct darwin_api; here a fake
 * kernel answers them from a table of processes the tests script: processes
 * appearing and exiting, zombies, another user's process (EPERM), a kernel
 * whose footprint interval reset fails with EINVAL, list calls that return
 * bytes where libproc returns counts. Runs on every system.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "meter/meter.h"
#include "meter/meter_internal.h"
#include "platform/darwin/darwin.h"
#include "testutil.h"

#define MiB (1024ull * 1024)
#define SELF 10
#define MAXP 32

#define MAXR 8

struct fproc {
	pid_t pid, ppid, pgid;
	bool zombie, eperm;
	struct darwin_usage u;
	struct darwin_region reg[MAXR]; /* in address order */
	size_t nreg;
};

static struct fake_kernel {
	struct fproc p[MAXP];
	size_t n;
	bool reset_einval;  /* before macOS 13.3: EINVAL, interval max reads 0 */
	bool interval_zero; /* the reset answers 0, the interval max still reads 0 */
	bool no_reset;      /* dlsym found nothing */
	bool list_all_fails;
	bool lists_bytes;   /* list calls answer in bytes, as the kernel does */
	bool no_regions;    /* no region walk (api.region NULL) */
	int list_all_calls, list_children_calls, region_calls;
} k;

static struct fproc *fp(pid_t pid)
{
	for (size_t i = 0; i < k.n; i++)
		if (k.p[i].pid == pid)
			return &k.p[i];
	return NULL;
}

static struct fproc *spawn_fake(pid_t pid, pid_t ppid, pid_t pgid, uint64_t footprint)
{
	struct fproc *p = &k.p[k.n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	p->pgid = pgid;
	p->u.footprint = p->u.lifetime_max = p->u.interval_max = footprint;
	p->u.resident = footprint + MiB;
	p->u.start = 1000 + (uint64_t)pid;
	return p;
}

static void use(struct fproc *p, uint64_t footprint)
{
	p->u.footprint = footprint;
	if (footprint > p->u.interval_max)
		p->u.interval_max = footprint;
	if (footprint > p->u.lifetime_max)
		p->u.lifetime_max = footprint;
}

static void reap_fake(pid_t pid)
{
	for (size_t i = 0; i < k.n; i++) {
		if (k.p[i].pid == pid) {
			k.p[i] = k.p[--k.n];
			return;
		}
	}
}

static int f_rusage(pid_t pid, struct darwin_usage *u)
{
	struct fproc *p = fp(pid);
	if (!p) {
		errno = ESRCH;
		return -1;
	}
	if (p->eperm) {
		errno = EPERM;
		return -1;
	}
	*u = p->u;
	if (k.reset_einval || k.interval_zero)
		u->interval_max = 0;
	return 0;
}

static int f_info(pid_t pid, struct darwin_pinfo *out)
{
	struct fproc *p = fp(pid);
	if (!p) {
		errno = ESRCH;
		return -1;
	}
	out->pid = p->pid;
	out->ppid = p->ppid;
	out->pgid = p->pgid;
	out->zombie = p->zombie;
	return 0;
}

static int f_list_all(struct darwin_pinfo **buf, size_t *alloc)
{
	k.list_all_calls++;
	if (k.list_all_fails) {
		errno = ENOMEM;
		return -1;
	}
	ALLOC_GROW(*buf, k.n + 1, *alloc);
	for (size_t i = 0; i < k.n; i++)
		f_info(k.p[i].pid, &(*buf)[i]);
	return (int)k.n;
}

static int list_where(bool by_group, pid_t id, pid_t *buf, int bytes)
{
	int n = 0;
	for (size_t i = 0; i < k.n && (n + 1) * (int)sizeof(pid_t) <= bytes; i++)
		if ((by_group ? k.p[i].pgid : k.p[i].ppid) == id)
			buf[n++] = k.p[i].pid;
	return k.lists_bytes ? n * (int)sizeof(pid_t) : n;
}

static int f_list_children(pid_t ppid, pid_t *buf, int bytes)
{
	k.list_children_calls++;
	return list_where(false, ppid, buf, bytes);
}

static int f_list_pgrp(pid_t pgid, pid_t *buf, int bytes)
{
	return list_where(true, pgid, buf, bytes);
}

static int f_reset(pid_t pid)
{
	struct fproc *p = fp(pid);
	if (!p || p->zombie) {
		errno = ESRCH;
		return -1;
	}
	if (k.reset_einval) {
		errno = EINVAL;
		return -1;
	}
	p->u.interval_max = p->u.footprint;
	return 0;
}

/* PROC_PIDREGIONPATHINFO: the first region ending after address. */
static int f_region(pid_t pid, uint64_t address, struct darwin_region *r)
{
	k.region_calls++;
	struct fproc *p = fp(pid);
	if (!p || p->zombie) {
		errno = ESRCH;
		return -1;
	}
	for (size_t i = 0; i < p->nreg; i++)
		if (p->reg[i].address + p->reg[i].size > address) {
			*r = p->reg[i];
			return 0;
		}
	errno = EINVAL;
	return -1;
}

/* A region of p after its others: a file's (path, device 1, inode ino) or
 * anonymous memory (path NULL); resident bytes. */
static struct darwin_region *region(struct fproc *p, const char *path, uint64_t ino, uint64_t offset,
				    uint64_t size, uint64_t resident, bool exec)
{
	struct darwin_region *r = &p->reg[p->nreg];
	memset(r, 0, sizeof(*r));
	r->address = p->nreg ? p->reg[p->nreg - 1].address + p->reg[p->nreg - 1].size + 4096
			     : 0x100000000ull;
	r->size = size;
	r->offset = offset;
	r->resident = resident;
	r->exec = exec;
	if (path) {
		r->dev = 1;
		r->ino = ino;
		snprintf(r->path, sizeof(r->path), "%s", path);
	}
	p->nreg++;
	return r;
}

static int f_sysctl(const char *name, void *buf, size_t *len)
{
	if (!strcmp(name, "kern.memorystatus_level") && *len == sizeof(int)) {
		*(int *)buf = 62;
		return 0;
	}
	if (!strcmp(name, "hw.memsize") && *len == sizeof(uint64_t)) {
		*(uint64_t *)buf = 16ull << 30;
		return 0;
	}
	if (!strcmp(name, "vm.swapusage") && *len == sizeof(struct darwin_swap)) {
		struct darwin_swap sw = { 2ull << 30, 1ull << 30, 1ull << 30, 16384, 1 };
		memcpy(buf, &sw, sizeof(sw));
		return 0;
	}
	errno = ENOENT;
	return -1;
}

static pid_t f_self(void) { return SELF; }
static pid_t f_pgid_of(pid_t pid) { struct fproc *p = fp(pid); return p ? p->pgid : -1; }
static pid_t f_own_pgrp(void) { return SELF; }

static struct darwin_api api;

static struct meter *fake_meter(void)
{
	api = (struct darwin_api){ f_rusage, f_info, f_list_all, f_list_children, f_list_pgrp,
				   k.no_reset ? NULL : f_reset, f_sysctl, f_self, f_pgid_of,
				   f_own_pgrp, k.no_regions ? NULL : f_region };
	struct meter *m = xcalloc(1, sizeof(*m));
	cr_assert_eq(meter_darwin_init(m, &api), 0);
	return m;
}

static void setup(void)
{
	memset(&k, 0, sizeof(k));
	spawn_fake(SELF, 1, SELF, 20 * MiB); /* the recorder */
}

static struct trace_sample sample(struct meter *m)
{
	struct trace_sample s = { 0 };
	cr_assert_eq(meter_sample(m, &s), 0);
	return s;
}

TestSuite(darwin, .init = setup);

Test(darwin, exact_peaks_are_claimed_only_when_a_reset_and_a_read_work)
{
	struct meter *m = fake_meter();
	cr_assert_str_eq(meter_info(m)->peak_metric, "footprint");
	cr_assert_str_eq(meter_info(m)->backend, "macos");
	cr_assert_null(strstr(meter_info(m)->footprint, "sampled"));
	meter_free(m);

	/* A kernel before macOS 13.3: dlsym finds the function, the reset
	 * fails with EINVAL and the interval maximum reads 0. */
	k.reset_einval = true;
	m = fake_meter();
	cr_assert_null(meter_info(m)->peak_metric, "no exact peaks may be claimed");
	cr_assert_not_null(strstr(meter_info(m)->footprint, "stage peaks are sampled"));
	meter_track(m, 100);
	spawn_fake(100, SELF, 100, 300 * MiB);
	cr_assert_eq(meter_peak_reset(m), -1);
	uint64_t b;
	cr_assert_eq(meter_peak_read(m, &b), -1);
	meter_free(m);

	k.reset_einval = false;
	k.interval_zero = true;
	m = fake_meter();
	cr_assert_null(meter_info(m)->peak_metric, "a reset that leaves 0 is no exact peak");
	meter_free(m);

	k.interval_zero = false;
	k.no_reset = true;
	m = fake_meter();
	cr_assert_null(meter_info(m)->peak_metric);
	meter_free(m);
}

Test(darwin, the_tree_comes_from_one_listing_per_sample)
{
	spawn_fake(100, SELF, 100, 100 * MiB);     /* the root, its own group */
	spawn_fake(101, 100, 100, 10 * MiB);       /* child */
	spawn_fake(102, 101, 102, 20 * MiB);       /* grandchild that left the group */
	spawn_fake(103, 1, 100, 40 * MiB);         /* group member re-parented to launchd */
	spawn_fake(200, 1, 200, 999 * MiB);        /* a stranger */
	spawn_fake(11, SELF, SELF, 999 * MiB);     /* another child of the recorder */
	struct meter *m = fake_meter();
	meter_track(m, 100);
	k.list_all_calls = k.list_children_calls = 0;
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 4);
	cr_assert_eq(s.footprint, 170 * MiB);
	cr_assert_eq(s.rss, 174 * MiB);
	cr_assert_eq(s.level, 62);
	cr_assert_eq(s.swap_used, 1ull << 30);
	cr_assert_eq(k.list_all_calls, 1, "one process listing per sample");
	cr_assert_eq(k.list_children_calls, 0, "no per-process child listing");

	/* A process appears under the grandchild, the child exits and is reaped:
	 * the grandchild stays (remembered by pid). */
	spawn_fake(104, 102, 102, 5 * MiB);
	reap_fake(101);
	fp(102)->ppid = 1;
	s = sample(m);
	cr_assert_eq(s.procs, 4);
	cr_assert_eq(s.footprint, 165 * MiB);
	cr_assert_eq(k.list_all_calls, 2);
	size_t n;
	const pid_t *pids = meter_pids(m, &n);
	cr_assert_eq(n, 4);
	cr_assert_eq(pids[0], 100, "root first");
	meter_free(m);
}

Test(darwin, a_reused_pid_is_another_process)
{
	spawn_fake(100, SELF, 100, 100 * MiB);
	spawn_fake(101, 100, 100, 10 * MiB);
	struct meter *m = fake_meter();
	meter_track(m, 100);
	cr_assert_eq(sample(m).procs, 2);
	reap_fake(101);
	struct fproc *other = spawn_fake(101, 1, 101, 500 * MiB);
	other->u.start = 99999; /* same pid, a later start: not ours */
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 1);
	cr_assert_eq(s.footprint, 100 * MiB);
	meter_free(m);
}

Test(darwin, without_the_listing_children_are_listed_per_process_in_bytes_or_counts)
{
	for (int bytes = 0; bytes < 2; bytes++) {
		setup();
		k.list_all_fails = true;
		k.lists_bytes = bytes;
		spawn_fake(100, SELF, 100, 100 * MiB);
		spawn_fake(101, 100, 100, 10 * MiB);
		spawn_fake(102, 101, 102, 20 * MiB);
		spawn_fake(200, 1, 200, 999 * MiB);
		struct meter *m = fake_meter();
		meter_track(m, 100);
		struct stderr_capture c;
		stderr_capture_begin(&c);
		struct trace_sample s = sample(m);
		s = sample(m);
		char *msg = stderr_capture_end(&c);
		cr_assert_eq(s.procs, 3, "bytes=%d: %d processes", bytes, s.procs);
		cr_assert_eq(s.footprint, 130 * MiB);
		size_t n;
		meter_pids(m, &n);
		cr_assert_eq(n, 3, "no pid read past the end of what the call wrote");
		cr_assert_not_null(strstr(msg, "cannot list processes"));
		cr_assert_null(strstr(strstr(msg, "cannot list") + 1, "cannot list"), "warned once");
		free(msg);
		meter_free(m);
	}
}

Test(darwin, a_zombie_peak_counts_in_its_own_window_and_never_later)
{
	struct fproc *root = spawn_fake(100, SELF, 100, 100 * MiB);
	struct fproc *child = spawn_fake(101, 100, 100, 10 * MiB);
	struct meter *m = fake_meter();
	meter_track(m, 100);
	sample(m);
	uint64_t b;

	cr_assert_eq(meter_peak_reset(m), 0);
	use(child, 500 * MiB);
	child->zombie = true; /* exits at 500 MiB, not yet reaped */
	child->u.footprint = 0;
	use(root, 150 * MiB);
	cr_assert_eq(meter_peak_read(m, &b), 0);
	cr_assert_eq(b, 650 * MiB, "window 1: the child's peak counts: %llu MiB",
		     (unsigned long long)(b / MiB));

	cr_assert_eq(meter_peak_reset(m), 0);
	use(root, 160 * MiB);
	cr_assert_eq(meter_peak_read(m, &b), 0);
	cr_assert_eq(b, 160 * MiB, "window 2: the zombie's old peak is left out: %llu MiB",
		     (unsigned long long)(b / MiB));
	struct trace_sample s = sample(m);
	cr_assert_eq(s.procs, 1);
	cr_assert_eq(meter_peak_read(m, &b), 0);
	cr_assert_eq(b, 160 * MiB);
	meter_free(m);
}

Test(darwin, a_zombie_never_seen_alive_adds_nothing)
{
	spawn_fake(100, SELF, 100, 100 * MiB);
	struct fproc *z = spawn_fake(101, 100, 100, 700 * MiB);
	z->zombie = true; /* born and gone between two samples */
	struct meter *m = fake_meter();
	meter_track(m, 100);
	sample(m);
	cr_assert_eq(meter_peak_reset(m), 0);
	uint64_t b;
	cr_assert_eq(meter_peak_read(m, &b), 0);
	cr_assert_eq(b, 100 * MiB);
	meter_free(m);
}

Test(darwin, another_users_process_is_warned_about_once_and_its_children_still_count)
{
	spawn_fake(100, SELF, 100, 100 * MiB);
	spawn_fake(101, 100, 100, 50 * MiB)->eperm = true; /* setuid helper */
	spawn_fake(102, 101, 100, 30 * MiB);                /* its child, ours again */
	spawn_fake(103, 100, 100, 60 * MiB)->eperm = true;
	struct meter *m = fake_meter();
	meter_track(m, 100);
	struct stderr_capture c;
	stderr_capture_begin(&c);
	struct trace_sample s = sample(m);
	s = sample(m);
	cr_assert_eq(meter_peak_reset(m), 0);
	char *msg = stderr_capture_end(&c);
	cr_assert_eq(s.procs, 2);
	cr_assert_eq(s.footprint, 130 * MiB);
	const char *w = strstr(msg, "cannot read the memory of process");
	cr_assert_not_null(w, "a warning: '%s'", msg);
	cr_assert_null(strstr(w + 1, "cannot read the memory"), "once per run: '%s'", msg);
	cr_assert_null(strstr(msg, "cannot reset"), "no reset is tried on it");
	free(msg);
	/* it exits: the entry goes */
	reap_fake(101);
	s = sample(m);
	size_t n;
	meter_pids(m, &n);
	cr_assert_eq(n, 3);
	meter_free(m);
}

Test(darwin, recorder_children_other_than_the_root_are_foreign)
{
	spawn_fake(100, SELF, 100, 100 * MiB);
	spawn_fake(11, SELF, SELF, 999 * MiB);
	struct meter *m = fake_meter();
	meter_track(m, 100);
	/* an orphan can only come back to us through a subreaper: a new child of
	 * the recorder joins (macOS has none, but the rule is the same) */
	spawn_fake(12, SELF, 12, 7 * MiB);
	struct trace_sample s = sample(m);
	cr_assert_eq(s.footprint, 107 * MiB);
	meter_ignore(m, 12);
	s = sample(m);
	cr_assert_eq(s.footprint, 100 * MiB);
	meter_free(m);
}

Test(darwin, system_figures_from_sysctl)
{
	struct meter *m = fake_meter();
	struct meter_system sys;
	cr_assert_eq(meter_system(m, &sys), 0);
	cr_assert_eq(sys.avail_pct, 62);
	cr_assert_eq(sys.total_bytes, 16ull << 30);
	cr_assert(sys.has_swap);
	cr_assert_eq(sys.swap_total, 2ull << 30);
	meter_free(m);
}

/* The weights a parent and its forked child map: one set of pages (the same
 * region of the file, counted once with the most pages resident), plus a
 * region only the child has; a library's read-only and executable regions,
 * a system file and anonymous memory do not count. */
static void mapping_tree(struct fproc **root, struct fproc **child)
{
	static const char w[] = "/Users/u/models/text_encoder/model.safetensors";
	*root = spawn_fake(100, SELF, 100, 50 * MiB);
	*child = spawn_fake(101, 100, 100, 40 * MiB);
	for (int i = 0; i < 2; i++) {
		struct fproc *p = i ? *child : *root;
		region(p, NULL, 0, 0, 512 * MiB, 300 * MiB, false);
		region(p, "/opt/lib/libtorch_cpu.dylib", 7, 0, 64 * MiB, 20 * MiB, true);
		region(p, "/opt/lib/libtorch_cpu.dylib", 7, 64 * MiB, 16 * MiB, 5 * MiB, false);
		region(p, "/System/Library/Fonts/x.ttf", 8, 0, 8 * MiB, 7 * MiB, false);
		region(p, w, 50, 0, 300 * MiB, (i ? 180 : 200) * MiB, false);
	}
	region(*child, w, 50, 300 * MiB, 100 * MiB, 50 * MiB, false);
}

Test(darwin, mapped_data_files_count_once_across_the_tree)
{
	struct fproc *root, *child;
	mapping_tree(&root, &child);
	root->u.pageins = 10;
	child->u.pageins = 5;
	struct meter *m = fake_meter();
	cr_assert(meter_info(m)->fields & SF_MAPPED);
	cr_assert_not_null(meter_info(m)->mapped);
	meter_track(m, 100);
	struct trace_sample s = sample(m);
	cr_assert(s.fields & SF_MAPPED);
	cr_assert_eq(s.mapped, 250 * MiB, "%llu MiB", (unsigned long long)(s.mapped / MiB));
	cr_assert(s.fields & SF_MAJFLT);
	cr_assert_eq(s.majflt, 15);
	const char *path;
	uint64_t size;
	cr_assert_eq(meter_mapped_file(m, &path, &size), 1);
	cr_assert_str_eq(path, "/Users/u/models/text_encoder/model.safetensors");
	cr_assert_eq(size, 0, "no such file here: its size is unknown");
	cr_assert_eq(meter_mapped_file(m, &path, &size), 0, "the library and the font are not data");
	sample(m);
	cr_assert_eq(meter_mapped_file(m, &path, &size), 0, "told once");
	meter_free(m);
}

Test(darwin, regions_are_walked_again_only_when_a_resident_size_moved)
{
	struct fproc *root, *child;
	mapping_tree(&root, &child);
	struct meter *m = fake_meter();
	meter_track(m, 100);
	sample(m);
	int calls = k.region_calls;
	cr_assert_gt(calls, 0);
	struct trace_sample s = sample(m);
	cr_assert_eq(k.region_calls, calls, "nothing moved: no walk");
	cr_assert_eq(s.mapped, 250 * MiB);
	/* the child reads the rest of the file: its resident size moves */
	child->reg[5].resident = 100 * MiB;
	child->u.resident += 50 * MiB;
	s = sample(m);
	cr_assert_gt(k.region_calls, calls);
	cr_assert_eq(s.mapped, 300 * MiB);
	/* the child exits: the root's pages stay, the child's own region goes */
	child->zombie = true;
	s = sample(m);
	cr_assert_eq(s.mapped, 200 * MiB);
	meter_free(m);
}

Test(darwin, without_the_region_call_no_mapped_figure)
{
	struct fproc *root, *child;
	mapping_tree(&root, &child);
	k.no_regions = true;
	struct meter *m = fake_meter();
	cr_assert_not(meter_info(m)->fields & SF_MAPPED);
	cr_assert_null(meter_info(m)->mapped);
	meter_track(m, 100);
	struct trace_sample s = sample(m);
	cr_assert_not(s.fields & SF_MAPPED);
	cr_assert(s.fields & SF_MAJFLT);
	meter_free(m);
}
