/* mapped.c -- the Linux meter's mapped figure: the resident pages of the data files the tree
 * maps (model weights mapped rather than copied), each page once, from /proc/PID/smaps read
 * when what the tree maps moved; and the tree's major page faults (meter_int.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/util.h"
#include "meter_int.h"

/*
 * What counts (traces/FORMAT.md, "mapped"; docs/platforms.md): a file mapping's Pss less its
 * Anonymous (a private mapping's copied pages are the process's own, in footprint), summed
 * over the tree: Pss splits a page mapped by N processes into N shares, so the sum counts it
 * once. Only data files: a file some process maps executable is a program or a shared
 * library (their read-only segments too); files under the system's own directories (the
 * interpreter's locale archive, fonts) are not the pipeline's; files on tmpfs, ramfs or
 * hugetlbfs are shared memory (RssShmem, in footprint).
 *
 * Cost: smaps lists every mapping (a torch process has thousands), so it is read only when
 * something moved: a process's RssFile (status, re-read when statm moved) differs from its
 * value at its last reading, or the process set changed. Then every live process is read
 * (one process's mappings change the others' shares), at most MAPPED_COST_FACTOR times the
 * last round's cost apart (a reading walks the process's page tables: about 40 ms for a
 * Python process holding torch and a model). Before any data file is known, RssFile moves
 * without one (the kernel pages library pages out, a process faults them back in: a still
 * tree of 100 processes started 86 rounds in 20 s), so a round waits for a change of a
 * process's address-space size (a file is mapped before its pages come in), and it reads
 * only the maps of the processes that changed (proc_moved): the list of mappings, without
 * the page-table walk (a round of smaps over a chain of 400 forked processes took 3.3 s).
 * The first data file found makes it a round of every process's smaps.
 *
 * Until that reading, in a tree of one live process (the usual pipeline) whose last reading
 * found data files resident, the figure follows its RssFile (status): the last reading moved
 * by as much as RssFile since, at most what the data files mapped then can hold and what was
 * mapped since; a library's pages read meanwhile count, within that bound, until the reading
 * corrects them. Before any data file (imports: libraries only), or with several processes
 * (their RssFile moves by pages they share as much as by their own), the last reading
 * stands.
 */
#define MAPPED_COST_FACTOR 20
#define MAPPED_FIND_BYTES (64ull << 20) /* undiscovered(), proc_moved() */

#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6
#define HUGETLBFS_MAGIC_ 0x958458f6

struct mfile {
	uint64_t dev, ino;
	char *path;
	uint64_t size;  /* st_size at first sight, 0: unknown */
	uint64_t pss;   /* this round's file pages over the tree, bytes */
	bool exec;      /* some process maps it executable */
	bool system;    /* a system path, or shared memory */
	bool told;      /* handed out by mapped_next_file */
	bool here;      /* mapped by a process the last round read */
};

struct mapped_state {
	struct mfile *f;
	size_t n, alloc;
	uint32_t *slot;   /* hash of (dev, ino): index + 1, 0 empty */
	size_t nslot;
	size_t last;      /* the file the last lookup found (mappings come in runs) */
	uint64_t bytes;   /* the last round's figure */
	uint64_t room;    /* the data files the last round found mapped can hold at most
			   * (their sizes in whole pages; UINT64_MAX: a size unknown) */
	uint64_t page;    /* the page size, bytes */
	bool have;        /* a round was made */
	bool pending;     /* something moved since */
	bool data;        /* a data file is among f (not exec, not system) */
	size_t nread;     /* live processes the last round read */
	int64_t next_ns;  /* the next round waits until then */
	bool tell;        /* a round was made since mapped_next_file last looked */
	size_t told;      /* files before this index were looked at since */
	uint64_t departed_majflt; /* last counts of processes no tree process reaped */
	uint64_t majflt_seen;     /* the highest tree total reported */
	unsigned long reads[2];   /* maps, smaps read so far (meter_linux_mapping_reads) */
	char buf[65536];
};

