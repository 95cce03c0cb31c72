/* parse.c -- strict parsers for sizes, durations, percentages and numbers */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int parse_double(const char *s, double *out)
{
	char *end;
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_i64(const char *s, int64_t *out)
{
	char *end;
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_int(const char *s, int *out)
{
	int64_t v;
	if (parse_i64(s, &v) || v < -2147483647 - 1 || v > 2147483647)
		return -1;
	*out = (int)v;
	return 0;
}

/* Split "1.5GiB" into a non-negative number and its unit suffix. */
static int number_unit(const char *s, double *num, const char **unit)
{
	char *end;
	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	/* decimal only: strtod also takes hex ("0x10", "0x1p4") */
	for (const char *p = s; p < end; p++)
		if (*p == 'x' || *p == 'X' || *p == 'p' || *p == 'P')
			return -1;
	*num = v;
	*unit = end;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const struct { const char *name; double mult; } units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 1024.0 }, { "kb", 1024.0 }, { "kib", 1024.0 },
		{ "m", 1048576.0 }, { "mb", 1048576.0 }, { "mib", 1048576.0 },
		{ "g", 1073741824.0 }, { "gb", 1073741824.0 }, { "gib", 1073741824.0 },
		{ "t", 1099511627776.0 }, { "tb", 1099511627776.0 }, { "tib", 1099511627776.0 },
	};
	double v;
	const char *unit;
	if (number_unit(s, &v, &unit))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(unit, units[i].name))
			continue;
		if (strspn(s, "0123456789") == (size_t)(unit - s)) {
			/* a whole number: exact integer arithmetic, up to 2^64 - 1 */
			uint64_t n, b;
			errno = 0;
			n = strtoull(s, NULL, 10);
			if (errno || __builtin_mul_overflow(n, (uint64_t)units[i].mult, &b))
				return -1;
			*bytes = b;
			return 0;
		}
		double b = v * units[i].mult;
		if (b >= 18446744073709551616.0)
			return -1;
		/* llround() is signed: above 2^63 the double is integral anyway */
		*bytes = b < 9223372036854775808.0 ? (uint64_t)llround(b) : (uint64_t)b;
		return 0;
	}
	return -1;
}

int parse_duration(const char *s, int64_t *ns)
{
	static const struct { const char *name; double mult; } units[] = {
		{ "", 1e9 }, { "s", 1e9 }, { "sec", 1e9 }, { "ms", 1e6 }, { "us", 1e3 },
		{ "ns", 1 }, { "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
	};
	double v;
	const char *unit;
	if (number_unit(s, &v, &unit))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].name))
			continue;
		double d = v * units[i].mult;
		if (d >= 9.2e18)
			return -1;
		*ns = (int64_t)llround(d);
		return 0;
	}
	return -1;
}

/* The one percentage grammar: a plain decimal number (digits with at most one
 * point: no sign, space, exponent or hex), 0 to 100, then "%" (optional
 * unless need_sign). */
static int percent_of(const char *s, bool need_sign, double *pct)
{
	if (!s)
		return -1;
	size_t digits = strspn(s, "0123456789"), frac = 0;
	const char *p = s + digits;
	if (*p == '.') {
		frac = strspn(p + 1, "0123456789");
		p += 1 + frac;
	}
	if (!digits && !frac)
		return -1;
	if (strcmp(p, "%") && (need_sign || *p))
		return -1;
	double v = strtod(s, NULL); /* digits and a point only: nothing strtod reads otherwise */
	if (!(v >= 0 && v <= 100))
		return -1;
	*pct = v;
	return 0;
}

int parse_percent(const char *s, double *pct)
{
	return percent_of(s, false, pct);
}

int parse_size_or_percent(const char *s, uint64_t *bytes, double *pct, int *is_pct)
{
	size_t n = s ? strlen(s) : 0;
	if (n && s[n - 1] == '%') {
		if (percent_of(s, true, pct))
			return -1;
		*is_pct = 1;
		return 0;
	}
	*is_pct = 0;
	return parse_size(s, bytes);
}
