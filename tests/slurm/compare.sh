#!/bin/bash
# compare.sh -- a demo comparison as a Slurm job array on a real single-node
# cluster (tests/slurm/cluster.sh), merged, checked against `compare` on one
# machine; a task killed by Slurm; runs from two hosts kept apart.
#
# Needs root and Debian's slurmctld, slurmd, munge (scripts/deps.sh slurm).
# Run by `make test-slurm` (and .ci/run). SB_BIN: the stagebench binary.
set -u
cd "$(dirname "$0")/../.."
SB=${SB_BIN:-$PWD/stagebench}
T=$(mktemp -d /tmp/sb-slurm.XXXXXX)
fails=0
ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; fails=$((fails + 1)); }
check() { # check "what" STATUS: STATUS 0 passes
	if [ "$2" = 0 ]; then ok "$1"; else bad "$1"; fi
}
cleanup() {
	tests/slurm/cluster.sh down "$T/cluster" 2>/dev/null
	[ $fails = 0 ] && rm -rf "$T"
}
trap cleanup EXIT

tests/slurm/cluster.sh up "$T/cluster" || { echo "  FAIL the cluster did not start"; exit 1; }
export SLURM_CONF=$T/cluster/slurm.conf
ARGS=(--size tiny --reps 2 --seed 7)

# 1. The whole comparison as an array; the merge waited for.
scripts/slurm-compare --wait --sbatch=--exclusive --stagebench "$SB" -- \
	"${ARGS[@]}" --out "$T/array" >"$T/array.log" 2>&1
rc=$?
check "the array and its merge exit 0 (got $rc; $T/array.log)" $([ $rc = 0 ]; echo $?)
grep -q "^array [0-9]* (4 tasks)" "$T/array.log"
check "four array tasks submitted" $?
for r in eager-1 staged-1 eager-2 staged-2; do
	[ -s "$T/array/runs.d/$r.json" ] && [ -s "$T/array/$r.trace.jsonl.zst" ]
	check "task $r left its trace and runs.d entry" $?
done
order=$(grep -o '"trace": "[^"]*"' "$T/array/runs.json" | tr '\n' ' ')
[ "$order" = '"trace": "eager-1.trace.jsonl.zst" "trace": "staged-1.trace.jsonl.zst" "trace": "eager-2.trace.jsonl.zst" "trace": "staged-2.trace.jsonl.zst" ' ]
check "runs.json: every run once, in plan order ($order)" $?
traces=("$T"/array/{eager-1,staged-1,eager-2,staged-2}.trace.jsonl.zst)
"$SB" table "${traces[@]}" >"$T/table.md" 2>/dev/null && cmp -s "$T/table.md" "$T/array/table.md"
check "merged table.md is what 'stagebench table' makes of the same traces" $?
"$SB" latents "$T/array" >"$T/latents.md" 2>/dev/null && cmp -s "$T/latents.md" "$T/array/latents.md"
check "merged latents.md is what 'stagebench latents' makes of the same runs" $?
[ -s "$T/array/memory.png" ] && [ -s "$T/array/stages.png" ]
check "the merge drew the charts" $?

# The same comparison on one machine: same rows, same latent verdict.
"$SB" compare "${ARGS[@]}" --out "$T/local" -q >"$T/local.log" 2>&1
check "compare on one machine exits 0" $?
rows() { cut -s -d'|' -f2 "$1" | grep -v -- '---'; }
[ "$(rows "$T/array/table.md")" = "$(rows "$T/local/table.md")" ]
check "merged and local table.md have the same rows" $?
[ "$(grep '^Result:' "$T/array/latents.md")" = "$(grep '^Result:' "$T/local/latents.md")" ] &&
	grep -q '^Result: every pair identical or within noise' "$T/array/latents.md"
check "merged and local latents give the same verdict" $?

# 2. Tasks that Slurm's engine ends: task 1 (staged-1) loses its recorder to
# SIGKILL (as on a node failure: no end record, no runs.d entry); in a second
# array, task 1 is cancelled (SIGTERM, as on preemption or a time limit).
killed_run() { # DIR HOW: submit, wait for task 1's trace, end it HOW, wait for the merge
	scripts/slurm-compare --wait --sbatch=--exclusive --stagebench "$SB" -- \
		"${ARGS[@]}" --reps 1 --out "$1" >"$1.log" 2>&1 &
	submitter=$!
	# Handshake: task 1's recorder has written its trace.
	i=0
	until [ -s "$1/staged-1.trace.jsonl.zst" ] || [ $i -ge 2400 ]; do sleep 0.05; i=$((i + 1)); done
	if [ "$2" = kill ]; then
		pkill -KILL -f -- "--out $1 --task 1"
	else
		array=$(grep -o '^array [0-9]*' "$1.log" | cut -d' ' -f2)
		scancel "${array}_1"
	fi
	wait $submitter
}
killed_run "$T/lost" kill
rc=$?
check "a task whose recorder was killed makes the merge exit 1 (got $rc)" $([ $rc = 1 ]; echo $?)
grep -q '"mode": "staged", "run": 1, "trace": "staged-1.trace.jsonl.zst", "stopped_by": "lost", "why": "its task left no result' "$T/lost/runs.json"
check "runs.json says the killed run was lost, and why" $?
grep -q 'staged-1: its task left no result' "$T/lost/slurm/merge.out"
check "the merge names the lost run" $?
grep -q '^| export | [0-9.]* MB | ' "$T/lost/table.md"
check "the merge still wrote the table of the run that finished" $?
grep -q '^| staged-1 | recorder died (no end record) in setup: its task left no result' "$T/lost/slurm/merge.out"
check "the run summary says how the lost run ended" $?

killed_run "$T/cancelled" cancel
rc=$?
check "a cancelled task makes the merge exit 1 (got $rc)" $([ $rc = 1 ]; echo $?)
grep -q '"stopped_by": "signal", "signal": 15, "why": "' "$T/cancelled/runs.json"
check "runs.json records the cancelled run as stopped by signal 15, with why" $?
grep -q 'staged-1: stopped by signal 15' "$T/cancelled/slurm/merge.out"
check "the merge names the cancelled run" $?

# 3. Runs from two hosts: the table keeps them apart and says so.
mkdir -p "$T/hosts"
for r in eager-1 staged-1 eager-2 staged-2; do
	host=node-a
	case $r in *-2) host=node-b ;; esac
	zstd -qdc "$T/array/$r.trace.jsonl.zst" |
		sed -e "1s/\"host\":{\"name\":\"[^\"]*\"/\"host\":{\"name\":\"$host\"/" |
		zstd -q -o "$T/hosts/$r.trace.jsonl.zst"
done
"$SB" table "$T"/hosts/*.trace.jsonl.zst >"$T/hosts.md" 2>&1
grep -q 'node-a' "$T/hosts.md" && grep -q 'node-b' "$T/hosts.md"
check "two hosts: the table names both" $?
grep -q 'kept apart' "$T/hosts.md"
check "two hosts: the table says it kept their runs apart" $?

if [ $fails = 0 ]; then
	echo "slurm tests: all passed"
else
	echo "slurm tests: $fails failed (scratch kept in $T)"
	exit 1
fi
