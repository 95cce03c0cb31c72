#!/bin/bash
# run.sh -- the end-to-end scripts, E2E_JOBS of them at a time (default: the number of cores,
# at most 4), each one's output printed in one piece when it ends, with its time; every script
# runs, and the run fails if one did, naming each that failed.
#   tests/e2e/run.sh [SCRIPT...]     (default: every tests/e2e/*.sh)
# Needs SB_BIN and SB_HELPERS, as each script does. E2E_JOBS=1 runs them one after another.
# The scripts measure their own process trees, never the whole machine, so two at once is no
# harder on them than the two CPU-bound processes they are also run beside
# (scripts/repeat-test.sh --hogs 2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cores=$(nproc 2>/dev/null || echo 2)
[ "$cores" -gt 4 ] && cores=4
jobs=${E2E_JOBS:-$cores}
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: E2E_JOBS must be a whole number from 1, not '$jobs'" >&2; exit 2 ;; esac

if [ $# -gt 0 ]; then
	scripts=("$@")
else
	# The longest first (measured on a 2-core machine), so that the last to end is a short one;
	# the order changes only the total time, never what a script sees.
	scripts=()
	for name in qwen_real unseen journey torchvision compare learn record shared browser; do
		[ -e "$here/$name.sh" ] && scripts+=("$here/$name.sh")
	done
	for s in "$here"/*.sh; do
		[ "$s" = "$here/run.sh" ] && continue
		case " ${scripts[*]} " in *" $s "*) continue ;; esac
		scripts+=("$s")
	done
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A script_of start_of log_of
failed=()
running=0
t_all=$(date +%s)

# finish PID RC: print the script's output and time, note a failure
finish() {
	local s=${script_of[$1]} took=$(($(date +%s) - start_of[$1]))
	echo "  E2E     ${s#"$here/../../"} $took s$([ "$2" -ne 0 ] && echo " (exit $2)")"
	cat "${log_of[$1]}"
	[ "$2" -eq 0 ] || failed+=("${s#"$here/../../"}")
	running=$((running - 1))
}

for s in "${scripts[@]}"; do
	while [ "$running" -ge "$jobs" ]; do
		wait -n -p done_pid
		rc=$?
		finish "$done_pid" "$rc"
	done
	n=$((${n:-0} + 1))
	"$s" >"$out/$n.log" 2>&1 </dev/null &
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

echo "  E2E     ${#scripts[@]} scripts, $jobs at a time, $(($(date +%s) - t_all)) s"
if [ "${#failed[@]}" -gt 0 ]; then
	echo "FAIL e2e: ${failed[*]}"
	exit 1
fi
