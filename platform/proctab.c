/* proctab.c -- the table of every process seen in the metered tree */
#include "proctab.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void proctab_init(struct proctab *t, size_t entry_size)
{
	memset(t, 0, sizeof(*t));
	t->entry_size = entry_size < sizeof(struct mproc) ? sizeof(struct mproc) : entry_size;
}

void proctab_release(struct proctab *t, void (*close_fn)(struct mproc *))
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		if (close_fn)
			close_fn(t->p[i]);
		free(t->p[i]);
	}
	free(t->p);
	free(t->pids);
	free(t->foreign);
	unsigned gen = t->gen;
	proctab_init(t, t->entry_size);
	t->gen = gen + 1;
}

long proctab_find(const struct proctab *t, pid_t pid)
{
	/* Linear: trees are small (tens of processes) and this stays in cache. */
	for (size_t i = 0; i < t->n; i++)
		if (t->p[i]->pid == pid)
			return (long)i;
	return -1;
}

struct mproc *proctab_add(struct proctab *t, pid_t pid)
{
	struct mproc *p;
	if (!t->entry_size)
		BUG("proctab_add on a table never initialised");
	ALLOC_GROW(t->p, t->n + 1, t->alloc);
	p = xcalloc(1, t->entry_size);
	p->pid = pid;
	t->p[t->n++] = p;
	t->gen++;
	return p;
}

void proctab_remove(struct proctab *t, size_t i, void (*close_fn)(struct mproc *))
{
	if (i >= t->n)
		BUG("proctab_remove: index %zu of %zu", i, t->n);
	if (close_fn)
		close_fn(t->p[i]);
	free(t->p[i]);
	memmove(&t->p[i], &t->p[i + 1], (t->n - i - 1) * sizeof(t->p[0]));
	t->n--;
	t->gen++;
}

const pid_t *proctab_pids(struct proctab *t, size_t *n)
{
	ALLOC_GROW(t->pids, t->n ? t->n : 1, t->pids_alloc);
	for (size_t i = 0; i < t->n; i++)
		t->pids[i] = t->p[i]->pid;
	*n = t->n;
	return t->pids;
}

void proctab_add_foreign(struct proctab *t, pid_t pid)
{
	if (proctab_is_foreign(t, pid))
		return;
	ALLOC_GROW(t->foreign, t->nforeign + 1, t->foreign_alloc);
	t->foreign[t->nforeign++] = pid;
	t->gen++;
}

bool proctab_is_foreign(const struct proctab *t, pid_t pid)
{
	for (size_t i = 0; i < t->nforeign; i++)
		if (t->foreign[i] == pid)
			return true;
	return false;
}
