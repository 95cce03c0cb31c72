#!/bin/sh
# unseen.sh -- staging a diffusers script the repository's pipelines do not use, with no adapter
# and no pipeline file: tests/e2e/unseen/app.py (plain DiffusionPipeline.from_pretrained, .to,
# one call) on a random-weight Stable Diffusion 3 (two CLIP text encoders and a T5, a
# transformer, a VAE; tens of MB each in bfloat16) that --prepare writes (make_tiny.py):
# `compare eager staged -- {python} app.py ...` learns a plan, builds every model after setup
# in the stage that runs it and releases it after, latents identical, exit 0, nothing reported
# as not staged; the plan kept ('learn') on the script renamed and moved: the same; the kept
# plan on a script that loads the pipeline elsewhere: the run goes on as written, exit 0, the
# table says the plan does not match; Stable Diffusion XL (its encode_prompt asks the text
# encoder for its execution device before calling it): every model staged too. Real diffusers
# and transformers (scripts/venv-real.sh), nothing downloaded.
set -u
. "$(dirname "$0")/common.inc"
if [ "${STAGEBENCH_REAL:-1}" = 0 ]; then
	echo "SKIP unseen: STAGEBENCH_REAL=0 (no real-library environment)"
	exit 0
fi
VPY=$("$root/scripts/venv-real.sh" --path)/bin/python
if ! "$VPY" -c "import diffusers, transformers, torch" 2>"$tmp/import.err"; then
	echo "FAIL unseen: no real-library environment at $VPY (scripts/deps.sh test or" \
		"scripts/venv-real.sh makes it): $(tail -n 1 "$tmp/import.err")"
	exit 1
fi
export STAGEBENCH_PYTHON="$VPY" HF_HUB_OFFLINE=1
U=$root/tests/e2e/unseen
C="--reps 1 --interval 20ms --cache $tmp/cache"
PREP="{python} $U/make_tiny.py {cache}/sd3 --size small"

# staged: the models, in order of their loads: each loaded in a stage (not setup), released
# later unless it is the last one loaded; prints "ok" or what is wrong
staged_ok() {
	zstd -dc "$1" | grep -E '"kind":"(load|release)"' | sed -E \
		's/.*"kind":"([a-z]+)".*"stage":"([^"]*)".*"name":"([^"]*)".*/\1 \3 \2/' | awk '
		$1 == "load" { n++; order[n] = $2; if ($3 == "setup") bad = bad " " $2 " loaded in setup;" }
		$1 == "release" { rel[$2] = 1 }
		END { for (i = 1; i < n; i++) if (!rel[order[i]]) bad = bad " " order[i] " never released;"
		      if (n < 4) bad = bad " only " n " loads;"
		      print bad == "" ? "ok" : bad }'
}

# lat TRACE: "name sha256" of each latent event, sorted
lat() { zstd -dc "$1" | grep '"kind":"latent"' | sed -E 's/.*"name":"([^"]*)".*"sha256":"([0-9a-f]*)".*/\1 \2/' | sort; }

same_latents() { grep -Eq '^([0-9]+) pairs in [0-9]+ latents: \1 identical, 0 within noise\.$' "$1"; }

A=$tmp/a
# shellcheck disable=SC2086
"$SB" compare eager staged $C --out "$A" --prepare "$PREP" -- \
	'{python}' "$U/app.py" '{cache}/sd3' '{out}' --seed '{seed}' >"$tmp/a.out" 2>"$tmp/a.err"
rc=$?
check "sd3: compare -- COMMAND exits 0 (got $rc: $(grep -v 'it/s' "$tmp/a.err" | tail -n 5))" [ "$rc" -eq 0 ]
check "sd3: a plan learned (5 models)" grep -q "learn: 5 model(s)" "$tmp/a.err"
s=$(staged_ok "$A/staged-1.trace.jsonl.zst")
check "sd3: every model built after setup and released after its stage ($s)" [ "$s" = ok ]
ev=$(events "$A/eager-1.trace.jsonl.zst" | tr , '\n' | grep -c ' setup$')
check "sd3: eager loads its 5 models in setup (got $ev)" [ "$ev" -eq 5 ]
check "sd3: latents identical" same_latents "$A/latents.md"
check "sd3: nothing said to be not staged" sh -c "! grep -q 'Not staged' '$tmp/a.out'"
check "sd3: the output directory named by the script" sh -c "! grep -q . '$A/prepare.err' || true"
w=$(stat -c %s "$A/eager-1/image.npy" 2>/dev/null)
check "sd3: the script wrote its image into {out}" [ -n "$w" ]

