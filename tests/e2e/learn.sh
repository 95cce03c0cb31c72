#!/bin/sh
# learn.sh -- staging with no adapter: a script the other tests never saw (tests/e2e/learn/
# caption.py: a torchvision factory, a class of its own loaded with torch.load +
# load_state_dict, a head of its own, a norm made of layers it makes first), run by a pipeline
# file with only command, prepare, files and the two variants. `stagebench learn` writes a plan
# (and refuses to overwrite one); `compare` learns one itself, stages with identical latents
# and lower peaks in every stage where a model is not needed; a kept plan is used as it is;
# record --staged with no adapter learns one first.
set -u
. "$(dirname "$0")/common.inc"
if ! "$PY" -c "import torchvision" 2>/dev/null; then
	echo "SKIP learn: no python3-torchvision (scripts/deps.sh installs it)"
	exit 0
fi
P=$root/tests/e2e/learn/pipeline.json
C="--cache $tmp/cache --interval 20ms"

# stagebench learn: the plan, written where asked
# shellcheck disable=SC2086
(cd "$tmp" && "$SB" learn --pipeline "$P" $C --out "$tmp/l" >"$tmp/l.out" 2>"$tmp/l.err")
rc=$?
check "learn: exit 0 (got $rc: $(tail -n 3 "$tmp/l.err"))" [ "$rc" -eq 0 ]
check "learn: plan.py written in the current directory" [ -s "$tmp/plan.py" ]
check "learn: the learning run's trace kept" [ -s "$tmp/l/learn/eager.trace.jsonl.zst" ]
check "learn: the probe's summary on stderr" grep -q "3 model(s), 3 stage(s): embed, mix, score" "$tmp/l.err"
for m in "'embedder'" "'mixer'" "'head'" "'by': 'caption:Mixer'" "'enter': 'caption:mix'"; do
	check "learn: plan.py holds $m" grep -q "$m" "$tmp/plan.py"
done
check "learn: the norm is not staged, and the plan says why" \
	grep -q "^- norm (torch.nn.modules.container:Sequential, made at caption.py:[0-9]*): 2 of its parts" "$tmp/plan.py"
# shellcheck disable=SC2086
(cd "$tmp" && "$SB" learn --pipeline "$P" $C --out "$tmp/l2" >/dev/null 2>"$tmp/l2.err")
rc=$?
check "learn: an existing plan.py is kept (exit 2, got $rc)" [ "$rc" -eq 2 ]
check "learn: ... saying so" grep -q "'plan.py' exists (it may hold your edits)" "$tmp/l2.err"
"$SB" learn staged --pipeline "$P" -o "$tmp/x.py" >/dev/null 2>"$tmp/l3.err"
rc=$?
check "learn: a staged variant is refused (exit 2, got $rc)" [ "$rc" -eq 2 ]
"$SB" compare --task 0 --out "$tmp/t" --pipeline "$P" >/dev/null 2>"$tmp/t.err"
rc=$?
check "compare --task without an adapter: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "compare --task without an adapter: says to learn it once" grep -q "learn it once" "$tmp/t.err"

# compare with no adapter: learns the plan, then eager and staged
A=$tmp/a
# shellcheck disable=SC2086
"$SB" compare --pipeline "$P" $C --reps 1 --out "$A" >"$tmp/a.out" 2>"$tmp/a.err"
rc=$?
check "compare: exit 0 (got $rc: $(tail -n 3 "$tmp/a.err"))" [ "$rc" -eq 0 ]
check "compare: the plan learned into OUT/plan.py" [ -s "$A/plan.py" ]
check "compare: latents identical" grep -q '^4 pairs in 4 latents: 4 identical' "$A/latents.md"
check "compare: the table says which model was not staged, why, and its size" \
	grep -q "^Not staged in staged: norm ([0-9.]* MB): 2 of its parts" "$tmp/a.out"
check "compare: ... for the staged runs only" sh -c "! grep -q '^Not staged in eager' '$tmp/a.out'"
"$SB" table --format csv "$A"/eager-1.trace.jsonl.zst "$A"/staged-1.trace.jsonl.zst >"$tmp/a.csv"
for s in embed mix score; do
	e=$(peak "$s" eager "$tmp/a.csv")
	st=$(peak "$s" staged "$tmp/a.csv")
	check "compare: $s: staged ($st bytes) below eager ($e bytes)" lt "$st" "$e"
done
ev=$(events "$A/staged-1.trace.jsonl.zst")
check "compare: staged builds each model in its stage, releases it after ($ev)" [ "$ev" = \
	"load embedder embed,release embedder mix,load mixer mix,release mixer score,load head score," ]

# the kept plan, named as the adapter: used as it is, nothing learned
sed "s|\"command\"|\"adapter\": \"$tmp/plan.py\", \"command\"|; s|{pipeline_dir}|$root/tests/e2e/learn|g" \
	"$P" >"$tmp/kept.json"
# shellcheck disable=SC2086
"$SB" compare staged --pipeline "$tmp/kept.json" $C --reps 1 --out "$tmp/k" >"$tmp/k.out" 2>"$tmp/k.err"
rc=$?
check "kept plan: exit 0 (got $rc: $(tail -n 3 "$tmp/k.err"))" [ "$rc" -eq 0 ]
check "kept plan: nothing learned" [ ! -e "$tmp/k/learn" ]
check "kept plan: the staged run loads its models" sh -c \
	"zstd -dc '$tmp/k/staged-1.trace.jsonl.zst' | grep -q '\"kind\":\"load\".*\"name\":\"mixer\"'"
# record --staged with no adapter: a plan learned from one eager run first, then the staged run
mkdir -p "$tmp/r"
"$SB" record --staged -o "$tmp/r/x.trace.jsonl.zst" --interval 20ms -- "$PY" \
	"$root/tests/e2e/learn/caption.py" "$tmp/cache/mixer.pt" "$tmp/r/out" --seed 7 \
	>"$tmp/r.out" 2>"$tmp/r.err"
rc=$?
check "record --staged, no adapter: exit 0 (got $rc: $(tail -n 3 "$tmp/r.err"))" [ "$rc" -eq 0 ]
check "record: the plan beside the trace" grep -q "^SCRIPT = 'caption.py'" "$tmp/r/x.plan.py"
check "record: the learning run recorded beside it" [ -s "$tmp/r/x.learn.trace.jsonl.zst" ]
ev=$(events "$tmp/r/x.trace.jsonl.zst")
check "record: the staged run builds each model in its stage ($ev)" [ "$ev" = \
	"load embedder embed,release embedder mix,load mixer mix,release mixer score,load head score," ]
exit $fail
