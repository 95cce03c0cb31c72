/* kv.c -- a small ordered key-value list of strings (see kv.h) */
#include "kv.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void kv_set(struct kv_list *l, const char *key, const char *value)
{
	for (size_t i = 0; i < l->n; i++) {
		if (!strcmp(l->items[i].key, key)) {
			free(l->items[i].value);
			l->items[i].value = xstrdup(value);
			return;
		}
	}
	ALLOC_GROW(l->items, l->n + 1, l->alloc);
	l->items[l->n].key = xstrdup(key);
	l->items[l->n].value = xstrdup(value);
	l->n++;
}

const char *kv_get(const struct kv_list *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].key, key))
			return l->items[i].value;
	return NULL;
}

void kv_release(struct kv_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].key);
		free(l->items[i].value);
	}
	free(l->items);
	l->items = NULL;
	l->n = l->alloc = 0;
}