static const char *const system_dirs[] = {
	"/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/etc/", "/bin/", "/sbin/",
	"/dev/", "/proc/", "/sys/", "/memfd:", "/SYSV",
};

static bool system_path(const char *path)
{
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (!strncmp(path, system_dirs[i], strlen(system_dirs[i])))
			return true;
	return false;
}

static uint64_t hash_of(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev << 29) ^ (dev >> 7)) * 0x9E3779B97F4A7C15ULL;
	return h ^ (h >> 31);
}

static void rehash(struct mapped_state *ms)
{
	free(ms->slot);
	ms->nslot = ms->nslot ? ms->nslot * 2 : 256;
	ms->slot = xcalloc(ms->nslot, sizeof(*ms->slot));
	for (size_t i = 0; i < ms->n; i++) {
		size_t k = hash_of(ms->f[i].dev, ms->f[i].ino) & (ms->nslot - 1);
		while (ms->slot[k])
			k = (k + 1) & (ms->nslot - 1);
		ms->slot[k] = (uint32_t)(i + 1);
	}
}

/* A file first seen: its path (a copy), size, and whether it is a system file. */
static void file_init(struct mfile *f, const struct smaps_header *h)
{
	f->path = xmalloc(h->plen + 1);
	memcpy(f->path, h->path, h->plen);
	f->path[h->plen] = '\0';
	f->system = system_path(f->path);
	struct stat sb;
	if (!f->system && !stat(f->path, &sb) && (uint64_t)sb.st_ino == f->ino)
		f->size = (uint64_t)sb.st_size;
	struct statfs fs;
	if (!f->system && !statfs(f->path, &fs) &&
	    ((unsigned long)fs.f_type == TMPFS_MAGIC_ || (unsigned long)fs.f_type == RAMFS_MAGIC_ ||
	     (unsigned long)fs.f_type == HUGETLBFS_MAGIC_))
		f->system = true;
}

/* The entry of the mapping's file, added when first seen. */
static struct mfile *file_of(struct mapped_state *ms, const struct smaps_header *h)
{
	if (ms->last < ms->n && ms->f[ms->last].ino == h->ino && ms->f[ms->last].dev == h->dev)
		return &ms->f[ms->last];
	if (2 * (ms->n + 1) > ms->nslot)
		rehash(ms);
	size_t k = hash_of(h->dev, h->ino) & (ms->nslot - 1);
	for (; ms->slot[k]; k = (k + 1) & (ms->nslot - 1)) {
		struct mfile *f = &ms->f[ms->slot[k] - 1];
		if (f->ino == h->ino && f->dev == h->dev) {
			ms->last = ms->slot[k] - 1;
			return f;
		}
	}
	ALLOC_GROW(ms->f, ms->n + 1, ms->alloc);
	struct mfile *f = &ms->f[ms->n];
	memset(f, 0, sizeof(*f));
	f->dev = h->dev;
	f->ino = h->ino;
	file_init(f, h);
	ms->slot[k] = (uint32_t)(ms->n + 1);
	ms->last = ms->n++;
	return f;
}

/* A "Key:   N kB" line's value in bytes when the line starts with key. */
static bool kb_value(const char *line, size_t len, const char *key, uint64_t *out)
{
	size_t k = strlen(key);
	if (len < k || memcmp(line, key, k))
		return false;
	uint64_t v = 0;
	for (size_t i = k; i < len; i++) {
		if (line[i] >= '0' && line[i] <= '9')
			v = v * 10 + (uint64_t)(line[i] - '0');
		else if (line[i] != ' ')
			break;
	}
	*out = v * 1024;
	return true;
}

struct smaps_walk {
	struct mfile *cur; /* the current mapping's file, NULL for none */
	uint64_t pss, anon;
};

static void end_mapping(struct smaps_walk *w)
{
	if (w->cur)
		w->cur->pss += sat_sub(w->pss, w->anon);
	w->cur = NULL;
	w->pss = w->anon = 0;
}

