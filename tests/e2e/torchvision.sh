#!/bin/sh
# torchvision.sh -- `stagebench compare` on pipelines/torchvision (an unmodified script run as
# `python3 app.py`, models deferred by the adapter) at a small size: staged below eager in every
# stage holding a model, identical latents with RNG replay, the diagnosis without it; with no
# adapter, and with no pipeline file (compare -- COMMAND); a staged run whose hooks never fire
# fails naming what never happened.
set -u
. "$(dirname "$0")/common.inc"
if ! "$PY" -c "import torchvision" 2>/dev/null; then
	echo "SKIP torchvision: no python3-torchvision (scripts/deps.sh installs it)"
	exit 0
fi

P=$root/pipelines/torchvision/pipeline.json
SMALL="--set images=1 --set image_size=96 --set detect_size=128"
A=$tmp/a
# shellcheck disable=SC2086
"$SB" compare eager staged staged-no-replay --pipeline "$P" $SMALL --reps 1 --interval 10ms \
	--out "$A" >"$tmp/a.out" 2>"$tmp/a.err"
rc=$?
check "exit 1 (staged-no-replay's latents differ; got $rc: $(tail -n 3 "$tmp/a.err"))" [ "$rc" -eq 1 ]
check "every run completed" sh -c "[ \$(grep -c '^| [a-z-]*-1 | completed |' '$tmp/a.out') -eq 3 ]"
"$SB" table --format csv "$A"/eager-1.trace.jsonl.zst "$A"/staged-1.trace.jsonl.zst >"$tmp/a.csv"
for s in detect classify segment; do
	e=$(peak "$s" eager "$tmp/a.csv")
	st=$(peak "$s" staged "$tmp/a.csv")
	check "$s: staged ($st bytes) below eager ($e bytes)" lt "$st" "$e"
done
ev=$(zstd -dc "$A/staged-1.trace.jsonl.zst" | grep -E '"kind":"(load|release)"' |
	sed -E 's/.*"kind":"([a-z]+)".*"stage":"([a-z]+)".*"name":"([a-z]+)".*/\1 \3 \2/' | tr '\n' ,)
check "staged: each model built in its stage, released after ($ev)" [ "$ev" = \
	"load detector detect,release detector classify,load classifier classify,release classifier segment,load segmenter segment,release segmenter write," ]
for l in image_0 boxes_0 probs masks; do
	check "latent $l: eager and staged identical" \
		awk -v l="$l" '$0 == "## " l " (stage " { } /^## / { cur = $2 } cur == l && /^\| eager-1 *\| identical/ { ok = 1 } END { exit !ok }' "$A/latents.md"
done
check "without replay the first latent differs, and latents.md says why" \
	sh -c "grep -q '^- staged-no-replay-1: image_0 (stage prepare), differs' '$A/latents.md' &&
	grep -q 'It differs before staged-no-replay-1 built any model: the pipeline draws random numbers after building its models' '$A/latents.md'"

# The same script with no adapter (no-adapter.json): a plan learned from one eager run gives
# the per-stage peaks the hand-written adapter gives, within 15 %, and identical latents.
N=$tmp/n
# shellcheck disable=SC2086
"$SB" compare --pipeline "$root/pipelines/torchvision/no-adapter.json" $SMALL --reps 1 \
	--interval 10ms --out "$N" --cache "${XDG_CACHE_HOME:-$HOME/.cache}/stagebench/torchvision" \
	>"$tmp/n.out" 2>"$tmp/n.err"
rc=$?
check "no adapter: exit 0 (got $rc: $(tail -n 3 "$tmp/n.err"))" [ "$rc" -eq 0 ]
check "no adapter: latents identical" grep -qE '^([0-9]+) pairs in [0-9]+ latents: \1 identical' "$N/latents.md"
"$SB" table --format csv "$N"/staged-1.trace.jsonl.zst >"$tmp/n.csv"
for s in detect classify segment; do
	a=$(peak "$s" staged "$tmp/a.csv")
	n=$(peak "$s" staged "$tmp/n.csv")
	check "no adapter: $s: staged peak ($n bytes) within 15 % of the adapter's ($a bytes)" \
		awk -v a="$a" -v n="$n" 'BEGIN { d = n - a; if (d < 0) d = -d; exit !(a > 0 && n > 0 && d <= 0.15 * a) }'
