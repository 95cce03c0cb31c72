#!/bin/sh
# nvml.sh -- record on a real process tree with the tests' fake libnvidia-ml.so
# (STAGEBENCH_NVML_LIB): the trace's gpu figures are the tree's pids summed over every
# device, never another process's.  Needs SB_BIN and SB_HELPERS.
set -u
SB=${SB_BIN:?SB_BIN not set}
H=${SB_HELPERS:?SB_HELPERS not set}
E=$H/eatmem
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
. "$(dirname "$0")/handshake.inc"
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

mkdir "$T/gpu"
export STAGEBENCH_NVML_LIB="$H/libnvidia-ml-fake.so" FAKE_NVML_DIR="$T/gpu" \
	FAKE_NVML_DEVICES=2 FAKE_NVML_LOG="$T/nvml.log" FAKE_NVML_GROW=3
echo 5000000000 >"$T/gpu/0.$$" # this shell: not in the recorded tree
export T E

# The tree: the root (100 MB on device 0) and a child (300 MB on device 0, 50 MB on
# device 1). Once both have written their figures and the recorder has polled NVML
# after that (the fake's log says so), the root emits a stage event: the sample taken
# at it carries the GPU figure.
cat >"$T/tree.sh" <<'EOS'
sh -c 'echo 300000000 > "$T/gpu/0.$$"; echo 50000000 > "$T/gpu/1.$$"; : > "$T/child.ready"; exec "$E" wait="$T/end.go"' &
echo 100000000 > "$T/gpu/0.$$"
while [ ! -e "$T/child.ready" ]; do sleep 0.01; done
polls() { c=$(grep -c "^procs 1 .* rc 0" "$T/nvml.log" 2>/dev/null); echo "${c:-0}"; }
n=$(polls)
while [ "$(polls)" -le "$n" ]; do sleep 0.01; done
exec "$E" stage=measured wait="$T/end.go"
EOS

"$SB" record -q -o "$T/t.zst" --interval 20ms -- sh "$T/tree.sh" &
rec=$!
wait_for trace_has "$T/t.zst" '"kind":"stage".*"stage":"measured"'
: >"$T/end.go"
wait "$rec"
rc=$?
r=$(zstdcat "$T/t.zst" | $PY -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin if l.strip()]
ev = [r for r in recs if r["type"] == "event" and r.get("kind") == "stage"][0]
gpu = [s["gpu"] for s in recs if s["type"] == "sample" and "gpu" in s]
after = [s["gpu"] for s in recs if s["type"] == "sample" and "gpu" in s and s["t"] >= ev["t"]]
print(after[0] if after else None, max(gpu) if gpu else None)')
set -- $r
if [ "$rc" = 0 ] && [ "${1:-}" = 450000000 ] && [ "${2:-}" = 450000000 ]; then
	ok "gpu over the tree's pids on 2 devices: $1 bytes (max $2), the outsider left out"
else
	bad "gpu figures: rc=$rc at-stage=${1:-none} max=${2:-none} (want 450000000)"
fi

# No library: no gpu key, no message.
STAGEBENCH_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$SB" record -q -o "$T/n.zst" -- true \
	2>"$T/n.err"
if ! zstdcat "$T/n.zst" | grep -q '"gpu"' && [ ! -s "$T/n.err" ]; then
	ok "no NVML library: no gpu figures, nothing said"
else
	bad "no NVML library: $(cat "$T/n.err")"
fi
exit $fail
