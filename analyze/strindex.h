/* strindex.h -- a hash index from names to positions in an array the caller owns
 *
 * The analysis, the table and check look stages up by name once per run, per
 * stage and per metric; a linear search there made time grow with the square
 * of the number of distinct stages (100k stages: 48 s). The index maps a name to
 * the position of the element holding it: the caller's array keeps the names,
 * the index keeps positions (open addressing, FNV-1a, load factor <= 1/2), and
 * `key(ctx, i)` gives the name at position i. Positions must not move while
 * indexed (an array that grows by realloc is fine: positions, not pointers).
 */
#ifndef SB_STRINDEX_H
#define SB_STRINDEX_H

#include <stddef.h>
#include <stdint.h>

typedef const char *(*strindex_key_fn)(const void *ctx, size_t i);

struct strindex {
	size_t *slot;   /* position + 1; 0 = empty */
	size_t cap;     /* a power of two, or 0 */
	size_t n;
};
#define STRINDEX_INIT { NULL, 0, 0 }

#define STRINDEX_NONE SIZE_MAX

/* The position holding NAME, or STRINDEX_NONE. */
size_t strindex_find(const struct strindex *ix, strindex_key_fn key, const void *ctx, const char *name);
/* Index position I (its name must not be indexed yet). */
void strindex_add(struct strindex *ix, strindex_key_fn key, const void *ctx, size_t i);
void strindex_release(struct strindex *ix);

/* Slots visited by every lookup and insertion so far (tests: the work grows
 * with the number of names, not its square). */
extern unsigned long long strindex_probes;

/* For a plain array of names: key(names, i) = names[i]. */
const char *strindex_names_key(const void *names, size_t i);

#endif