done
ev=$(events "$N/staged-1.trace.jsonl.zst")
check "no adapter: each model built in its stage, released after ($ev)" [ "$ev" = \
	"load detector detect,release detector classify,load classifier classify,release classifier segment,load segmenter segment," ]

# No pipeline file: the command is the pipeline (compare -- COMMAND), its output directory
# and cache named by the script (runs/DATE-app/, $XDG_CACHE_HOME/stagebench/app), its
# weights made by --prepare: stages found, staged below eager in them, latents identical.
mkdir -p "$tmp/cmd"
(cd "$tmp/cmd" && XDG_CACHE_HOME=$tmp/xdg "$SB" compare eager staged --reps 1 --interval 10ms \
	--prepare "{python} $root/pipelines/torchvision/make_weights.py {cache}" --files '{cache}' -- \
	'{python}' "$root/pipelines/torchvision/app.py" --seed '{seed}' --images 1 --image-size 96 \
	--detect-size 128 --weights '{cache}' --out '{out}' >"$tmp/c.out" 2>"$tmp/c.err")
rc=$?
check "-- COMMAND: exit 0 (got $rc: $(tail -n 3 "$tmp/c.err"))" [ "$rc" -eq 0 ]
O=$(ls -d "$tmp"/cmd/runs/*-app 2>/dev/null | head -n 1)
check "-- COMMAND: the output directory named by the script (runs/DATE-app)" [ -n "$O" ]
check "-- COMMAND: the cache named by the script" [ -s "$tmp/xdg/stagebench/app/detector.pth" ]
check "-- COMMAND: latents identical" grep -qE '^([0-9]+) pairs in [0-9]+ latents: \1 identical' "$O/latents.md"
"$SB" table --format csv "$O"/eager-1.trace.jsonl.zst "$O"/staged-1.trace.jsonl.zst >"$tmp/c.csv"
lower=0
for s in detect classify segment; do
	e=$(peak "$s" eager "$tmp/c.csv")
	st=$(peak "$s" staged "$tmp/c.csv")
	check "-- COMMAND: stage $s found" [ -n "$e" ]
	lt "$st" "$e" && lower=$((lower + 1))
done
check "-- COMMAND: staged below eager in at least two stages (in $lower)" [ "$lower" -ge 2 ]

# An adapter whose target never runs: the staged run fails (exit 3) naming what never happened.
mkdir -p "$tmp/bad"
sed 's/when_imported("app"/when_imported("not_app"/' "$root/pipelines/torchvision/adapter.py" >"$tmp/bad/adapter.py"
sed -e "s|{pipeline_dir}/adapter.py|$tmp/bad/adapter.py|" \
	-e "s|{pipeline_dir}/|$root/pipelines/torchvision/|g" "$P" >"$tmp/bad/pipeline.json"
# shellcheck disable=SC2086
"$SB" compare staged --pipeline "$tmp/bad/pipeline.json" $SMALL --reps 1 --out "$tmp/b" \
	--cache "${XDG_CACHE_HOME:-$HOME/.cache}/stagebench/torchvision" >"$tmp/b.out" 2>"$tmp/b.err"
rc=$?
check "never engaged: compare exits non-zero (got $rc)" [ "$rc" -ne 0 ]
check "never engaged: the run failed with exit code 3" grep -q 'staged run 1: failed with exit code 3' "$tmp/b.err"
check "never engaged: the message names the module that never ran" \
	grep -q 'the module not_app was never imported nor run as the main script' "$tmp/b.err"
exit $fail
