#!/bin/bash
# nodes.sh -- a comparison over a real Slurm cluster of three nodes on this machine
# (tests/slurm/cluster.sh up DIR 3: each node a network, UTS, PID and mount namespace with its
# own hostname, address, slurmd and local disk; slurmctld and munged beside them; the
# repository and --out on the filesystem they share). A demo comparison of 12 runs spread over
# the nodes, its checkpoint cache node-local, merged by host; then faults: a node drained
# before a campaign, a node that dies in the middle of a run, a task cancelled by scancel.
#
# Needs root, ip and unshare, Debian's slurmctld, slurmd, munge (scripts/deps.sh slurm).
# Run by `make test-slurm`. SB_BIN: the stagebench binary; SB_HELPERS: its helpers.
set -u
cd "$(dirname "$0")/../.."
SB=${SB_BIN:-$PWD/stagebench}
E=${SB_HELPERS:-$PWD/build/helpers}/eatmem
T=$(mktemp -d /tmp/sb-nodes.XXXXXX)
C=$T/cluster
fails=0
ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; fails=$((fails + 1)); }
check() { # check "what" STATUS: STATUS 0 passes
	if [ "$2" = 0 ]; then ok "$1"; else bad "$1"; fi
}
cleanup() {
	tests/slurm/cluster.sh down "$C" 2>/dev/null
	[ $fails = 0 ] && [ -z "${KEEP_TMP:-}" ] && rm -rf "$T"
}
trap cleanup EXIT
# wait_for COMMAND...: poll a handshake, at most ~60 s
wait_for() { i=0; until "$@"; do [ $i -ge 1200 ] && return 1; sleep 0.05; i=$((i + 1)); done; }
host_of() { zstd -qdc "$1" | head -n 1 | sed -n 's/.*"host":{"name":"\([^"]*\)".*/\1/p'; }

tests/slurm/cluster.sh up "$C" 3 || { echo "  FAIL the cluster did not start"; exit 1; }
export SLURM_CONF=$C/slurm.conf
[ "$(sinfo -h -N -o '%N %T' | tr '\n' ' ')" = "sbn1 idle sbn2 idle sbn3 idle " ]
check "three nodes, each idle" $?

# 1. Twelve runs of the demo over the three nodes, the checkpoint cache on each node's own
# disk (C/local is a tmpfs of its own on every node).
scripts/slurm-compare --wait --sbatch=--exclusive --stagebench "$SB" -- --size tiny --reps 6 \
	--seed 7 --cache "$C/local/cache" --out "$T/spread" >"$T/spread.log" 2>&1
rc=$?
check "12 tasks over three nodes and their merge exit 0 (got $rc; $T/spread.log)" $([ $rc = 0 ]; echo $?)
hosts=$(for t in "$T"/spread/*-[0-9]*.trace.jsonl.zst; do host_of "$t"; done | sort | uniq -c |
	awk '{ printf "%s:%s ", $2, $1 }')
[ "$(echo "$hosts" | wc -w)" = 3 ]
check "the runs ran on all three nodes ($hosts)" $?
[ "$(grep -c '"campaign"' "$T/spread/runs.json")" = 12 ] && ! grep -q '"stopped_by"' "$T/spread/runs.json"
check "runs.json: twelve runs, none stopped" $?
grep -q 'eager@sbn1' "$T/spread/table.md" && grep -q 'staged@sbn2' "$T/spread/table.md" &&
	grep -q 'kept apart' "$T/spread/table.md"
check "the merged table groups the runs by host (MODE@HOST)" $?
grep -q '^Result: every pair identical or within noise' "$T/spread/latents.md"
check "the latent comparison holds across hosts" $?
[ -d "$C/local" ] && [ -z "$(ls -A "$C/local")" ]
check "the checkpoint cache stayed on the nodes (none on the shared filesystem)" $?

# 2. Faults, with a pipeline whose tasks 0 and 1 hold (ready file, then wait for go) until
# the test has done with them. sbn3 is drained before the campaign: its tasks run elsewhere.
# Task 0's node dies (its slurmd, process 1 of the node, killed: everything on it goes),
# task 1 is cancelled with scancel.
scontrol update nodename=sbn3 state=drain reason="drained by nodes.sh"
cat >"$T/hold.json" <<JSON
{"name": "hold",
 "command": ["sh", "-c", "case \"\$SLURM_ARRAY_TASK_ID\" in 0|1) : >\"\$HOLD_DIR/ready-\$SLURM_ARRAY_TASK_ID\"; while [ ! -e \"\$HOLD_DIR/go\" ]; do sleep 0.05; done;; esac; exec \"\$@\"",
             "sh", "$E", "stage=work", "alloc=4M", "stage=done"],
 "variants": {"p": {}, "q": {}}}
JSON
mkdir "$T/hold"
HOLD_DIR=$T/hold scripts/slurm-compare --wait --sbatch=--exclusive --stagebench "$SB" -- \
	p q --pipeline "$T/hold.json" --reps 3 --interval 50ms --out "$T/faults" >"$T/faults.log" 2>&1 &
submitter=$!
wait_for test -e "$T/hold/ready-0" && wait_for test -e "$T/hold/ready-1"
check "tasks 0 and 1 started" $?
array=$(sed -n 's/^array \([0-9]*\) .*/\1/p' "$T/faults.log")
node0=$(squeue -h -r -j "${array}_0" -o %N)
node1=$(squeue -h -r -j "${array}_1" -o %N)
[ -n "$node0" ] && [ -n "$node1" ] && [ "$node0" != sbn3 ] && [ "$node1" != sbn3 ]
check "the drained node got neither ($node0, $node1)" $?
tests/slurm/cluster.sh kill "$C" "$node0"
scancel "${array}_1"
: >"$T/hold/go"
wait $submitter
rc=$?
check "a campaign with a dead node and a cancelled task: the merge exits 1 (got $rc)" $([ $rc = 1 ]; echo $?)
grep -q '"mode": "p", "run": 1, "trace": "p-1.trace.jsonl.zst", "stopped_by": "lost", "why": "its task left no result' "$T/faults/runs.json"
check "the run on the dead node is lost ($node0)" $?
grep -q "p-1: its task left no result" "$T/faults/slurm/merge.out"
check "the merge names it" $?
grep -q '"mode": "q", "run": 1, .*"stopped_by": "signal", "signal": 15' "$T/faults/runs.json"
check "the cancelled task is stopped by signal 15" $?
[ "$(grep -c '"exit": 0, "trace"' "$T/faults/runs.json")" = 4 ]
check "the other four runs merged, completed" $?
grep -q '^| work | ' "$T/faults/table.md"
check "the merge wrote the table" $?
used=$(for t in "$T"/faults/*-[0-9]*.trace.jsonl.zst; do host_of "$t"; done | sort -u | tr '\n' ' ')
case " $used" in *" sbn3 "*) false ;; *) true ;; esac
check "no run on the drained node (runs on: $used)" $?
[ "$(sinfo -h -n "$node0" -o %T)" != idle ]
check "Slurm has the dead node down ($node0: $(sinfo -h -n "$node0" -o %T))" $?

if [ $fails = 0 ]; then
	echo "slurm nodes tests: all passed"
else
	echo "slurm nodes tests: $fails failed (scratch kept in $T)"
	exit 1
fi
