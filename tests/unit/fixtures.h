/* fixtures.h -- where the tests find the real stageload traces
 *
 * tests/fixtures/stageload/ holds the real stageload traces, unchanged
 * (MIT, from nefayran/stageload; see its README). $FIXTURES overrides; the
 * Makefile sets it to the repository's copy, so the tests run from any clone.
 */
#ifndef SB_TEST_FIXTURES_H
#define SB_TEST_FIXTURES_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../common/util.h"

static inline const char *fixtures_dir(void)
{
	static const char *const tries[] = { "tests/fixtures", "../fixtures", "../../tests/fixtures" };
	const char *env = getenv("FIXTURES");
	if (env && *env)
		return env;
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		char *p = xasprintf("%s/stageload/README.md", tries[i]);
		bool ok = access(p, R_OK) == 0;
		free(p);
		if (ok)
			return tries[i];
	}
	cr_assert_fail("stageload fixtures not found: set FIXTURES to tests/fixtures");
	return NULL;
}

#endif
