#!/bin/sh
# completions.sh -- the completions' data from the option tables of the built binary.
#
# Usage: scripts/completions.sh STAGEBENCH OUTDIR
#
# Writes OUTDIR/stagebench.bash and OUTDIR/_stagebench: the files of completions/ with the lines
# between "# BEGIN stagebench --complete-spec" and "# END stagebench --complete-spec" replaced by
#   _stagebench_spec='...'   (the output of `STAGEBENCH --complete-spec`: cli/opt.h)
# `make completions` writes them in place; tests/e2e/completion.sh writes them elsewhere and
# fails when they differ from the checked-in ones.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 STAGEBENCH OUTDIR" >&2; exit 2; }
sb=$1 out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
spec=$("$sb" --complete-spec) || { echo "completions: '$sb --complete-spec' failed" >&2; exit 3; }
case $spec in
*"'"* | *\\*) echo "completions: '$sb --complete-spec' holds a quote or a backslash" >&2; exit 3 ;;
esac
mkdir -p "$out"
for f in stagebench.bash _stagebench; do
	SPEC=$spec awk '
		/^# BEGIN stagebench --complete-spec/ { print; print "_stagebench_spec=\047" ENVIRON["SPEC"] "\047"; skip = 1; found = 1; next }
		/^# END stagebench --complete-spec/ { skip = 0 }
		!skip { print }
		END { if (!found || skip) { print "completions: no BEGIN/END block in " FILENAME > "/dev/stderr"; exit 3 } }
	' "$root/completions/$f" >"$out/$f.tmp"
	mv "$out/$f.tmp" "$out/$f"
done
