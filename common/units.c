/* units.c -- sizes and durations in words, one rule (see units.h) */
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define MB 1048576.0
#define GB 1073741824.0

/* The figure without its unit, and the unit. */
#define NUM_BUF 40

static const char *size_parts(double bytes, enum units_style style, bool sign, char num[NUM_BUF])
{
	double mag = fabs(bytes);
	const char *plus = sign && bytes > 0 ? "+" : bytes < 0 ? "-" : "";
	if (mag == 0) {
		snprintf(num, NUM_BUF, "0.0");
		return "GB";
	}
	if (mag < 0.05 * MB) {
		snprintf(num, NUM_BUF, "%s<0.1", plus);
		return "MB";
	}
	if (mag < 9.95 * MB) {
		snprintf(num, NUM_BUF, "%s%.1f", plus, mag / MB);
		return "MB";
	}
	if (mag < 1023.5 * MB) {
		snprintf(num, NUM_BUF, "%s%.0f", plus, mag / MB);
		return "MB";
	}
	if (mag < GB) /* 1023.5 MB up: reads 1.0 GB */
		mag = GB;
	int digits = style == UNITS_FINE && mag < 10 * GB ? 2 : 1;
	snprintf(num, NUM_BUF, "%s%.*f", plus, digits, mag / GB);
	return "GB";
}

const char *units_size(double bytes, enum units_style style, bool sign, char out[UNITS_BUF])
{
	char num[NUM_BUF];
	const char *unit = size_parts(bytes, style, sign, num);
	snprintf(out, UNITS_BUF, "%s %s", num, unit);
	return out;
}

void units_add_size(struct strbuf *sb, double bytes, enum units_style style, bool sign)
{
	char buf[UNITS_BUF];
	strbuf_addstr(sb, units_size(bytes, style, sign, buf));
}

void units_add_size_range(struct strbuf *sb, double lo, double hi, enum units_style style)
{
	char a[NUM_BUF], b[NUM_BUF];
	const char *ua = size_parts(lo, style, false, a), *ub = size_parts(hi, style, false, b);
	if (lo == 0 && hi != 0)
		strbuf_addf(sb, "0 to %s %s", b, ub); /* not "0.0 GB to 80 MB" */
	else if (!strcmp(a, b) && !strcmp(ua, ub))
		strbuf_addf(sb, "%s %s", a, ua);
	else if (!strcmp(ua, ub))
		strbuf_addf(sb, "%s to %s %s", a, b, ua);
	else
		strbuf_addf(sb, "%s %s to %s %s", a, ua, b, ub);
}

void units_add_gb_label(struct strbuf *sb, double gb, bool unit)
{
	if (gb >= 1 && !unit)
		strbuf_addf(sb, "%.1f", gb);
	else
		units_add_size(sb, gb * GB, UNITS_COARSE, false);
}

const char *units_secs_num(double s, int digits, char out[UNITS_BUF])
{
	if (fabs(s) < 1e9) {
		snprintf(out, UNITS_BUF, "%.*f", digits, s);
	} else if (!isfinite(s)) {
		snprintf(out, UNITS_BUF, "%s", isnan(s) ? "nan" : s < 0 ? "-inf" : "inf");
	} else {
		int e = (int)floor(log10(fabs(s)));
		double m = s / pow(10, e);
		if (fabs(m) >= 9.95) { /* would round to "10.0" */
			m /= 10;
			e++;
		}
		snprintf(out, UNITS_BUF, "%.1fe%d", m, e);
	}
	return out;
}

const char *units_seconds(double s, enum units_style style, bool sign, char out[UNITS_BUF])
{
	char num[UNITS_BUF];
	int digits = style == UNITS_FINE && fabs(s) < 10 ? 2 : 1;
	snprintf(out, UNITS_BUF, "%s%s s", sign && s > 0 ? "+" : "", units_secs_num(s, digits, num));
	return out;
}

void units_add_seconds(struct strbuf *sb, double s, enum units_style style, bool sign)
{
	char buf[UNITS_BUF];
	strbuf_addstr(sb, units_seconds(s, style, sign, buf));
}

void units_add_seconds_range(struct strbuf *sb, double lo, double hi, enum units_style style)
{
	char a[UNITS_BUF], b[UNITS_BUF];
	units_seconds(lo, style, false, a);
	units_seconds(hi, style, false, b);
	if (!strcmp(a, b)) {
		strbuf_addstr(sb, a);
		return;
	}
	a[strlen(a) - 2] = '\0'; /* drop " s" */
	strbuf_addf(sb, "%s to %s", a, b);
}

void format_gb(uint64_t bytes, char out[32])
{
	char buf[UNITS_BUF];
	units_size((double)bytes, UNITS_COARSE, false, buf);
	size_t n = strnlen(buf, 31);
	memcpy(out, buf, n);
	out[n] = '\0';
}

void format_duration(int64_t ns, char out[32])
{
	double s = (double)ns / 1e9;
	if (s < 1)
		snprintf(out, 32, "%.0f ms", s * 1e3);
	else if (s < 120)
		snprintf(out, 32, "%.1f s", s);
	else
		snprintf(out, 32, "%d min %02d s", (int)(s / 60), (int)s % 60);
}
