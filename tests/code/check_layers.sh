#!/bin/sh
# check_layers.sh -- scripts/check-layers.py on a tiny tree of its own: one file per
# module in order passes; a circle of two files (link, include, Python import), a
# module that needs one above it, an allowed pair that is in no circle, a file of runner/
# that needs one of the wing above (runner/record/), by a symbol or an #include, and a
# listed arrow up that is none each fail, naming what they found; an allowed circle and
# a listed arrow up pass.  Run by `make code-checks`.
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
	"$CHECK" --root "$T" $ALLOW $UP "$T/build" >"$T/out" 2>"$T/err"
	rc=$?
	for w in "$@"; do
		grep -qF -- "$w" "$T/err" || { bad "$what: stderr lacks '$w' (rc $rc): $(cat "$T/err")"; return; }
	done
	[ "$rc" = "$want" ] && ok "$what" || bad "$what: exit $rc, want $want: $(cat "$T/err")"
}
ALLOW=
UP=

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

# the wings of runner/: runner/ < runner/record/ < runner/compare/
mkdir -p "$T/runner/record" "$T/runner/compare"
printf 'int rec_f(void);\nint rec_f(void) { return 1; }\n' >"$T/runner/record/rec.c"
printf 'int rec_f(void);\nint cmp_f(void);\nint cmp_f(void) { return rec_f(); }\n' >"$T/runner/compare/cmp.c"
build && expect 0 "a wing that needs the one below it passes"
printf 'int rec_f(void);\nint low_f(void);\nint low_f(void) { return rec_f(); }\n' >"$T/runner/low.c"
build && expect 1 "a file of runner/ that needs runner/record/ fails" \
	"arrow up between the wings of runner/ (link): runner/low.c (runner) -> runner/record/rec.c (runner/record): rec_f"
UP="--up runner/low.c,runner/record/rec.c"
expect 0 "a listed arrow up passes"
rm "$T/runner/low.c"
build && expect 1 "a listed arrow up that is none fails" \
	"runner/low.c -> runner/record/rec.c is listed in UP_ARROWS but is no arrow up"
UP=
printf 'int x;\n' >"$T/runner/compare/cmp.h"
printf '#include "../compare/cmp.h"\nint rec2_f(void);\nint rec2_f(void) { return 2; }\n' >"$T/runner/record/rec2.c"
build && expect 1 "runner/record/ including a header of runner/compare/ fails" \
	'arrow up between the wings of runner/ (include): runner/record/rec2.c (runner/record) -> runner/compare/cmp.h (runner/compare): #include "../compare/cmp.h" (line 1)'
rm -r "$T/runner/record" "$T/runner/compare"

build && expect 0 "the tree passes again"
[ "$fail" = 0 ] && echo "check-layers tests: all passed"
exit "$fail"