# the plan kept, then the script renamed and moved
# shellcheck disable=SC2086
(cd "$tmp" && "$SB" learn -o "$tmp/plan.py" ${C#--reps 1 } --out "$tmp/l" -- \
	'{python}' "$U/app.py" '{cache}/sd3' '{out}' --seed '{seed}' >/dev/null 2>"$tmp/l.err")
rc=$?
check "learn -- COMMAND: exit 0 (got $rc: $(tail -n 3 "$tmp/l.err"))" [ "$rc" -eq 0 ]
check "learn: the plan names its script" grep -q "^SCRIPT = 'app.py'" "$tmp/plan.py"
mkdir -p "$tmp/moved"
cp "$U/app.py" "$tmp/moved/renamed.py"
B=$tmp/b
# shellcheck disable=SC2086
"$SB" compare eager staged $C --out "$B" --adapter "$tmp/plan.py" -- \
	'{python}' "$tmp/moved/renamed.py" '{cache}/sd3' '{out}' --seed '{seed}' >"$tmp/b.out" 2>"$tmp/b.err"
rc=$?
check "renamed: exit 0 (got $rc: $(grep -v 'it/s' "$tmp/b.err" | tail -n 5))" [ "$rc" -eq 0 ]
check "renamed: nothing learned" [ ! -e "$B/learn" ]
s=$(staged_ok "$B/staged-1.trace.jsonl.zst")
check "renamed: every model staged ($s)" [ "$s" = ok ]
check "renamed: latents identical" same_latents "$B/latents.md"
check "renamed: not said to have changed" sh -c "! grep -q 'changed since\|does not match' '$tmp/b.err'"
lat "$A/eager-1.trace.jsonl.zst" >"$tmp/a.lat"
lat "$B/staged-1.trace.jsonl.zst" >"$tmp/b.lat"
check "renamed: every latent of the renamed script's staged run is the first eager run's" \
	sh -c "[ -s '$tmp/a.lat' ] && cmp -s '$tmp/a.lat' '$tmp/b.lat'"

# the kept plan on a script that makes its pipeline elsewhere: as written, said
sed 's/^def main():/def load(path, dtype):\n    return DiffusionPipeline.from_pretrained(path, torch_dtype=dtype)\n\n\ndef main():/;
     s/pipe = DiffusionPipeline.from_pretrained(a.model, torch_dtype=getattr(torch, a.dtype))/pipe = load(a.model, getattr(torch, a.dtype))/' \
	"$U/app.py" >"$tmp/moved/other.py"
D=$tmp/d
# shellcheck disable=SC2086
"$SB" compare staged $C --out "$D" --adapter "$tmp/plan.py" -- \
	'{python}' "$tmp/moved/other.py" '{cache}/sd3' '{out}' --seed '{seed}' >"$tmp/d.out" 2>"$tmp/d.err"
rc=$?
check "mismatch: exit 0 (got $rc: $(grep -v 'it/s' "$tmp/d.err" | tail -n 5))" [ "$rc" -eq 0 ]
check "mismatch: the run completed" grep -q '^| staged-1 | completed |' "$tmp/d.out"
check "mismatch: the table says the plan does not match, and why" \
	grep -q "^The plan does not match in staged: none of its 5 model(s) was made where it says" "$tmp/d.out"
check "mismatch: nothing staged" sh -c "! zstd -dc '$D/staged-1.trace.jsonl.zst' | grep -q '\"kind\":\"release\"'"

# Stable Diffusion XL: encode_prompt asks text_encoder for its execution device first
E=$tmp/e
# shellcheck disable=SC2086
"$SB" compare eager staged $C --out "$E" --prepare "{python} $U/make_tiny.py {cache}/sdxl --class sdxl" -- \
	'{python}' "$U/app.py" '{cache}/sdxl' '{out}' --seed '{seed}' >"$tmp/e.out" 2>"$tmp/e.err"
rc=$?
check "sdxl: exit 0 (got $rc: $(grep -v 'it/s' "$tmp/e.err" | tail -n 5))" [ "$rc" -eq 0 ]
s=$(staged_ok "$E/staged-1.trace.jsonl.zst")
check "sdxl: every model staged, text_encoder too ($s)" [ "$s" = ok ]
check "sdxl: latents identical" same_latents "$E/latents.md"
check "sdxl: nothing said to be not staged" sh -c "! grep -q 'Not staged' '$tmp/e.out' && ! grep -q 'not staged' '$tmp/e.err'"
exit $fail
