#!/bin/sh
# check_duplicate_names.sh -- scripts/check-duplicate-names.py on a tiny tree of its own:
# distinct names pass; two static functions of one name in two modules fail, naming
# both places; so does a static inline of a header against a function of a .c; one
# definition in each OS directory passes; two in one OS directory fail.  Run by
# `make code-checks`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CHECK=$here/../../scripts/check-duplicate-names.py
. "$here/check.inc"

# expect RC WHAT [WORD...]: the check exits RC and its stderr holds every WORD
expect() { expect_check "$CHECK" "$@"; }

mkdir -p "$T/plots" "$T/analyze" "$T/traces" "$T/platform/linux" "$T/platform/darwin" "$T/tests"
printf 'static int memory_legend(void)\n{\n\treturn 1;\n}\n' >"$T/plots/memory.c"
printf 'static int stages_legend(void)\n{\n\treturn 2;\n}\n' >"$T/plots/stages.c"
printf 'static int legend(void) { return 3; }\n' >"$T/tests/test_plot.c"
expect 0 "distinct names pass (tests/ is not read)"

printf '/* x */\nstatic int legend(void)\n{\n\treturn 1;\n}\n' >"$T/plots/memory.c"
printf 'static int legend(void) { return 2; }\n' >"$T/analyze/history.c"
expect 1 "two statics of one name fail" "legend is defined 2 times: analyze/history.c:1 plots/memory.c:2"
rm "$T/analyze/history.c"
expect 0 "one left passes"

printf 'static inline int skip_ws(int c) { return c == 32; }\n' >"$T/traces/reader_int.h"
printf 'int skip_ws(int c);\nint skip_ws(int c)\n{\n\treturn c;\n}\n' >"$T/analyze/npy.c"
expect 1 "a header's static inline and a .c's function of one name fail" \
	"skip_ws is defined 2 times: analyze/npy.c:2 traces/reader_int.h:1"
rm "$T/traces/reader_int.h" "$T/analyze/npy.c"

printf 'int pl_wait(int p) { return p; }\n' >"$T/platform/linux/procfs.c"
printf 'int pl_wait(int p) { return -p; }\n' >"$T/platform/darwin/sys.c"
expect 0 "one definition per OS directory passes"
printf 'static int pl_wait(int p) { return p + 1; }\n' >"$T/platform/linux/psi.c"
expect 1 "two in one OS directory fail" "pl_wait is defined 3 times"
rm "$T/platform/linux/psi.c"
printf 'static int pl_wait(int p) { return p + 2; }\n' >"$T/traces/wait.c"
expect 1 "a platform name outside platform/ fails" "pl_wait is defined 3 times"
rm "$T/traces/wait.c"

expect 0 "the tree passes again"
[ "$fail" = 0 ] && echo "check-duplicate-names tests: all passed"
exit "$fail"
