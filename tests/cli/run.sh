#!/bin/sh
# run.sh -- golden CLI tests (zstd tests/cli-tests style).
# Each tests/cli/NAME.sh is run from tests/cli with $SB (the binary), $FIXTURES
# (tests/fixtures) and $TMP (a fresh directory). Its stdout must equal
# NAME.expected byte for byte, and its exit status the number on a line
# "# exit: N" in the script (0 when absent). Set UPDATE=1 to rewrite .expected.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SB=${SB_BIN:-$root/stagebench}
FIXTURES=${FIXTURES:-$root/tests/fixtures}
export SB FIXTURES
fail=0 n=0
for t in "$here"/*.sh; do
	name=$(basename "$t" .sh)
	[ "$name" = run ] && continue
	n=$((n + 1))
	want_rc=$(sed -n 's/^# exit: \([0-9]*\)$/\1/p' "$t" | head -n 1)
	want_rc=${want_rc:-0}
	TMP=$(mktemp -d)
	export TMP
	out=$(cd "$here" && sh "$t" 2>"$TMP/.stderr"; echo "rc=$?")
	rc=${out##*rc=}
	out=${out%rc=*}
	printf '%s' "$out" >"$TMP/.stdout"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$TMP/.stdout" "$here/$name.expected"
	fi
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL $name: exit $rc, expected $want_rc"; sed 's/^/  stderr: /' "$TMP/.stderr"; fail=$((fail + 1))
	elif ! cmp -s "$TMP/.stdout" "$here/$name.expected"; then
		echo "FAIL $name: stdout differs from $name.expected"
		diff -u "$here/$name.expected" "$TMP/.stdout" | head -n 40
		fail=$((fail + 1))
	fi
	rm -rf "$TMP"
done
echo "cli tests: $((n - fail)) of $n passed"
[ "$fail" = 0 ]
