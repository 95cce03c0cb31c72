/* mapped.c -- the macOS meter's mapped figure: the resident pages of the data files the tree
 * maps, from a walk of each process's regions through libproc (darwin.h), and its pageins */
#include "darwin.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"

/*
 * proc_pidinfo(PROC_PIDREGIONPATHINFO) answers the region at or after an address: its range,
 * protection, resident pages and, for a file-backed one, the file (device, inode, path). A
 * walk visits every region of a process (thousands for a Python process with torch), so it
 * is made only when something moved: a process's resident size differs from its value at its
 * last walk, or the process set changed; then every live process is walked, at most
 * MAPPED_COST_FACTOR times the last round's cost apart (a round cheaper than
 * MAPPED_FREE_NS does not wait). macOS has no proportional set size: a region of a file at an
 * offset is counted once across the tree, with the most pages any process has resident in it
 * (a forked child's mapping is its parent's pages). A file some process maps executable is a
 * program or a library (the dyld shared cache too); files under the system's directories are
 * not the pipeline's.
 */
#define MAPPED_COST_FACTOR 20
#define MAPPED_FREE_NS (1000 * 1000LL)

struct dfile {
	uint64_t dev, ino;
	char *path;
	uint64_t size;
	uint64_t bytes; /* this round's resident bytes */
	bool exec, system, told;
};

struct dregion {
	size_t file; /* index into files */
	uint64_t offset, size, resident;
};

struct darwin_mapped {
	struct dfile *f;
	size_t n, alloc, last;
	struct dregion *r; /* this round's file regions */
	size_t nr, ralloc;
	uint64_t bytes;
	bool have, pending, tell;
	size_t nread, told;
	int64_t next_ns;
	uint64_t departed_pageins, pageins_seen;
};

static const char *const system_dirs[] = {
	"/System/", "/usr/", "/Library/Apple/", "/private/var/db/", "/dev/", "/bin/", "/sbin/",
};

static bool system_path(const char *path)
{
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (!strncmp(path, system_dirs[i], strlen(system_dirs[i])))
			return true;
	return false;
}

struct darwin_mapped *darwin_mapped_new(void)
{
	return xcalloc(1, sizeof(struct darwin_mapped));
}

void darwin_mapped_free(struct darwin_mapped *dm)
{
	if (!dm)
		return;
	for (size_t i = 0; i < dm->n; i++)
		free(dm->f[i].path);
	free(dm->f);
	free(dm->r);
	free(dm);
}

void darwin_mapped_reset(struct darwin_mapped *dm)
{
	dm->have = dm->pending = false;
	dm->nread = 0;
	dm->next_ns = 0;
	dm->departed_pageins = dm->pageins_seen = 0;
}

void darwin_mapped_departed(struct darwin_mapped *dm, const struct darwin_proc *p, bool outside)
{
	if (outside)
		dm->departed_pageins += p->pageins;
}

static size_t file_of(struct darwin_mapped *dm, const struct darwin_region *rg)
{
	if (dm->last < dm->n && dm->f[dm->last].ino == rg->ino && dm->f[dm->last].dev == rg->dev)
		return dm->last;
	for (size_t i = 0; i < dm->n; i++)
		if (dm->f[i].ino == rg->ino && dm->f[i].dev == rg->dev)
			return dm->last = i;
	ALLOC_GROW(dm->f, dm->n + 1, dm->alloc);
	struct dfile *f = &dm->f[dm->n];
	memset(f, 0, sizeof(*f));
	f->dev = rg->dev;
	f->ino = rg->ino;
	f->path = xstrndup(rg->path, strnlen(rg->path, sizeof(rg->path)));
	f->system = system_path(f->path);
	struct stat sb;
	if (!f->system && !stat(f->path, &sb) && (uint64_t)sb.st_ino == f->ino)
		f->size = (uint64_t)sb.st_size;
	return dm->last = dm->n++;
}

