#!/bin/sh
# check_layers.sh -- scripts/check-layers.py on a tiny tree of its own: one file per
# module in order passes; a circle of two files (link, include, Python import), a
# module that needs one above it and an allowed pair that is in no circle each fail,
# naming what they found; an allowed circle passes.  Run by `make code-checks`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CHECK=$here/../../scripts/check-layers.py
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

# One file per module, each calling the one below it.
prev=
for m in common platform traces meter analyze plots runner cli; do
	mkdir -p "$T/$m"
	if [ -n "$prev" ]; then
		printf 'int %s_f(void);\nint %s_f(void) { return %s_f() + 1; }\n' "$prev" "$m" "$prev" >"$T/$m/$m.c"
	else
		printf 'int common_f(void);\nint common_f(void) { return 1; }\n' >"$T/$m/$m.c"
	fi
	prev=$m
done
mkdir -p "$T/probe/stagebench_probe"
printf '' >"$T/probe/stagebench_probe/__init__.py"
printf 'from .q import g\n' >"$T/probe/stagebench_probe/p.py"
printf 'def g():\n    return 1\n' >"$T/probe/stagebench_probe/q.py"

build() { # compile every .c of the tree into $T/build
	rm -rf "$T/build"
	for f in $(cd "$T" && find . -name build -prune -o -name '*.c' -print); do
		mkdir -p "$T/build/$(dirname "$f")"
		$CC -c -I"$T" -o "$T/build/${f%.c}.o" "$T/$f" || return 1
	done
}
# expect RC WHAT [WORD...]: the check exits RC and its stderr holds every WORD
expect() {
	want=$1 what=$2
	shift 2
	"$CHECK" --root "$T" $ALLOW "$T/build" >"$T/out" 2>"$T/err"
	rc=$?
	for w in "$@"; do
		grep -qF -- "$w" "$T/err" || { bad "$what: stderr lacks '$w' (rc $rc): $(cat "$T/err")"; return; }
	done
	[ "$rc" = "$want" ] && ok "$what" || bad "$what: exit $rc, want $want: $(cat "$T/err")"
}
ALLOW=

build && expect 0 "modules in order, no circle"

# a circle of two objects: a.c uses b.c's b_f, b.c uses a.c's a_f
printf 'int b_f(void);\nint a_f(void);\nint a_f(void) { return b_f(); }\n' >"$T/common/a.c"
printf 'int a_f(void);\nint b_f(void);\nint b_f(void) { return a_f() + 1; }\n' >"$T/common/b.c"
build && expect 1 "a link circle fails" "2 files in a circle (link): common/a.c common/b.c" \
	"common/a.c -> common/b.c: b_f" "common/b.c -> common/a.c: a_f"

ALLOW="--allow common/a.c,common/b.c"
expect 0 "an allowed link circle passes"
ALLOW="--allow common/a.c,common/b.c --allow common/a.c,common/common.c"
expect 1 "an allowed pair in no circle fails" \
	"common/a.c and common/common.c are listed in ALLOWED_CIRCLES but are in no circle"
ALLOW=
rm "$T/common/a.c" "$T/common/b.c"

# headers that include each other
printf '#include "y.h"\n' >"$T/traces/x.h"
printf '#include "traces/x.h"\n' >"$T/traces/y.h"
build && expect 1 "an include circle fails" "2 files in a circle (include): traces/x.h traces/y.h" \
	'traces/x.h -> traces/y.h: #include "y.h" (line 1)' \
	'traces/y.h -> traces/x.h: #include "traces/x.h" (line 1)'
rm "$T/traces/x.h" "$T/traces/y.h"

# Python modules that import each other, one of them inside a function
printf 'def g():\n    from .p import f\n    return f\n' >"$T/probe/stagebench_probe/q.py"
printf 'from .q import g\n\n\ndef f():\n    return g\n' >"$T/probe/stagebench_probe/p.py"
build && expect 1 "an import circle fails" \
	"2 files in a circle (import): probe/stagebench_probe/p.py probe/stagebench_probe/q.py" \
	"probe/stagebench_probe/q.py -> probe/stagebench_probe/p.py: import of p (line 2)"
printf 'def g():\n    return 1\n' >"$T/probe/stagebench_probe/q.py"

# a module that needs one above it
printf 'int cli_f(void);\nint up_f(void);\nint up_f(void) { return cli_f(); }\n' >"$T/platform/up.c"
build && expect 1 "a module needing one above it fails" "platform -> cli: 1 symbol(s): cli_f"
rm "$T/platform/up.c"

build && expect 0 "the tree passes again"
[ "$fail" = 0 ] && echo "check-layers tests: all passed"
exit "$fail"
