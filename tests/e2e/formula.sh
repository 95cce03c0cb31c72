#!/bin/sh
# formula.sh -- Formula/stagebench.rb (Homebrew; brew cannot run here): Ruby parses it, its make
# call sets the same variables as the macOS cross build's (scripts/cross-macos.sh) but for the
# compiler and the build directory, and the install directories it passes are the Makefile's.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
f=$root/Formula/stagebench.rb
fail=0
bad() { echo "FAIL formula: $*"; fail=1; }
command -v ruby >/dev/null 2>&1 || { echo "FAIL formula: ruby is not installed (scripts/deps.sh test)"; exit 1; }
ruby -c "$f" >/dev/null || bad "ruby -c: the formula does not parse"

# the NAME= words of the formula's args array
formula_vars=$(sed -n '/args = \[/,/\]/p' "$f" | grep -oE '"[A-Z_]+=' | tr -d '"=' | sort -u)
[ -n "$formula_vars" ] || bad "no make variables found in the formula's args"
cross=$root/scripts/cross-macos.sh
if [ -f "$cross" ]; then
	# the NAME= words of the cross build's make call, but CC and BUILD (zig, the output directory)
	cross_vars=$(sed -n '/^[[:space:]]*make -C/,/[^\\]$/p' "$cross" | grep -oE '(^|[[:space:]"])[A-Z_]+=' |
		tr -d ' \t"=' | grep -vxE 'CC|BUILD' | sort -u)
	[ -n "$cross_vars" ] || bad "no make call found in scripts/cross-macos.sh"
	[ "$formula_vars" = "$cross_vars" ] ||
		bad "make variables differ: formula '$(echo $formula_vars)', cross build '$(echo $cross_vars)'"
else
	echo "formula: scripts/cross-macos.sh absent, the make call compared with the Makefile's Darwin branch only"
fi
grep -q 'ifeq ($(UNAME_S),Darwin)' "$root/Makefile" || bad "the Makefile has no Darwin branch for UNAME_S=Darwin"
for v in $(grep -oE '"[A-Z_]+=#\{' "$f" | tr -d '"=#{' | sort -u); do
	grep -qE "^$v[[:space:]]*\?=" "$root/Makefile" || bad "the formula sets $v, which the Makefile does not take"
done
[ $fail = 0 ] && echo "formula: ok"
exit $fail
