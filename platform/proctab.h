/* proctab.h -- the table of every process seen in a metered tree
 *
 * The neutral process entry (struct mproc) and its table, shared by the meter
 * backends of every OS (platform/linux/meter.c, platform/darwin/meter.c): a
 * backend's own entry extends struct mproc (its first member), as htop's
 * LinuxProcess extends Process. Platform code, below the meter module: it
 * needs nothing but common/.
 */
#ifndef SB_PROCTAB_H
#define SB_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Every pid seen in the tree, root first, in discovery order. Entries are
 * allocated one by one at the backend's size (an extension of struct mproc),
 * so a pointer to an entry stays valid until the entry is removed. Entries
 * are removed when the process is gone (reaped); order is preserved. */
struct mproc {
	pid_t pid;
	uint64_t hwm;     /* last high-water mark read (bytes), 0 = unknown */
	bool zombie;      /* exited, not yet reaped */
	bool stale_exit;  /* a zombie at a peak reset or when first seen: what it
			   * left at its exit belongs to an earlier window */
};

struct proctab {
	struct mproc **p;
	size_t n, alloc;
	size_t entry_size; /* sizeof the backend's entry, >= sizeof(struct mproc) */
	pid_t *pids; /* meter_pids() view, rebuilt by proctab_pids() */
	size_t pids_alloc;
	pid_t *foreign; /* recorder children that are not part of the tree */
	size_t nforeign, foreign_alloc;
	unsigned gen; /* moves whenever a pid is added, removed or made foreign */
};

void proctab_init(struct proctab *t, size_t entry_size);
/* Calls close_fn (may be NULL) on every entry, frees the entries and arrays;
 * the table stays usable (same entry size). */
void proctab_release(struct proctab *t, void (*close_fn)(struct mproc *));
/* Index of pid, or -1. */
long proctab_find(const struct proctab *t, pid_t pid);
/* Appends pid (a zeroed entry of entry_size bytes) and returns it. */
struct mproc *proctab_add(struct proctab *t, pid_t pid);
/* Removes entry i, keeping the order of the others. */
void proctab_remove(struct proctab *t, size_t i, void (*close_fn)(struct mproc *));
const pid_t *proctab_pids(struct proctab *t, size_t *n);
void proctab_add_foreign(struct proctab *t, pid_t pid);
bool proctab_is_foreign(const struct proctab *t, pid_t pid);

#endif