static void smaps_line(struct mapped_state *ms, struct smaps_walk *w, const char *line,
		       size_t len)
{
	struct smaps_header h;
	if (len && ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) &&
	    !linux_parse_smaps_header(line, len, &h)) {
		end_mapping(w);
		if (!h.path || h.path[0] != '/' || !h.ino)
			return;
		w->cur = file_of(ms, &h);
		w->cur->exec |= h.exec;
		w->cur->here = true;
		return;
	}
	if (!w->cur)
		return;
	if (!kb_value(line, len, "Pss:", &w->pss))
		kb_value(line, len, "Anonymous:", &w->anon);
}

/* Add p's file pages (smaps) to this round's files, or only the files it maps (maps: the
 * same mapping lines without the figures, read without walking the page tables). Returns
 * -1 when it cannot be read. */
static int read_mappings(struct mapped_state *ms, struct linux_proc *p, bool pages)
{
	int fd = open_proc_file(p->super.pid, pages ? "smaps" : "maps", O_RDONLY);
	if (fd < 0)
		return -1;
	ms->reads[pages]++;
	struct smaps_walk w = { NULL, 0, 0 };
	size_t have = 0;
	for (;;) {
		ssize_t n = read(fd, ms->buf + have, sizeof(ms->buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t at = 0;
		for (;;) {
			char *nl = memchr(ms->buf + at, '\n', have - at);
			if (!nl)
				break;
			smaps_line(ms, &w, ms->buf + at, (size_t)(nl - (ms->buf + at)));
			at = (size_t)(nl - ms->buf) + 1;
		}
		if (!at && have == sizeof(ms->buf))
			at = have; /* a line longer than the buffer: dropped */
		memmove(ms->buf, ms->buf + at, have - at);
		have -= at;
	}
	end_mapping(&w);
	close(fd);
	return 0;
}

/* Whether p may have mapped or unmapped a file since its last reading: with a
 * data file known, its RssFile moved (pages of it came or went); before any,
 * the size of its address space moved (a file is mapped before its pages come
 * in; library pages the kernel pages out and the process faults back in move
 * RssFile with nothing to find) or its RssFile rose by MAPPED_FIND_BYTES (a file
 * mapped over a reservation of the same size). Without statm (past the budget):
 * RssFile. */
static bool proc_moved(const struct mapped_state *ms, const struct linux_proc *p)
{
	if (!p->map_read)
		return true;
	if (ms->data || p->statm_fd < 0)
		return p->map_file != p->last.rss_file;
	return p->map_vsize != p->statm[0] ||
	       sat_sub(p->last.rss_file, p->map_file) >= MAPPED_FIND_BYTES;
}

/* Whether what the tree maps may have moved since the last round. */
static bool moved(struct linux_meter *lm, struct mapped_state *ms)
{
	size_t live = 0;
	bool any = !ms->have;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie)
			continue;
		live++;
		any |= proc_moved(ms, p);
	}
	return any || live != ms->nread;
}

/* In a round before any data file is known: whether p, not read yet, was
 * forked with its parent's mappings (its address space the size the parent's
 * had at the parent's reading, which stands), so that it maps what the parent
 * mapped then and that reading stands for it. One that exec'd or mapped
 * something since has another size and is read. A worker pool's short-lived
 * forks are then not read at all. The table lists a parent before the children
 * it found, so a parent read in this round was read before them. */
static bool adopt_parent_reading(struct linux_meter *lm, struct linux_proc *p)
{
	if (p->map_read || p->statm_fd < 0 || p->ppid <= 0)
		return false;
	long i = proctab_find(&lm->tab, p->ppid);
	if (i < 0)
		return false;
	const struct linux_proc *parent = entry(lm, (size_t)i);
	if (!parent->map_read || parent->map_vsize != parent->statm[0] ||
	    parent->map_vsize != p->statm[0])
		return false;
	p->map_read = true;
	p->map_file = p->last.rss_file;
	p->map_vsize = p->statm[0];
	return true;
}

