#!/bin/sh
# check.sh -- `stagebench check` on real recorded runs: eatmem runs under `record` (a candidate
# that allocates 200 MiB more in one stage is flagged in that stage only; a rerun is clean; a
# stage that no longer completes is flagged) and demo pipeline runs made by `compare` (a rerun
# is clean; a tampered latent copy is caught; through pipeline files written here, an adapter
# that holds 300 MiB more in shape_512 is flagged in shape_512 only).
set -u
. "$(dirname "$0")/common.inc"
EATMEM=${SB_HELPERS:-$root/build/helpers}/eatmem
. "$here/handshake.inc"
# rec DIR N WORK_STEPS...: record one eatmem run as DIR/staged-N.trace.jsonl.zst. A step
# "hold" keeps what is allocated until the recorder has taken a sample after it (a mark
# event, then a sample after it in the trace): no sleeps, on a loaded machine too.
hs=0
rec() {
	d=$1
	n=$2
	shift 2
	mkdir -p "$d"
	trc=$d/staged-$n.trace.jsonl.zst
	h0=$hs
	steps=
	for a in stage=load alloc=50M hold stage=work "$@"; do
		if [ "$a" = hold ]; then
			hs=$((hs + 1))
			a="mark=h$hs wait=$tmp/h$hs.go"
		fi
		steps="$steps $a"
	done
	# shellcheck disable=SC2086 # the steps are words without spaces
	"$SB" record -q --mode staged --interval 20ms -o "$trc" -- "$EATMEM" $steps &
	p=$!
	while [ "$h0" -lt "$hs" ]; do
		h0=$((h0 + 1))
		wait_for sampled_after "$trc" "h$h0" && : >"$tmp/h$h0.go"
	done
	wait "$p"
	rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || { echo "FAIL check: record $d/$n exited $rc"; fail=1; }
}

[ -x "$EATMEM" ] || { echo "FAIL check: no eatmem helper at $EATMEM"; exit 1; }

# baseline: work holds 100 MiB; heavy: 300 MiB in work only (freed before save)
for n in 1 2; do
	rec "$tmp/base" $n alloc=100M hold free stage=save hold
	rec "$tmp/rerun" $n alloc=100M hold free stage=save hold
	rec "$tmp/heavy" $n alloc=300M hold free stage=save hold
done
# broken: run 2 exits with code 1 in work, save is never reached
rec "$tmp/broken" 1 alloc=100M hold free stage=save hold
rec "$tmp/broken" 2 alloc=100M hold exit=1

"$SB" check --baseline "$tmp/base" "$tmp/rerun" >"$tmp/rerun.md" 2>"$tmp/err"
rc=$? # taken at once: a $(...) in check's arguments would set $? under bash
check "a rerun is clean (exit $rc: $(cat "$tmp/rerun.md" "$tmp/err"))" [ $rc -eq 0 ]
check "a rerun reports no regression" grep -q '^check: 0 regressions' "$tmp/rerun.md"

"$SB" check --baseline "$tmp/base" "$tmp/heavy" >"$tmp/heavy.md" 2>"$tmp/err"
rc=$?
check "the heavy candidate exits 1 (got $rc: $(cat "$tmp/err"))" [ $rc -eq 1 ]
check "work's peak footprint is flagged" grep -q '^| staged | work | peak footprint |' "$tmp/heavy.md"
rows=$(sed -n '/^## Regressions/,/^## /p' "$tmp/heavy.md" | grep '^| staged |' || true)
others=$(printf '%s\n' "$rows" | grep -v '^| staged | work |' || true)
check "no stage but work is flagged: $others" [ -z "$others" ]
# the figures: every heavy run peaks at least 150 MiB (0.15 GB) above every baseline run
"$SB" check --format json --baseline "$tmp/base" "$tmp/heavy" >"$tmp/heavy.json" 2>/dev/null
check "json: the work peak grew by more than 150 MiB" /usr/bin/python3 - "$tmp/heavy.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [x for x in r["regressions"] if x["stage"] == "work" and x["metric"] == "peak footprint"]
assert rows and rows[0]["change"] > 150 << 20, rows
assert min(rows[0]["now"]) - max(rows[0]["baseline"]) == rows[0]["change"], rows
assert {x["stage"] for x in r["regressions"]} == {"work"}, r["regressions"]
assert not r["clean"]
EOF

