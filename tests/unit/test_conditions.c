/* test_conditions.c -- compare's run conditions: cache states and slow runs (runner/conditions.h) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../runner/conditions.h"
#include "../../traces/trace.h"

Test(conditions, cache_state_words)
{
	enum cache_state c = CACHE_WARM;
	cr_assert_eq(cache_state_parse("cold", &c), 0);
	cr_assert_eq(c, CACHE_COLD);
	cr_assert_eq(cache_state_parse("as-is", &c), 0);
	cr_assert_eq(c, CACHE_AS_IS);
	cr_assert_eq(cache_state_parse("warm", &c), 0);
	cr_assert_eq(c, CACHE_WARM);
	cr_assert_eq(cache_state_parse("hot", &c), -1);
	cr_assert_str_eq(cache_state_name(CACHE_COLD), "cold");
}

static void put_file(const char *path, size_t n)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('x', f);
	cr_assert_eq(fclose(f), 0);
}

/* Every regular file under a directory counts, a missing path is counted apart;
 * warm and cold both look at each file; as-is at none. */
Test(conditions, files_and_directories_are_walked)
{
	char dir[] = "/tmp/sb-conditions-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *sub = xasprintf("%s/sub", dir), *a = xasprintf("%s/a", dir),
	     *b = xasprintf("%s/sub/b", dir), *none = xasprintf("%s/none", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	put_file(a, 1000);
	put_file(b, 234);
	char *paths[] = { dir, none, NULL };
	struct cache_report rep;
	for (int c = CACHE_WARM; c <= CACHE_COLD; c++) {
		cr_assert_eq(cache_state_apply((enum cache_state)c, paths, &rep), 0);
		cr_assert_eq(rep.files, 2, "state %d: %zu files", c, rep.files);
		cr_assert_eq(rep.bytes, 1234);
		cr_assert_eq(rep.missing, 1);
		cr_assert_eq(rep.failed, 0);
	}
	struct trace_fields f = TRACE_FIELDS_INIT;
	cache_state_fields(CACHE_COLD, &rep, &f);
	char *j = trace_fields_json(&f);
	cr_assert_str_eq(j, "\"cache_state\":\"cold\",\"cache_files\":2,\"cache_bytes\":1234");
	free(j);
	trace_fields_release(&f);
	cr_assert_eq(cache_state_apply(CACHE_AS_IS, paths, &rep), 0);
	cr_assert_eq(rep.files, 0);
	cache_state_fields(CACHE_AS_IS, &rep, &f);
	j = trace_fields_json(&f);
	cr_assert_str_eq(j, "\"cache_state\":\"as-is\"");
	free(j);
	trace_fields_release(&f);
	unlink(a);
	unlink(b);
	rmdir(sub);
	rmdir(dir);
	free(sub);
	free(a);
	free(b);
	free(none);
}

Test(conditions, a_much_slower_run_is_named)
{
	double median;
	double one[] = { 2.1 };
	cr_assert(run_much_slower(14.1, one, 1, &median)); /* the eager run 1 */
	cr_assert_float_eq(median, 2.1, 1e-12);
	double three[] = { 10.0, 9.0, 11.0 };
	cr_assert_not(run_much_slower(14.0, three, 3, &median)); /* 1.4 times */
	cr_assert_float_eq(median, 10.0, 1e-12);
	double two[] = { 1.0, 1.2 };
	cr_assert_not(run_much_slower(2.0, two, 2, &median)); /* 1.8 times, but under 1 s more */
	cr_assert(run_much_slower(2.3, two, 2, &median));
	cr_assert_not(run_much_slower(5.0, NULL, 0, &median)); /* nothing to compare with */
}

Test(conditions, memory_primed_is_touched_page_by_page)
{
	struct rusage before, after;
	cr_assert_eq(memory_prime(0), -1);
	cr_assert_eq(memory_prime(UINT64_MAX), -1);
	getrusage(RUSAGE_SELF, &before);
	double s = memory_prime(32u << 20);
	getrusage(RUSAGE_SELF, &after);
	cr_assert(s >= 0);
	/* every page of 32 MiB written: one fault each at least (4 KiB pages: 8192) */
	long pages = (32l << 20) / sysconf(_SC_PAGESIZE);
	cr_assert_geq(after.ru_minflt - before.ru_minflt, pages * 9 / 10,
		      "%ld faults for %ld pages", after.ru_minflt - before.ru_minflt, pages);
}
