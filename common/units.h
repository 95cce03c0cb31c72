/* units.h -- every size and duration stagebench prints, formatted by one rule
 *
 * Sizes (GB = 2^30 bytes, MB = 2^20 bytes):
 *   exactly 0          "0.0 GB"
 *   under 10 MB        one decimal of MB, "3.2 MB" ("<0.1 MB" below 0.05 MB)
 *   10 MB to 1 GB      whole MB, "410 MB"
 *   1 GB and above     UNITS_COARSE: one decimal, "20.4 GB" (tables, summaries,
 *                      analyze, chart labels);
 *                      UNITS_FINE: two decimals under 10 GB, "2.13 GB", one
 *                      above (check, whose changes are often a few percent)
 * So a size or a difference of 64 MB or more never prints as "0.0 GB", and a
 * size under 1 GB keeps its figure (0.4 vs 0.5 GB reads "410 MB" vs "512 MB").
 * Every size of 1 GB or more prints as it did before this module, so the
 * published tables (all above 2 GB) come out cell for cell.
 *
 * Differences are the same rule on the magnitude, with a sign when asked
 * ("+307 MB", "-1.25 GB").
 *
 * Ranges: "X to Y GB" with one unit when both ends have it, "410 MB to 1.2 GB"
 * otherwise, and one figure when both ends print the same.
 *
 * Durations (seconds): UNITS_COARSE one decimal "12.6 s"; UNITS_FINE two
 * decimals under 10 s, one above. format_duration() is the progress-line form
 * ("350 ms", "1.2 s", "2 min 05 s").
 */
#ifndef SB_UNITS_H
#define SB_UNITS_H

#include <stdbool.h>
#include <stdint.h>

struct strbuf;

#define UNITS_BUF 64

enum units_style { UNITS_COARSE = 0, UNITS_FINE = 1 };

/* One size (bytes, may be negative for a difference) into out. */
const char *units_size(double bytes, enum units_style style, bool sign, char out[UNITS_BUF]);
void units_add_size(struct strbuf *sb, double bytes, enum units_style style, bool sign);
void units_add_size_range(struct strbuf *sb, double lo, double hi, enum units_style style);

/* A chart label for a size given in GB (2^30 bytes): the rule above; with
 * unit false, "18.6" without " GB" from 1 GB up (where the axis says GB). */
void units_add_gb_label(struct strbuf *sb, double gb, bool unit);

/* A number of seconds with DIGITS decimals, no unit: "12.6"; from 1e9 s on (31
 * years: only a damaged trace says so) in a bounded form, "1.0e300", never
 * every digit. */
const char *units_secs_num(double s, int digits, char out[UNITS_BUF]);
/* One duration in seconds. */
const char *units_seconds(double s, enum units_style style, bool sign, char out[UNITS_BUF]);
void units_add_seconds(struct strbuf *sb, double s, enum units_style style, bool sign);
void units_add_seconds_range(struct strbuf *sb, double lo, double hi, enum units_style style);

/* Bytes as a size, coarse style ("20.4 GB", "410 MB", "0.0 GB"). */
void format_gb(uint64_t bytes, char out[32]);
/* Progress lines: "350 ms", "1.2 s", "2 min 05 s". */
void format_duration(int64_t ns, char out[32]);

#endif