"$SB" check --baseline "$tmp/base" "$tmp/broken" >"$tmp/broken.md" 2>"$tmp/err"
rc=$?
check "a stage no longer completed exits 1 (got $rc: $(cat "$tmp/err"))" [ $rc -eq 1 ]
check "work is flagged as stopped" grep -q '^| staged | work | outcome | completed 2 of 2 | completed 1 of 2 | staged-2 stopped here (exit code 1)' "$tmp/broken.md"
check "save is flagged as not reached" grep -q '^| staged | save | outcome | .*staged-2 never reached it (ended in work: exit code 1)' "$tmp/broken.md"

# The demo pipeline at tiny size, run by `compare` (the run directories users will check):
# 2 baseline and 2 candidate runs of the same commit, staged, with latents. Stage times on a
# shared 2-core machine are not the subject here: --max-time-growth 50%.
for d in dbase dnew; do
	STAGEBENCH_HOME="$root" "$SB" compare staged --size tiny --reps 2 --out "$tmp/$d" --cache "$tmp/cache" -q \
		>"$tmp/$d.out" 2>&1 || { echo "FAIL check: compare into $d: $(tail -n 5 "$tmp/$d.out")"; fail=1; }
done
"$SB" check --max-time-growth 50% --baseline "$tmp/dbase" "$tmp/dnew" >"$tmp/demo.md" 2>"$tmp/err"
rc=$?
check "a demo rerun is clean (got $rc: $(cat "$tmp/demo.md" "$tmp/err"))" [ $rc -eq 0 ]
check "the demo runs were compared" grep -q 'baseline .*: 2 runs; candidate .*: 2 runs' "$tmp/demo.md"
# ... and a changed latent in one candidate run is caught
f=$(ls "$tmp/dnew/staged-2.latents/"*.npy | head -n 1)
/usr/bin/python3 - "$f" "$tmp/dnew/staged-2.trace.jsonl.zst" <<'EOF'
import sys, numpy as np
a = np.load(sys.argv[1])
a.flat[0] += 1
np.save(sys.argv[1], a)
EOF
"$SB" check --max-time-growth 50% --baseline "$tmp/dbase" "$tmp/dnew" >"$tmp/demo2.md" 2>"$tmp/err"
rc=$?
check "a tampered latent copy is caught (got $rc)" [ $rc -eq 1 ]
check "reported as a corrupt copy" grep -q 'latent .*corrupt' "$tmp/demo2.md"

# The demo pipeline again, from pipeline files written here: base.json is demo/pipeline.json
# with its paths made absolute; heavy.json differs only in its adapter, a module written here
# that installs the demo's adapter and makes the pipeline hold 300 MiB more while the 512
# shape slat is sampled (the shape_512 stage). The pipeline's own files stay as they are.
# Stage times are not judged (--max-time-growth 60s): the heavy stage holds the memory until
# the trace has a sample written after a mark the adapter sends (the sampler has seen it).
mkdir -p "$tmp/pl"
cat >"$tmp/pl/heavy_adapter.py" <<'ADAPTER'
"""heavy_adapter -- the demo adapter, plus 300 MiB held during sample_shape_slat(512)."""
import functools
import os
import subprocess
import time

import adapter

PROBE = []