/* Every region of pid: its file regions into this round's list. */
static void walk(struct darwin_mapped *dm, const struct darwin_api *api, pid_t pid)
{
	struct darwin_region rg;
	uint64_t at = 0;
	for (unsigned guard = 0; guard < 1000000 && !api->region(pid, at, &rg); guard++) {
		if (rg.ino && rg.path[0] == '/') {
			size_t fi = file_of(dm, &rg);
			dm->f[fi].exec |= rg.exec;
			ALLOC_GROW(dm->r, dm->nr + 1, dm->ralloc);
			dm->r[dm->nr++] = (struct dregion){ fi, rg.offset, rg.size, rg.resident };
		}
		if (rg.address + rg.size <= at)
			break; /* no progress: a misbehaving answer */
		at = rg.address + rg.size;
	}
}

static int cmp_region(const void *a, const void *b)
{
	const struct dregion *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

static void round_of(struct darwin_mapped *dm, const struct darwin_api *api, struct proctab *tab)
{
	int64_t t0 = mono_ns();
	dm->nr = 0;
	dm->nread = 0;
	for (size_t i = 0; i < tab->n; i++) {
		struct darwin_proc *p = (struct darwin_proc *)tab->p[i];
		if (p->super.zombie || p->unreadable)
			continue;
		dm->nread++;
		p->walked = p->resident;
		p->was_walked = true;
		walk(dm, api, p->super.pid);
	}
	if (dm->nr)
		qsort(dm->r, dm->nr, sizeof(*dm->r), cmp_region);
	for (size_t i = 0; i < dm->n; i++)
		dm->f[i].bytes = 0;
	for (size_t i = 0; i < dm->nr;) {
		/* the same region of a file in several processes: its most resident pages */
		size_t j = i;
		uint64_t most = 0;
		for (; j < dm->nr && !cmp_region(&dm->r[i], &dm->r[j]); j++)
			most = dm->r[j].resident > most ? dm->r[j].resident : most;
		dm->f[dm->r[i].file].bytes += most;
		i = j;
	}
	dm->bytes = 0;
	for (size_t i = 0; i < dm->n; i++)
		if (!dm->f[i].exec && !dm->f[i].system)
			dm->bytes += dm->f[i].bytes;
	dm->have = dm->tell = true;
	dm->pending = false;
	int64_t cost = mono_ns() - t0;
	dm->next_ns = cost < MAPPED_FREE_NS ? 0 : mono_ns() + MAPPED_COST_FACTOR * cost;
}

void darwin_mapped_sample(struct darwin_mapped *dm, const struct darwin_api *api,
			  struct proctab *tab, struct trace_sample *s)
{
	uint64_t pageins = dm->departed_pageins;
	size_t live = 0;
	bool moved = !dm->have;
	for (size_t i = 0; i < tab->n; i++) {
		struct darwin_proc *p = (struct darwin_proc *)tab->p[i];
		pageins += p->pageins;
		if (p->super.zombie || p->unreadable)
			continue;
		live++;
		moved |= !p->was_walked || p->walked != p->resident;
	}
	if (pageins > dm->pageins_seen)
		dm->pageins_seen = pageins;
	s->majflt = dm->pageins_seen > INT32_MAX ? INT32_MAX : (int)dm->pageins_seen;
	s->fields |= SF_MAJFLT;
	if (!api->region)
		return;
	dm->pending |= moved || live != dm->nread;
	if (dm->pending && mono_ns() >= dm->next_ns)
		round_of(dm, api, tab);
	if (dm->have) {
		s->mapped = dm->bytes;
		s->fields |= SF_MAPPED;
	}
}

int darwin_mapped_next_file(struct darwin_mapped *dm, const char **path, uint64_t *size)
{
	if (!dm->tell)
		return 0;
	while (dm->told < dm->n) {
		struct dfile *f = &dm->f[dm->told++];
		if (f->exec || f->system || !f->bytes || f->told)
			continue;
		f->told = true;
		*path = f->path;
		*size = f->size;
		return 1;
	}
	dm->told = 0;
	dm->tell = false;
	return 0;
}
