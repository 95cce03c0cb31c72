#!/bin/sh
# failed_run.sh -- a run whose command fails on its own: its stderr is kept in OUT/V-N.err as it
# comes (and still shown on ours), and compare names the run, the stage it died in and its
# error before the latents, with where its stderr is; the exit status stays 1.
set -u
. "$(dirname "$0")/common.inc"
. "$here/handshake.inc"

# A pipeline that writes its own stage events (STAGEBENCH_FD) and dies in shape_1024 when staged.
cat >"$tmp/pipe.py" <<'PY'
import json, os, sys, time
def stage(name):
    os.write(int(os.environ["STAGEBENCH_FD"]), (json.dumps(
        {"kind": "stage", "stage": name, "mono": time.clock_gettime(time.CLOCK_MONOTONIC)})
        + "\n").encode())
for name in ("setup", "shape_512", "shape_1024", "export"):
    stage(name)
    print("in", name, flush=True)
    if name == "shape_1024" and sys.argv[1] == "staged":
        raise RuntimeError("CUDA out of memory in shape_1024")
PY
printf '%s\n' '{"name": "dies", "command": ["{python}", "{pipeline_dir}/pipe.py", "{mode}"],' \
	'"variants": {"eager": {}, "staged": {}}}' >"$tmp/dies.json"
STAGEBENCH_PYTHON=$PY "$SB" compare eager staged --pipeline "$tmp/dies.json" --reps 1 \
	--out "$tmp/d" >"$tmp/d.out" 2>"$tmp/d.err"
rc=$?
check "a run that died: exit 1 (got $rc: $(tail -n 3 "$tmp/d.err"))" [ "$rc" -eq 1 ]
check "its traceback is kept in staged-1.err" sh -c "grep -q '^Traceback' '$tmp/d/staged-1.err' &&
	grep -q '^RuntimeError: CUDA out of memory in shape_1024' '$tmp/d/staged-1.err'"
check "and still shown on compare's stderr" grep -q '^RuntimeError: CUDA out of memory' "$tmp/d.err"
check "its stdout stays in staged-1.log" sh -c "grep -q '^in shape_1024' '$tmp/d/staged-1.log' &&
	! grep -q Traceback '$tmp/d/staged-1.log'"
check "the completed run's .err is there, empty" sh -c "[ -e '$tmp/d/eager-1.err' ] && [ ! -s '$tmp/d/eager-1.err' ]"
want="- staged run 1 failed in shape_1024: RuntimeError: CUDA out of memory in shape_1024 (exit code 1; its stderr: $tmp/d/staged-1.err)"
check "the summary names the run, its stage, its error and its stderr" grep -qxF -- "$want" "$tmp/d.out"
check "before the latents" awk '/^## Failed runs/ { f = NR } /^## Latents/ { l = NR } END { exit !(f && l && f < l) }' "$tmp/d.out"
check "the closing note counts it first" grep -q 'compare: 1 failed run(s) (see .Failed runs.)' "$tmp/d.err"

# Crash-safe: the stderr is in the file while the command still runs.
printf '%s\n' '{"name": "slow", "command": ["sh", "-c",' \
	'"echo early-err-$0 >&2; while [ ! -e {pipeline_dir}/go ]; do sleep 0.01; done; exit 2", "{mode}"],' \
	'"variants": {"v": {}}}' >"$tmp/slow.json"
"$SB" compare --pipeline "$tmp/slow.json" --reps 1 --out "$tmp/s" >"$tmp/s.out" 2>"$tmp/s.err" &
pid=$!
wait_for sh -c "grep -qs '^early-err-v' '$tmp/s/v-1.err' || ! kill -0 $pid"
check "the stderr is written as it comes" grep -q '^early-err-v' "$tmp/s/v-1.err"
: >"$tmp/go"
wait "$pid"
rc=$?
check "the slow run failed: exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "its line names setup (no stage event) and its last stderr line" \
	grep -qxF -- "- v run 1 failed in setup: early-err-v (exit code 2; its stderr: $tmp/s/v-1.err)" "$tmp/s.out"
exit $fail
