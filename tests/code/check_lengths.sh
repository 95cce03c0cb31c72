#!/bin/sh
# check_lengths.sh -- scripts/check-function-length.py and scripts/check-file-length.py on a
# tiny tree of their own: functions of 100 lines pass and of 101 fail, in C, Python (a
# method too) and shell (a script known by its #! line too); a file of 700 lines passes and
# of 701 fails, whether .c, .py, .sh or an extensionless script; tests/ is not read.  Run by
# `make code-checks`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
FUNC=$here/../../scripts/check-function-length.py
FILE=$here/../../scripts/check-file-length.py
. "$here/check.inc"

# expect CHECK RC WHAT [WORD...]: CHECK exits RC on the tree and its stderr holds every WORD
expect() { expect_check "$@"; }

# body N PREFIX: N lines "PREFIX<i>"
body() { i=1; while [ "$i" -le "$1" ]; do echo "$2$i"; i=$((i + 1)); done; }

# A function of N lines in each language: the definition line, N-2 lines, the close.
c_fn() { { printf 'int %s(void)\n{\n' "$2"; body $(($1 - 3)) '	x += '; echo '}'; } | sed 's/[0-9]$/&;/'; }
py_fn() { { echo "def $2():"; body $(($1 - 2)) '    x = '; echo '    return x'; } }
sh_fn() { { echo "$2() {"; body $(($1 - 2)) '	: '; echo '}'; } }

mkdir -p "$T/analyze" "$T/bench" "$T/scripts" "$T/.ci" "$T/tests"
c_fn 100 table_build >"$T/analyze/table.c"
py_fn 100 item1 >"$T/bench/items.py"
sh_fn 100 page >"$T/scripts/man.sh"
{ echo '#!/bin/sh'; sh_fn 100 step; } >"$T/.ci/run"
c_fn 300 long_in_tests >"$T/tests/test_x.c"
expect "$FUNC" 0 "functions of 100 lines pass (tests/ is not read)"

c_fn 101 table_build >"$T/analyze/table.c"
expect "$FUNC" 1 "a C function of 101 lines fails" "analyze/table.c:1: table_build is 101 lines"
c_fn 100 table_build >"$T/analyze/table.c"

py_fn 101 item1 >"$T/bench/items.py"
expect "$FUNC" 1 "a Python function of 101 lines fails" "bench/items.py:1: item1 is 101 lines"
{ echo 'class Item:'; py_fn 101 render | sed 's/^/    /'; } >"$T/bench/items.py"
expect "$FUNC" 1 "a Python method of 101 lines fails" "bench/items.py:2: render is 101 lines"
py_fn 100 item1 >"$T/bench/items.py"

sh_fn 101 page >"$T/scripts/man.sh"
expect "$FUNC" 1 "a shell function of 101 lines fails" "scripts/man.sh:1: page is 101 lines"
{ echo 'page() { cat; }'; sh_fn 100 page2; echo 'x() ('; body 99 '	: '; echo ')'; } >"$T/scripts/man.sh"
expect "$FUNC" 1 "a one-line function, one of 100 and a ( ) body of 101: the last fails" \
	"scripts/man.sh:102: x is 101 lines"
sh_fn 100 page >"$T/scripts/man.sh"

{ echo '#!/bin/sh'; sh_fn 101 step; } >"$T/.ci/run"
expect "$FUNC" 1 "a shell function of 101 lines in a script known by its #! line fails" \
	".ci/run:2: step is 101 lines"
{ echo '#!/bin/sh'; sh_fn 100 step; } >"$T/.ci/run"
expect "$FUNC" 0 "all of 100 lines again pass"

body 700 '# ' >"$T/scripts/long.sh"
body 700 '# ' >"$T/bench/long.py"
{ echo '#!/usr/bin/python3'; body 699 '# '; } >"$T/scripts/long-tool"
body 900 '# ' >"$T/tests/long.sh"
body 900 'x' >"$T/bench/notes.txt"
expect "$FILE" 0 "files of 700 lines pass (tests/ and other kinds of file are not read)"
for f in scripts/long.sh bench/long.py analyze/long.c; do
	body 701 '// ' >"$T/$f"
	expect "$FILE" 1 "a file of 701 lines fails: $f" "$f: 701 lines (over 700)"
	body 700 '// ' >"$T/$f"
done
{ echo '#!/usr/bin/python3'; body 700 '# '; } >"$T/scripts/long-tool"
expect "$FILE" 1 "an extensionless script of 701 lines (#!/usr/bin/python3) fails" \
	"scripts/long-tool: 701 lines (over 700)"
rm "$T/scripts/long-tool"
expect "$FILE" 0 "the tree passes again"

[ "$fail" = 0 ] && echo "check-lengths tests: all passed"
exit "$fail"
