/* parse.h -- strict parsers for sizes, durations, percentages and numbers
 *
 * Every parser rejects empty input, trailing junk, negatives and overflow,
 * returns 0 on success and -1 on failure (without printing: the caller names
 * the option). Never atoi.
 */
#ifndef SB_PARSE_H
#define SB_PARSE_H

#include <stdint.h>

/* "8G", "512M", "1.5GiB", "300MiB", "4096", "10k" -> bytes. Units are binary
 * (K = KiB = 1024); "B" optional; case-insensitive. */
int parse_size(const char *s, uint64_t *bytes);

/* "500ms", "1m", "2s", "1.5s", "30m", "1h", "250us", bare number = seconds. */
int parse_duration(const char *s, int64_t *ns);

/* "40", "40%", "12.5%" -> 0..100: the one percentage grammar of every
 * option, a plain decimal number (no sign, space, exponent or hex: "0x10%",
 * " 50%", "1e-300%" are refused). */
int parse_percent(const char *s, double *pct);

/* Size or percent: "5%" (parse_percent's grammar, the "%" required) sets
 * *is_pct and *pct, "512M" sets *bytes. */
int parse_size_or_percent(const char *s, uint64_t *bytes, double *pct, int *is_pct);

int parse_u64(const char *s, uint64_t *out);
int parse_i64(const char *s, int64_t *out);
int parse_int(const char *s, int *out);
int parse_double(const char *s, double *out); /* finite only */

/* Sizes and durations for humans (format_gb, format_duration) live in units.h. */
#include "units.h"

#endif