def _sampled_watcher(note):
    """A process, forked while the pipeline is still small, that exits once the trace has a
    sample written after the mark NOTE (60 s at most). Polling from the pipeline itself would
    fork it while it holds the 300 MiB: a child between fork and exec shares the parent's
    pages and the tree's footprint would count them twice."""
    script = (
        'i=0; while [ $i -lt 3000 ]; do '
        'zstdcat "$STAGEBENCH_TRACE" 2>/dev/null | awk -v n="$1" '
        '\'index($0, "\\"note\\":\\"" n "\\"") { seen = 1; next } '
        'seen && index($0, "{\\"type\\":\\"sample\\"") == 1 { found = 1; exit } '
        'END { exit !found }\' && exit 0; '
        'sleep 0.02; i=$((i + 1)); done; exit 1')
    return subprocess.Popen(["sh", "-c", script, "watch", note])


def _heavy(cascade):
    cls = cascade.Cascade1024Pipeline
    orig = cls.sample_shape_slat

    @functools.wraps(orig)
    def sample_shape_slat(self, cond, init, resolution=512):
        if resolution != 512:
            return orig(self, cond, init, resolution=resolution)
        import torch
        note = "heavy-held-%d" % time.monotonic_ns()
        watcher = _sampled_watcher(note)
        extra = torch.ones(300 << 20, dtype=torch.uint8)  # every page written
        try:
            result = orig(self, cond, init, resolution=resolution)
            PROBE[0].mark(note)
            watcher.wait()  # the sampler has seen the memory
            return result
        finally:
            del extra
    cls.sample_shape_slat = sample_shape_slat


def install(probe):
    PROBE.append(probe)
    # hooked before the demo adapter's, so the probe's stage wrapper encloses this one and
    # the extra memory is held inside shape_512
    probe.when_imported("cascade", _heavy)
    adapter.install(probe)
ADAPTER
/usr/bin/python3 - "$root/demo" "$tmp/pl" <<'PY'
import json, sys
demo, out = sys.argv[1], sys.argv[2]
p = json.load(open(demo + "/pipeline.json"))
p = json.loads(json.dumps(p).replace("{pipeline_dir}", demo))
assert p["adapter"] == "adapter" and p["pythonpath"] == [demo], p
json.dump(p, open(out + "/base.json", "w"), indent=1)
p["adapter"] = "heavy_adapter"
p["pythonpath"] = [out] + p["pythonpath"]
json.dump(p, open(out + "/heavy.json", "w"), indent=1)
PY
for d in base heavy; do
	STAGEBENCH_HOME="$root" "$SB" compare staged --reps 2 --size tiny --seed 7 --interval 20ms \
		--pipeline "$tmp/pl/$d.json" --out "$tmp/p$d" --cache "$tmp/cache" -q \
		>"$tmp/p$d.out" 2>&1 || { echo "FAIL check: compare $d.json: $(tail -n 5 "$tmp/p$d.out")"; fail=1; }
done
"$SB" check --max-time-growth 60s --format json --baseline "$tmp/pbase" "$tmp/pheavy" \
	>"$tmp/pheavy.json" 2>"$tmp/err"
rc=$?
check "the demo holding 300 MiB more in shape_512 exits 1 (got $rc: $(cat "$tmp/err"))" [ $rc -eq 1 ]
check "json: shape_512's peak footprint is flagged, and no other stage" \
	/usr/bin/python3 - "$tmp/pheavy.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
regs = r["regressions"]
assert not r["clean"], r
assert {(x["mode"], x["stage"]) for x in regs} == {("staged", "shape_512")}, regs
metrics = {x["metric"] for x in regs}
assert "peak footprint" in metrics, regs
assert all(m == "peak footprint" or m.startswith("kernel peak") for m in metrics), regs
row = [x for x in regs if x["metric"] == "peak footprint"][0]
assert row["change"] > 200 << 20, row
assert len(row["baseline"]) == 2 and len(row["now"]) == 2, row
PY
"$SB" check --max-time-growth 60s --baseline "$tmp/pbase" "$tmp/pheavy" >"$tmp/pheavy.md" 2>/dev/null
check "md: shape_512's peak footprint is listed" \
	grep -q '^| staged | shape_512 | peak footprint |' "$tmp/pheavy.md"

exit $fail
