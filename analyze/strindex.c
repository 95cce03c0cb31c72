/* strindex.c -- names to positions, open addressing (see strindex.h) */
#include "strindex.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

unsigned long long strindex_probes;

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

size_t strindex_find(const struct strindex *ix, strindex_key_fn key, const void *ctx, const char *name)
{
	if (!ix->cap || !name)
		return STRINDEX_NONE;
	for (size_t k = hash(name) & (ix->cap - 1);; k = (k + 1) & (ix->cap - 1)) {
		size_t v = ix->slot[k];
		strindex_probes++;
		if (!v)
			return STRINDEX_NONE;
		if (!strcmp(key(ctx, v - 1), name))
			return v - 1;
	}
}

static void put(size_t *slot, size_t cap, const char *name, size_t i)
{
	size_t k = hash(name) & (cap - 1);
	while (slot[k]) {
		k = (k + 1) & (cap - 1);
		strindex_probes++;
	}
	slot[k] = i + 1;
}

void strindex_add(struct strindex *ix, strindex_key_fn key, const void *ctx, size_t i)
{
	if (2 * (ix->n + 1) > ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 16;
		size_t *slot = xcalloc(cap, sizeof(*slot));
		for (size_t k = 0; k < ix->cap; k++)
			if (ix->slot[k])
				put(slot, cap, key(ctx, ix->slot[k] - 1), ix->slot[k] - 1);
		free(ix->slot);
		ix->slot = slot;
		ix->cap = cap;
	}
	put(ix->slot, ix->cap, key(ctx, i), i);
	ix->n++;
}

void strindex_release(struct strindex *ix)
{
	if (!ix)
		return;
	free(ix->slot);
	memset(ix, 0, sizeof(*ix));
}

const char *strindex_names_key(const void *names, size_t i)
{
	return ((const char *const *)names)[i];
}
