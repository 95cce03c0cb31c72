#!/bin/bash
# run.sh -- test scripts, E2E_JOBS of them at a time (default: the number of cores, at most 4),
# the longest first, each one's output printed in one piece when it ends, with its time; every
# script runs, and the run fails if one did, naming each that failed.
#   tests/e2e/run.sh [SCRIPT...]     (default: every tests/e2e/*.sh)
# Needs SB_BIN and SB_HELPERS, as each end-to-end script does. E2E_JOBS=1 runs them one after
# another. make test gives it the end-to-end scripts and tests/python/run.sh (pytest) at once.
# The scripts measure their own process trees, never the whole machine, so another script
# beside them is no harder on them than the two CPU-bound processes they are also run beside
# (scripts/repeat-test.sh --hogs 2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cores=$(nproc 2>/dev/null || echo 2)
[ "$cores" -gt 4 ] && cores=4
jobs=${E2E_JOBS:-$cores}
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: E2E_JOBS must be a whole number from 1, not '$jobs'" >&2; exit 2 ;; esac

# name SCRIPT: the script's path from the repository's root, when it is inside it
name() {
	local p
	p=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	echo "${p#"$root/"}"
}
given=()
if [ $# -gt 0 ]; then
	for s in "$@"; do given+=("$(name "$s")"); done
else
	for s in "$here"/*.sh; do [ "$s" = "$here/run.sh" ] || given+=("$(name "$s")"); done
fi
# The longest first (measured on a 2-core machine), so that the last to end is a short one;
# the order changes only the total time, never what a script sees.
scripts=()
for long in tests/e2e/qwen_real.sh tests/e2e/unseen.sh tests/python/run.sh tests/e2e/torchvision.sh \
	tests/e2e/report.sh tests/e2e/check.sh tests/e2e/journey.sh tests/e2e/sharers.sh \
	tests/e2e/learn.sh tests/e2e/browser.sh tests/e2e/compare.sh tests/e2e/bisect.sh; do
	case " ${given[*]} " in *" $long "*) scripts+=("$long") ;; esac
done
for s in "${given[@]}"; do
	case " ${scripts[*]} " in *" $s "*) ;; *) scripts+=("$s") ;; esac
done
cd "$root" || exit 2

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A script_of start_of log_of
failed=()
running=0
t_all=$(date +%s)

# finish PID RC: print the script's output and time, note a failure
finish() {
	local s=${script_of[$1]} took=$(($(date +%s) - start_of[$1]))
	echo "  RUN     $s $took s$([ "$2" -ne 0 ] && echo " (exit $2)")"
	cat "${log_of[$1]}"
	if [ "$2" -ne 0 ]; then
		failed+=("$s")
		# its failed checks again at the end, where a log's tail shows them
		grep -E '^(FAIL|not ok)' "${log_of[$1]}" | head -n 20 >>"$out/failures"
	fi
	running=$((running - 1))
}

for s in "${scripts[@]}"; do
	while [ "$running" -ge "$jobs" ]; do
		wait -n -p done_pid
		rc=$?
		finish "$done_pid" "$rc"
	done
	n=$((${n:-0} + 1))
	case $s in /*) cmd=$s ;; *) cmd=./$s ;; esac
	"$cmd" >"$out/$n.log" 2>&1 </dev/null &
	pid=$!
	log_of[$pid]=$out/$n.log
	script_of[$pid]=$s
	running=$((running + 1))
	start_of[$pid]=$(date +%s)
done
while [ "$running" -gt 0 ]; do
	wait -n -p done_pid
	rc=$?
	finish "$done_pid" "$rc"
done

echo "  RUN     ${#scripts[@]} scripts, $jobs at a time, $(($(date +%s) - t_all)) s"
if [ "${#failed[@]}" -gt 0 ]; then
	[ -s "$out/failures" ] && { echo "  the failed checks:"; sed 's/^/    /' "$out/failures"; }
	echo "FAIL run.sh: ${failed[*]}"
	exit 1
fi
