/* test_units.c -- common/units: the one rule for sizes and durations */
#include <criterion/criterion.h>
#include <string.h>

#include "common/units.h"
#include "common/util.h"

static const char *size(double bytes, enum units_style st, bool sign)
{
	static char buf[UNITS_BUF];
	return units_size(bytes, st, sign, buf);
}

#define MIB 1048576.0
#define GIB 1073741824.0

Test(units, sizes_from_one_gb_up_are_unchanged)
{
	cr_assert_str_eq(size(21904620339.0, UNITS_COARSE, false), "20.4 GB");
	cr_assert_str_eq(size(2.13 * GIB, UNITS_COARSE, false), "2.1 GB");
	cr_assert_str_eq(size(2.13 * GIB, UNITS_FINE, false), "2.13 GB");
	cr_assert_str_eq(size(12.34 * GIB, UNITS_FINE, false), "12.3 GB");
	cr_assert_str_eq(size(0, UNITS_COARSE, false), "0.0 GB");
	cr_assert_str_eq(size(1023.7 * MIB, UNITS_COARSE, false), "1.0 GB");
}

Test(units, sixty_four_mib_and_more_never_reads_zero)
{
	/* every size or difference from 64 MiB to 1 GiB, coarse and fine, with or without sign */
	for (double b = 64 * MIB; b < GIB; b += 3.7 * MIB)
		for (int st = 0; st < 2; st++)
			for (int sign = 0; sign < 2; sign++)
				for (int neg = 0; neg < 2; neg++) {
					const char *s = size(neg ? -b : b, (enum units_style)st, sign);
					cr_assert(!strstr(s, "0.0 GB") && !strstr(s, "0.00 GB") &&
						  strstr(s, " MB"), "%f -> %s", b, s);
				}
	cr_assert_str_eq(size(64 * MIB, UNITS_FINE, false), "64 MB");
	cr_assert_str_eq(size(0.4 * GIB, UNITS_COARSE, false), "410 MB");
	cr_assert_str_eq(size(0.5 * GIB, UNITS_COARSE, false), "512 MB");
	cr_assert_str_eq(size(300 * MIB, UNITS_FINE, true), "+300 MB");
	cr_assert_str_eq(size(-300 * MIB, UNITS_FINE, true), "-300 MB");
	cr_assert_str_eq(size(3.25 * MIB, UNITS_COARSE, false), "3.2 MB");
	cr_assert_str_eq(size(1000, UNITS_COARSE, false), "<0.1 MB");
}

Test(units, ranges)
{
	struct strbuf sb = STRBUF_INIT;
	units_add_size_range(&sb, 12230000000.0, 12240000000.0, UNITS_COARSE);
	cr_assert_str_eq(sb.buf, "11.4 GB");
	strbuf_reset(&sb);
	units_add_size_range(&sb, 0.4 * GIB, 0.5 * GIB, UNITS_COARSE);
	cr_assert_str_eq(sb.buf, "410 to 512 MB");
	strbuf_reset(&sb);
	units_add_size_range(&sb, 0.5 * GIB, 1.2 * GIB, UNITS_COARSE);
	cr_assert_str_eq(sb.buf, "512 MB to 1.2 GB");
	strbuf_reset(&sb);
	/* a range from zero takes the high end's unit: no "0.0 GB to 80 MB" */
	units_add_size_range(&sb, 0, 80 * 1048576.0, UNITS_COARSE);
	cr_assert_str_eq(sb.buf, "0 to 80 MB");
	strbuf_reset(&sb);
	units_add_size_range(&sb, 0, 2.5 * GIB, UNITS_COARSE);
	cr_assert_str_eq(sb.buf, "0 to 2.5 GB");
	strbuf_reset(&sb);
	units_add_size_range(&sb, 0, 0, UNITS_COARSE);
	cr_assert_str_eq(sb.buf, "0.0 GB");
	strbuf_reset(&sb);
	units_add_seconds_range(&sb, 12.6, 13.0, UNITS_COARSE);
	cr_assert_str_eq(sb.buf, "12.6 to 13.0 s");
	strbuf_reset(&sb);
	units_add_seconds(&sb, -8, UNITS_FINE, true);
	cr_assert_str_eq(sb.buf, "-8.00 s");
	strbuf_release(&sb);
}

/* A damaged trace's huge time prints bounded, with its unit, never 300 digits. */
Test(units, huge_seconds_bounded)
{
	char b[UNITS_BUF];
	cr_assert_str_eq(units_seconds(1e300, UNITS_COARSE, false, b), "1.0e300 s");
	cr_assert_str_eq(units_seconds(-2.5e12, UNITS_FINE, true, b), "-2.5e12 s");
	cr_assert_str_eq(units_seconds(9.96e15, UNITS_COARSE, false, b), "1.0e16 s");
	cr_assert_str_eq(units_seconds(1.7e308, UNITS_COARSE, true, b), "+1.7e308 s");
	cr_assert_str_eq(units_secs_num(999999999.0, 1, b), "999999999.0");
	cr_assert_str_eq(units_secs_num(12.625, 3, b), "12.625");
}
