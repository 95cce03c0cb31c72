/* rundir.c -- list a run directory's traces in run order (see rundir.h) */
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/util.h"

static const char *const trace_suffixes[] = { ".trace.jsonl.zst", ".trace.jsonl" };

char *rundir_trace_stem(const char *base)
{
	for (size_t i = 0; i < sizeof(trace_suffixes) / sizeof(trace_suffixes[0]); i++) {
		size_t n = strlen(base), k = strlen(trace_suffixes[i]);
		if (n > k && str_ends_with(base, trace_suffixes[i]))
			return xstrndup(base, n - k);
	}
	return NULL;
}

char *rundir_mode_of_stem(const char *stem)
{
	const char *dash = strrchr(stem, '-');
	if (!dash || dash == stem || !dash[1])
		return NULL;
	for (const char *p = dash + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return NULL;
	return xstrndup(stem, (size_t)(dash - stem));
}

struct sortable {
	struct rundir_trace t;
	size_t order; /* index in runs.json, SIZE_MAX when not listed */
};

/* Names in natural order ("run-2" before "run-10"), as strverscmp (GNU-only)
 * orders them: digit runs compare by value; of equal values, the one with
 * more leading zeros comes first. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *za = a, *zb = b;
			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			size_t la = 0, lb = 0;
			while (a[la] >= '0' && a[la] <= '9')
				la++;
			while (b[lb] >= '0' && b[lb] <= '9')
				lb++;
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			if (a - za != b - zb)
				return a - za > b - zb ? -1 : 1;
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int sortable_cmp(const void *x, const void *y)
{
	const struct sortable *a = x, *b = y;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return natural_cmp(a->t.base, b->t.base);
}

int rundir_open(const char *dir, struct rundir *out)
{
	struct stat st;
	if (stat(dir, &st))
		return error("cannot read run directory '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return error("'%s' is not a directory (a run directory of traces is expected)", dir);
	DIR *d = opendir(dir);
	if (!d)
		return error("cannot list '%s': %s", dir, strerror(errno));
	out->dir = xstrdup(dir);
	char *runs_path = xasprintf("%s/runs.json", dir);
	int rrc = runs_read(runs_path, &out->runs);
	free(runs_path);
	if (rrc < 0) {
		closedir(d);
		return -1;
	}

	struct sortable *found = NULL;
	size_t nfound = 0, alloc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *stem = rundir_trace_stem(de->d_name);
		if (!stem)
			continue;
		ALLOC_GROW(found, nfound + 1, alloc);
		struct sortable *f = &found[nfound++];
		f->t.path = xasprintf("%s/%s", dir, de->d_name);
		f->t.base = xstrdup(de->d_name);
		f->t.stem = stem;
		f->t.entry = runs_find(&out->runs, de->d_name);
		f->order = f->t.entry ? (size_t)(f->t.entry - out->runs.items) : SIZE_MAX;
	}
	closedir(d);
	if (nfound)
		qsort(found, nfound, sizeof(*found), sortable_cmp);
	for (size_t i = 0; i < nfound; i++) {
		ALLOC_GROW(out->traces, out->n + 1, out->alloc);
		out->traces[out->n++] = found[i].t;
	}
	free(found);
	return (int)out->n;
}

void rundir_release(struct rundir *rd)
{
	if (!rd)
		return;
	free(rd->dir);
	runs_release(&rd->runs);
	for (size_t i = 0; i < rd->n; i++) {
		free(rd->traces[i].path);
		free(rd->traces[i].base);
		free(rd->traces[i].stem);
	}
	free(rd->traces);
	memset(rd, 0, sizeof(*rd));
}
