/* jsonw.h -- a small JSON writer for command output (--json, --format json)
 *
 * Reading JSON is the trace module's business (jansson lives only in traces/);
 * writing output needs only correct escaping and number formatting.
 *
 *   struct jsonw w = JSONW_INIT(&sb);
 *   jw_object_begin(&w);
 *   jw_key(&w, "mode"); jw_string(&w, "staged");
 *   jw_key(&w, "peak"); jw_u64(&w, 123);
 *   jw_object_end(&w);
 * Commas are inserted automatically; keys only inside objects.
 */
#ifndef SB_JSONW_H
#define SB_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include "util.h"

struct jsonw {
	struct strbuf *out;
	int depth;
	bool need_comma[64];
	bool after_key;
	bool pretty; /* two-space indentation when true */
};
#define JSONW_INIT(sbp) { (sbp), 0, { false }, false, true }

void jw_object_begin(struct jsonw *w);
void jw_object_end(struct jsonw *w);
void jw_array_begin(struct jsonw *w);
void jw_array_end(struct jsonw *w);
void jw_key(struct jsonw *w, const char *key);
void jw_string(struct jsonw *w, const char *s); /* NULL writes null */
void jw_u64(struct jsonw *w, uint64_t v);
void jw_i64(struct jsonw *w, int64_t v);
void jw_double(struct jsonw *w, double v); /* %.17g trimmed; non-finite -> null */
void jw_bool(struct jsonw *w, bool v);
void jw_null(struct jsonw *w);
void jw_raw(struct jsonw *w, const char *json); /* an already-encoded value */

/* Append s to sb as a JSON string literal (with quotes). */
void json_escape(struct strbuf *sb, const char *s);

#endif
