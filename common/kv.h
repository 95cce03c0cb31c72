/* kv.h -- a small ordered list of string pairs (pipeline defaults and
 * environments, placeholder values); linear lookup, keys unique */
#ifndef SB_KV_H
#define SB_KV_H

#include <stddef.h>

struct kv {
	char *key;
	char *value;
};

struct kv_list {
	struct kv *items;
	size_t n, alloc;
};

void kv_set(struct kv_list *l, const char *key, const char *value); /* replaces */
const char *kv_get(const struct kv_list *l, const char *key);
void kv_release(struct kv_list *l);

#endif