/* A round: every live process's smaps. Before any data file is known (the
 * figure is 0 whoever is read), only the maps of those that may have mapped one
 * (proc_moved): a new process (unless adopt_parent_reading), one whose mappings
 * changed; when that finds a data file, every process's smaps, for the figure
 * and its shares. */
static void round_of_smaps(struct linux_meter *lm, struct mapped_state *ms)
{
	int64_t t0 = mono_ns();
	bool part = !ms->data;
again:
	for (size_t i = 0; i < ms->n; i++) {
		ms->f[i].pss = 0;
		ms->f[i].here = false;
	}
	ms->nread = 0;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->super.zombie)
			continue;
		ms->nread++;
		if (part && (!proc_moved(ms, p) || adopt_parent_reading(lm, p)))
			continue;
		p->map_read = true;
		p->map_file = p->last.rss_file;
		p->map_vsize = p->statm[0];
		read_mappings(ms, p, !part);
	}
	if (part) {
		for (size_t i = 0; i < ms->n; i++)
			if (!ms->f[i].exec && !ms->f[i].system) {
				part = false;
				goto again;
			}
	}
	uint64_t sum = 0, room = 0;
	bool data = false;
	uint64_t pg = ms->page;
	for (size_t i = 0; i < ms->n; i++) {
		const struct mfile *f = &ms->f[i];
		if (f->exec || f->system)
			continue;
		sum += f->pss;
		data = true;
		if (f->here && room != UINT64_MAX)
			room = f->size ? room + (f->size + pg - 1) / pg * pg : UINT64_MAX;
	}
	ms->bytes = sum;
	ms->room = room;
	ms->data = data;
	ms->have = true;
	ms->pending = false;
	ms->tell = true;
	int64_t t1 = mono_ns();
	ms->next_ns = t1 + MAPPED_COST_FACTOR * (t1 - t0);
}

/* Between readings: the last one, moved by the one live process's RssFile since
 * (several, or no data file mapped yet: the last one). A data file mapped but not
 * yet resident at the last reading counts: its pages come in as the pipeline first
 * uses the weights, which may be long before the next reading (the budget). Library
 * pages the process faults in meanwhile move RssFile too (a first forward pass
 * brings in hundreds of MB of torch's code), so the estimate never exceeds what the
 * data files mapped at the last reading can hold, plus by how much the process's
 * address space grew since (a file mapped since: the next stage's model). */
static uint64_t estimate(struct linux_meter *lm, const struct mapped_state *ms)
{
	const struct linux_proc *one = NULL;
	if (!ms->data)
		return ms->bytes;
	for (size_t i = 0; i < lm->tab.n; i++) {
		const struct linux_proc *p = entry(lm, i);
		if (p->super.zombie)
			continue;
		if (one || !p->map_read)
			return ms->bytes;
		one = p;
	}
	if (!one || ms->nread != 1)
		return ms->bytes;
	uint64_t e = sat_sub(ms->bytes + one->last.rss_file, one->map_file);
	if (ms->room == UINT64_MAX || one->statm_fd < 0)
		return e;
	uint64_t room = ms->room + sat_sub(one->statm[0], one->map_vsize) * ms->page;
	return e < room ? e : room;
}

/* No data file known yet while a process's file pages grew by MAPPED_FIND_BYTES since
 * its last reading: a model file may have been mapped and used. The estimate between
 * readings follows RssFile only once a data file is known, so this reading is not
 * made to wait for the budget (a stage that touches a whole model may last 0.1 s);
 * what imports map (libraries) triggers it at most once per MAPPED_FIND_BYTES. Per
 * process, as proc_moved: the round reads that process and so starts its count again
 * (pages the kernel pages out and processes fault back in, summed over a tree, would
 * start a round at every sample that reads nobody). */
