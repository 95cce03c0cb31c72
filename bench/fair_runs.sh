#!/bin/sh
# fair_runs.sh -- BENCHMARKS.md item 10: the demo's eager loading across the runs of one compare,
# with memory primed before each run (compare's default) and without (--no-prime), alternated.
#
# Usage: SB_BIN=build/stagebench bench/fair_runs.sh [ROUNDS] [WORK]   (defaults 3, /tmp/stagebench-fair)
# Each round runs `compare eager staged --seed 7` on a fresh checkpoint cache (prepare builds it),
# once primed and once not, and prints one line per compare: every run's loading time (the
# load events' seconds, from `analyze`) and wall time, the eager runs' max/min loading, and the
# load average when it ended.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sb=${SB_BIN:-$here/../stagebench}
rounds=${1:-3}
work=${2:-/tmp/stagebench-fair}
mkdir -p "$work"
loading() { "$sb" analyze "$1" 2>/dev/null | sed -n 's/^  loads .* in \([0-9.]*\) s,.*/\1/p'; }
wall() { "$sb" analyze "$1" 2>/dev/null | sed -n 's/^  wall time *\([0-9.]*\) s/\1/p'; }
i=1
while [ "$i" -le "$rounds" ]; do
	for how in primed not-primed; do
		d=$work/$how-$i
		rm -rf "$d"
		flag=
		[ "$how" = not-primed ] && flag=--no-prime
		# shellcheck disable=SC2086
		"$sb" compare eager staged --seed 7 $flag -q --cache "$d/cache" --out "$d/out" >/dev/null 2>&1 ||
			{ echo "fair_runs: compare failed in $d/out" >&2; exit 1; }
		line="$how round $i:"
		for r in eager-1 eager-2 staged-1 staged-2; do
			line="$line $r loading $(loading "$d/out/$r.trace.jsonl.zst") s (wall $(wall "$d/out/$r.trace.jsonl.zst") s);"
		done
		e1=$(loading "$d/out/eager-1.trace.jsonl.zst") e2=$(loading "$d/out/eager-2.trace.jsonl.zst")
		ratio=$(awk -v a="$e1" -v b="$e2" 'BEGIN { if (a < b) { t = a; a = b; b = t } printf "%.2f", a / b }')
		echo "$line eager max/min $ratio; load average $(cut -d' ' -f1 /proc/loadavg)"
		rm -rf "$d/cache"
	done
	i=$((i + 1))
done
