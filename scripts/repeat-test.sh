#!/bin/sh
# repeat-test.sh -- does the suite pass every time? Run it N times in a row on a fresh clone.
#
# Usage: scripts/repeat-test.sh [-n N] [--hogs H] [--keep] [-- MAKE-ARGUMENT...]
#
# Clones this repository's HEAD into a new directory (uncommitted changes are not tested),
# then runs `make MAKE-ARGUMENT...` there N times in a row (default 10 times `make test`),
# with H CPU-bound processes (`while :; do :; done`, default 0) running beside each run for
# its whole length. Each run's output goes to a log; a failing run's last lines are printed.
# Ends with "repeat: P of N passed"; exit 0 when every run passed, 1 otherwise, 2 usage.
# Examples:
#   scripts/repeat-test.sh                                  make test, 10 times
#   scripts/repeat-test.sh --hogs 2 -- SANITIZE=address,undefined e2e-test
#                                                           the end-to-end tests beside two hogs
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
n=10 hogs=0 keep=0
usage() { echo "usage: $0 [-n N] [--hogs H] [--keep] [-- MAKE-ARGUMENT...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || usage; n=$2; shift ;;
	--hogs) [ $# -ge 2 ] || usage; hogs=$2; shift ;;
	--keep) keep=1 ;;
	--) shift; break ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
	shift
done
case $n$hogs in *[!0-9]*) usage ;; esac
[ "$n" -ge 1 ] || usage
[ $# -gt 0 ] || set -- test

work=$(mktemp -d "${TMPDIR:-/tmp}/stagebench-repeat.XXXXXX")
hog_pids=
stop_hogs() {
	for p in $hog_pids; do kill "$p" 2>/dev/null || true; done
	for p in $hog_pids; do wait "$p" 2>/dev/null || true; done
	hog_pids=
}
cleanup() {
	stop_hogs
	if [ $keep = 1 ]; then echo "repeat: kept $work"; else rm -rf "$work/clone"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git clone -q "$repo" "$work/clone"
head=$(git -C "$work/clone" rev-parse --short HEAD)
echo "repeat: make $* in a fresh clone of $head, $n times, $hogs CPU hog(s) beside; logs in $work"
passed=0 i=0
while [ $i -lt "$n" ]; do
	i=$((i + 1))
	h=0
	while [ $h -lt "$hogs" ]; do
		sh -c 'while :; do :; done' &
		hog_pids="$hog_pids $!"
		h=$((h + 1))
	done
	t0=$(date +%s)
	if make -C "$work/clone" "$@" >"$work/run-$i.log" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	stop_hogs
	dt=$(($(date +%s) - t0))
	if [ $rc = 0 ]; then
		passed=$((passed + 1))
		echo "repeat: run $i of $n: passed in ${dt} s (load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?))"
	else
		echo "repeat: run $i of $n: FAILED (exit $rc) after ${dt} s; log $work/run-$i.log:"
		tail -n 25 "$work/run-$i.log" | sed 's/^/    /'
	fi
done
echo "repeat: $passed of $n passed"
[ $passed = "$n" ]