static bool undiscovered(struct linux_meter *lm, const struct mapped_state *ms)
{
	if (ms->data)
		return false;
	for (size_t i = 0; i < lm->tab.n; i++) {
		const struct linux_proc *p = entry(lm, i);
		if (!p->super.zombie && p->map_read &&
		    sat_sub(p->last.rss_file, p->map_file) >= MAPPED_FIND_BYTES)
			return true;
	}
	return false;
}

/* p's majflt + cmajflt, read again when its status was (statm moved). */
static void read_majflt(struct linux_meter *lm, struct linux_proc *p)
{
	p->majflt_stale = false;
	if (p->faults_fd < 0)
		p->faults_fd = open_proc_file(p->super.pid, "stat", O_RDONLY);
	ssize_t n = p->faults_fd >= 0 ? reread(lm, p->faults_fd) : -1;
	uint64_t v;
	if (n > 0 && !linux_parse_stat_majflt(lm->buf, (size_t)n, &v) && v >= p->majflt)
		p->majflt = v;
}

static struct mapped_state *state(struct linux_meter *lm)
{
	if (!lm->mapped) {
		lm->mapped = xcalloc(1, sizeof(*lm->mapped));
		long page = sysconf(_SC_PAGESIZE);
		lm->mapped->page = page > 0 ? (uint64_t)page : 4096;
	}
	return lm->mapped;
}

void mapped_sample(struct linux_meter *lm, struct trace_sample *s)
{
	struct mapped_state *ms = state(lm);
	uint64_t faults = ms->departed_majflt;
	for (size_t i = 0; i < lm->tab.n; i++) {
		struct linux_proc *p = entry(lm, i);
		if (p->majflt_stale)
			read_majflt(lm, p);
		faults += p->majflt;
	}
	if (faults > ms->majflt_seen)
		ms->majflt_seen = faults;
	s->majflt = ms->majflt_seen > INT32_MAX ? INT32_MAX : (int)ms->majflt_seen;
	s->fields |= SF_MAJFLT;

	bool now = undiscovered(lm, ms);
	ms->pending |= now || moved(lm, ms);
	if (ms->pending && (now || lm->now_ns >= ms->next_ns))
		round_of_smaps(lm, ms);
	if (ms->have) {
		s->mapped = ms->pending ? estimate(lm, ms) : ms->bytes;
		s->fields |= SF_MAPPED;
	}
}

void mapped_departed(struct linux_meter *lm, const struct linux_proc *p)
{
	/* A tree process that reaps it adds its count to its own cmajflt. */
	long parent = p->ppid > 0 ? proctab_find(&lm->tab, p->ppid) : -1;
	if (parent < 0 || lm->tab.p[parent]->zombie)
		state(lm)->departed_majflt += p->majflt;
}

void mapped_reset(struct linux_meter *lm)
{
	struct mapped_state *ms = state(lm);
	ms->have = ms->pending = false;
	ms->nread = 0;
	ms->next_ns = 0;
	ms->departed_majflt = ms->majflt_seen = 0;
}

bool mapped_next_file(struct linux_meter *lm, const char **path, uint64_t *size)
{
	struct mapped_state *ms = lm->mapped;
	if (!ms || !ms->tell)
		return false;
	while (ms->told < ms->n) {
		struct mfile *f = &ms->f[ms->told++];
		if (f->exec || f->system || !f->pss)
			continue; /* (one not resident yet is told when its pages are) */
		if (f->told)
			continue;
		f->told = true;
		*path = f->path;
		*size = f->size;
		return true;
	}
	ms->told = 0;
	ms->tell = false;
	return false;
}

unsigned long meter_linux_mapping_reads(const struct meter *m, bool pages)
{
	const struct mapped_state *ms = ((const struct linux_meter *)m->priv)->mapped;
	return ms ? ms->reads[pages] : 0;
}

void mapped_free(struct linux_meter *lm)
{
	struct mapped_state *ms = lm->mapped;
	if (!ms)
		return;
	for (size_t i = 0; i < ms->n; i++)
		free(ms->f[i].path);
	free(ms->f);
	free(ms->slot);
	free(ms);
	lm->mapped = NULL;
}
