/* jsonw.h -- the JSON writer: command output (--json, --format json) and the
 * trace's records (traces/writer.c, compact)
 *
 * Reading JSON goes through jansson (traces/, runner/pipeline.c); writing
 * output needs only correct escaping and number formatting.
 *
 *   struct jsonw w = JSONW_INIT(&sb);
 *   jw_object_begin(&w);
 *   jw_key(&w, "mode"); jw_string(&w, "staged");
 *   jw_key(&w, "peak"); jw_u64(&w, 123);
 *   jw_object_end(&w);
 * Commas are inserted automatically; keys only inside objects.
 *
 * Why not jansson's json_dumps() (jansson reads every JSON stagebench takes
 * in): with jansson 2.14 (Debian 12) the output would change and lose
 * values. Measured with json_dumps(JSON_COMPACT):
 *   - json_real(0.1) writes 0.10000000000000001, 1.0/3 0.33333333333333331
 *     (%.17g; JSON_REAL_PRECISION(15) makes 1.0/3 0.333333333333333, which
 *     reads back as another double) and json_real(25) writes 25.0: here
 *     jw_double() writes the shortest text that reads back as the same
 *     double (0.1, 0.3333333333333333, 25), which the CLI goldens and the
 *     published tables hold;
 *   - json_int_t is signed: a byte count of 2^64-1 writes as -1 (jw_u64()
 *     writes every uint64_t);
 *   - json_string() refuses invalid UTF-8 (a stage name or path from the
 *     command line) and returns NULL: the value would be missing.
 * The writer is 150 lines with a unit test per case (tests/unit/test_common.c).
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
#define JSONW_INIT(sbp) { .out = (sbp), .pretty = true }
#define JSONW_COMPACT(sbp) { .out = (sbp), .pretty = false } /* one line, no spaces */

void jw_object_begin(struct jsonw *w);
void jw_object_end(struct jsonw *w);
void jw_array_begin(struct jsonw *w);
void jw_array_end(struct jsonw *w);
void jw_key(struct jsonw *w, const char *key);
void jw_string(struct jsonw *w, const char *s); /* NULL writes null */
void jw_u64(struct jsonw *w, uint64_t v);
void jw_i64(struct jsonw *w, int64_t v);
void jw_double(struct jsonw *w, double v); /* shortest that reads back; non-finite -> null */
/* v with a fixed number of decimals (0..9): the text of printf's "%.*f", built
 * from integers where rounding is unambiguous; non-finite -> null. The trace's
 * times: jw_fixed(w, t, 4). */
void jw_fixed(struct jsonw *w, double v, int decimals);
void jw_bool(struct jsonw *w, bool v);
void jw_null(struct jsonw *w);
void jw_raw(struct jsonw *w, const char *json); /* an already-encoded value */
/* Already-encoded members ("a":1,"b":[2]: a JSON object's body) added to the
 * open object; NULL or "" adds nothing. A trace record's extra keys as read. */
void jw_members(struct jsonw *w, const char *body);

/* The text jw_double() writes for v, for a caller that keeps it (the trace
 * writer formats a sample's level once per value). */
#define JW_DOUBLE_MAX 32
void jw_format_double(char buf[JW_DOUBLE_MAX], double v);

/* Append s to sb as a JSON string literal (with quotes). */
void json_escape(struct strbuf *sb, const char *s);

#endif
