/* fields.c -- a record's typed extra keys (trace.h) and how they are written */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "../common/jsonw.h"
#include "../common/util.h"

static struct trace_field *field_add(struct trace_fields *f, const char *key,
				     enum trace_value type)
{
	ALLOC_GROW(f->items, f->n + 1, f->alloc);
	struct trace_field *x = &f->items[f->n++];
	x->key = key;
	x->type = type;
	x->v.u = 0;
	return x;
}

void trace_fields_string(struct trace_fields *f, const char *key, const char *s)
{
	if (s)
		field_add(f, key, TV_STRING)->v.s = s;
	else
		field_add(f, key, TV_NULL);
}

void trace_fields_bool(struct trace_fields *f, const char *key, bool b)
{
	field_add(f, key, TV_BOOL)->v.b = b;
}

void trace_fields_u64(struct trace_fields *f, const char *key, uint64_t u)
{
	field_add(f, key, TV_U64)->v.u = u;
}

void trace_fields_double(struct trace_fields *f, const char *key, double d)
{
	field_add(f, key, TV_DOUBLE)->v.d = d;
}

void trace_fields_null(struct trace_fields *f, const char *key)
{
	field_add(f, key, TV_NULL);
}

void trace_fields_object(struct trace_fields *f, const char *key)
{
	field_add(f, key, TV_OBJECT);
}

void trace_fields_end(struct trace_fields *f)
{
	field_add(f, NULL, TV_END);
}

void trace_fields_append(struct trace_fields *f, const struct trace_fields *more)
{
	for (size_t i = 0; more && i < more->n; i++)
		*field_add(f, NULL, TV_END) = more->items[i];
}

void trace_fields_release(struct trace_fields *f)
{
	free(f->items);
	f->items = NULL;
	f->n = f->alloc = 0;
}

void trace_fields_write(struct jsonw *w, const struct trace_fields *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct trace_field *x = &f->items[i];
		if (x->type == TV_END) {
			jw_object_end(w);
			continue;
		}
		jw_key(w, x->key);
		switch (x->type) {
		case TV_STRING: jw_string(w, x->v.s); break;
		case TV_BOOL: jw_bool(w, x->v.b); break;
		case TV_U64: jw_u64(w, x->v.u); break;
		case TV_DOUBLE: jw_double(w, x->v.d); break;
		case TV_NULL: jw_null(w); break;
		case TV_OBJECT: jw_object_begin(w); break;
		case TV_END: break;
		}
	}
}

char *trace_fields_json(const struct trace_fields *f)
{
	struct strbuf sb = STRBUF_INIT;
	struct jsonw w = JSONW_COMPACT(&sb);
	jw_object_begin(&w);
	size_t open = sb.len;
	trace_fields_write(&w, f);
	jw_object_end(&w);
	char *s = strbuf_detach(&sb);
	size_t body = strlen(s) - open - 1; /* without the braces */
	memmove(s, s + open, body);
	s[body] = '\0';
	return s;
}
