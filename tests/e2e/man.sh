#!/bin/sh
# man.sh -- the man pages made from the --help texts (scripts/help2man.sh): one page per command
# `stagebench --help` lists plus stagebench(1), each rendered by `man -l` without a warning, each
# option its --help names on its page, and `make install` putting them where `man` finds them,
# with the completions beside them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SB=${SB_BIN:-$root/stagebench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL man: $*"; fail=1; }
command -v man >/dev/null 2>&1 || { echo "FAIL man: man is not installed (Debian package man-db)"; exit 1; }

"$root/scripts/help2man.sh" "$SB" "$tmp/man" || bad "help2man.sh failed"
commands=$("$SB" --help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }')
[ -n "$commands" ] || bad "'stagebench --help' lists no commands"
for name in stagebench $(for c in $commands; do echo "stagebench-$c"; done); do
	page=$tmp/man/$name.1
	[ -s "$page" ] || { bad "$name.1 missing"; continue; }
	MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$tmp/$name.txt" 2>"$tmp/$name.err" ||
		bad "man -l $name.1 failed"
	[ -s "$tmp/$name.err" ] && bad "$name.1 renders with warnings: $(cat "$tmp/$name.err")"
	grep -q "^NAME" "$tmp/$name.txt" && grep -q "^SYNOPSIS" "$tmp/$name.txt" ||
		bad "$name.1 has no NAME or SYNOPSIS"
	c=${name#stagebench}
	c=${c#-}
	# every option the --help names (the long ones, and the short ones of an option list)
	for o in $("$SB" ${c:+"$c"} --help | grep -oE '(^|[ [,])--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^[ [,]//' | sort -u); do
		grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$page" || bad "$name.1 lacks $o"
	done
done
grep -q "stagebench-check(1)" "$tmp/stagebench.txt" || bad "stagebench(1) does not list stagebench-check(1)"
grep -q "^EXIT STATUS" "$tmp/stagebench-check.txt" || bad "stagebench-check(1) has no EXIT STATUS"

# make install: the pages where man finds them, and the completions
make -s -C "$root" install INSTALL_BIN="$SB" DESTDIR="$tmp/dest" PREFIX=/usr >"$tmp/install.log" 2>&1 ||
	bad "make install failed: $(tail -n 5 "$tmp/install.log")"
MANWIDTH=80 man -M "$tmp/dest/usr/share/man" stagebench-check >"$tmp/check.txt" 2>&1 &&
	grep -q -- "--baseline" "$tmp/check.txt" || bad "man stagebench-check after make install: $(head -n 3 "$tmp/check.txt")"
[ -f "$tmp/dest/usr/share/bash-completion/completions/stagebench" ] || bad "bash completion not installed"
[ -n "$(find "$tmp/dest/usr/share/zsh" -name _stagebench 2>/dev/null)" ] || bad "zsh completion not installed"
[ $fail = 0 ] && echo "man: ok"
exit $fail
