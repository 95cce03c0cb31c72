#!/bin/sh
# qwen_real.sh -- pipelines/qwen-image on the real diffusers and transformers (the pinned
# real-library environment, scripts/venv-real.sh), on a tiny random-weight model its prepare step
# writes: `compare eager staged --set size=tiny --seed 7` exits 0, every latent pair (before and
# after the VAE decode) identical bit for bit, the text encoder released before denoise and the
# transformer loaded only for denoise; the offload variant and the QwenImagePipeline class too;
# at size small, staged's encode and denoise peaks well below eager's (bfloat16), and in float32
# eager's mapped model files in denoise and decode both models' files; the same pipeline with no
# adapter (a plan learned from one eager run) within 10 % of the adapter's peaks; a second
# diffusers pipeline (pipelines/pixart-sigma) with no adapter at all, latents identical.
# Nothing is downloaded (HF_HUB_OFFLINE=1).
set -u
. "$(dirname "$0")/common.inc"
if [ "${STAGEBENCH_REAL:-1}" = 0 ]; then
	echo "SKIP qwen_real: STAGEBENCH_REAL=0 (no real-library environment)"
	exit 0
fi
VPY=$("$root/scripts/venv-real.sh" --path)/bin/python
if ! "$VPY" -c "import diffusers, transformers, torch" 2>"$tmp/import.err"; then
	echo "FAIL qwen_real: no real-library environment at $VPY (scripts/deps.sh test or" \
		"scripts/venv-real.sh makes it): $(tail -n 1 "$tmp/import.err")"
	exit 1
fi
export STAGEBENCH_PYTHON="$VPY" HF_HUB_OFFLINE=1
P=$root/pipelines/qwen-image/pipeline.json
C=$tmp/cache

A=$tmp/a
"$SB" compare eager staged --pipeline "$P" --set size=tiny --seed 7 --cache "$C" --interval 20ms \
	--out "$A" >"$tmp/a.out" 2>"$tmp/a.err"
rc=$?
check "compare eager staged exits 0 (got $rc: $(grep -v 'it/s' "$tmp/a.err" | tail -n 5))" [ "$rc" -eq 0 ]
check "all 4 runs completed" sh -c "[ \$(grep -c '^| [a-z]*-[12] | completed |' '$tmp/a.out') -eq 4 ]"
for n in 1 2; do
	ev=$(events "$A/staged-$n.trace.jsonl.zst")
	check "staged-$n: text encoder only in encode, transformer only in denoise ($ev)" [ "$ev" = \
		"load text_encoder encode,release text_encoder denoise,load transformer denoise,release transformer decode," ]
	ev=$(events "$A/eager-$n.trace.jsonl.zst" | tr , '\n' | sort | tr '\n' ,)
	check "eager-$n: both models loaded at setup (in diffusers' order), never released ($ev)" \
		[ "$ev" = "load text_encoder setup,load transformer setup," ]
done
check "latents before and after the VAE decode identical in every pair" \
	grep -q '^12 pairs in 2 latents: 12 identical, 0 within noise\.$' "$A/latents.md"
for l in latents image; do
	check "latent $l (stage decode) in the identical table" grep -q "^| $l | decode | float32 |" "$A/latents.md"
done
check "the trace names the diffusers and transformers versions the run imported" \
	sh -c "zstd -dc '$A/staged-1.trace.jsonl.zst' | grep '\"kind\":\"versions\"' | grep -q '\"diffusers\":\"[0-9]' &&
	zstd -dc '$A/staged-1.trace.jsonl.zst' | grep '\"kind\":\"versions\"' | grep -q '\"transformers\":\"[0-9]'"
check "no version difference reported between eager and staged" sh -c "! grep -qi 'versions differ' '$tmp/a.out'"
# the page: compare printed its path; `stagebench report` writes the same page again
check "report.html's path printed last" [ "$(tail -n 1 "$tmp/a.out")" = "$A/report.html" ]
cp "$A/report.html" "$tmp/a-compare.html"
"$SB" report "$A" >"$tmp/a-report.out" 2>"$tmp/a-report.err"
check "report DIR: exit 0 ($?: $(tail -n 2 "$tmp/a-report.err"))" [ "$(cat "$tmp/a-report.out")" = "$A/report.html" ]
check "report DIR: the page compare wrote, byte for byte" cmp -s "$tmp/a-compare.html" "$A/report.html"
check "the page names the diffusers version each run imported" \
	grep -q '<tr><td>staged-1</td><td>.*diffusers [0-9]' "$A/report.html"

# offload: enable_model_cpu_offload(device="cpu") runs on a machine without an accelerator
B=$tmp/b
"$SB" compare eager offload --pipeline "$P" --set size=tiny --seed 7 --cache "$C" --reps 1 \
	--interval 20ms --out "$B" >"$tmp/b.out" 2>"$tmp/b.err"
rc=$?
check "compare eager offload exits 0 (got $rc: $(grep -v 'it/s' "$tmp/b.err" | tail -n 5))" [ "$rc" -eq 0 ]
check "offload: latents identical to eager's" \
	grep -q '^2 pairs in 2 latents: 2 identical, 0 within noise\.$' "$B/latents.md"

# the other class of the same shape: QwenImagePipeline (Qwen2.5-VL text encoder)
D=$tmp/d
"$SB" compare eager staged --pipeline "$P" --set size=tiny --set pipeline_class=QwenImagePipeline \
	--seed 7 --cache "$C" --reps 1 --interval 20ms --out "$D" >"$tmp/d.out" 2>"$tmp/d.err"
rc=$?
check "QwenImagePipeline: compare exits 0 (got $rc: $(grep -v 'it/s' "$tmp/d.err" | tail -n 5))" [ "$rc" -eq 0 ]
ev=$(events "$D/staged-1.trace.jsonl.zst")
check "QwenImagePipeline staged: each model only in its stage ($ev)" [ "$ev" = \
	"load text_encoder encode,release text_encoder denoise,load transformer denoise,release transformer decode," ]
check "QwenImagePipeline: latents identical" \
	grep -q '^2 pairs in 2 latents: 2 identical, 0 within noise\.$' "$D/latents.md"
check "QwenImagePipeline: the tiny model is its own directory" \
	test -f "$C/tiny-QwenImagePipeline/model_index.json"

# size small in bfloat16 (weights converted on load, so they are the process's own memory, not
# the safetensors file's mapped pages): staged holds one big model at a time
E=$tmp/e
"$SB" compare eager staged --pipeline "$P" --set size=small --set dtype=bfloat16 --seed 7 \
	--cache "$C" --reps 1 --interval 20ms --out "$E" >"$tmp/e.out" 2>"$tmp/e.err"
rc=$?
check "size small: compare exits 0 (got $rc: $(grep -v 'it/s' "$tmp/e.err" | tail -n 5))" [ "$rc" -eq 0 ]
"$SB" table --format csv "$E"/eager-1.trace.jsonl.zst "$E"/staged-1.trace.jsonl.zst >"$tmp/e.csv"
for s in encode denoise; do
	e=$(peak "$s" eager "$tmp/e.csv")
	st=$(peak "$s" staged "$tmp/e.csv")
	stp=""
	[ -z "$st" ] || stp=$((st + 100000000))
	check "size small, $s: staged ($st bytes) at least 100 MB below eager ($e bytes)" lt "$stp" "$e"
done
check "size small: latents identical" grep -q '^2 pairs in 2 latents: 2 identical' "$E/latents.md"

# size small in float32, the files' own dtype: diffusers maps the safetensors, the weights are
# the files' pages, in no footprint; the mapped table shows what eager keeps resident. Truth:
# the model files' sizes (eager holds both models' pages in denoise and decode, staged one or
# none), not the meter's own figures.
F=$tmp/f
"$SB" compare eager staged --pipeline "$P" --set size=small --seed 7 --cache "$C" --reps 1 \
	--interval 20ms --out "$F" >"$tmp/f.out" 2>"$tmp/f.err"
rc=$?
check "size small float32: compare exits 0 (got $rc: $(grep -v 'it/s' "$tmp/f.err" | tail -n 5))" [ "$rc" -eq 0 ]
te=$(stat -c %s "$C"/small/text_encoder/model.safetensors 2>/dev/null || echo 0)
tr=$(stat -c %s "$C"/small/transformer/diffusion_pytorch_model.safetensors 2>/dev/null || echo 0)
"$SB" table --format csv "$F"/eager-1.trace.jsonl.zst "$F"/staged-1.trace.jsonl.zst >"$tmp/f.csv"
mapped() { awk -F, -v s="$1" -v m="$2" 'NF == 6 && $1 == s && $2 == m && $3 ~ /^[0-9]+$/ { print $4; exit }' "$3"; }
for s in denoise decode; do
	e=$(mapped "$s" eager "$tmp/f.csv")
	st=$(mapped "$s" staged "$tmp/f.csv")
	check "size small float32, $s: eager keeps both model files resident (mapped $e bytes, files $te + $tr)" \
		awk -v e="$e" -v w="$((te + tr))" 'BEGIN { exit !(w > 0 && e >= 0.9 * w && e <= 1.1 * w + 16777216) }'
	check "size small float32, $s: staged maps at least 150 MB less ($st against $e bytes)" \
		awk -v e="$e" -v s="$st" 'BEGIN { exit !(s != "" && e - s >= 150000000) }'
done
check "size small float32: the verdict names the mapped model files in denoise and decode ($(grep -o 'mapped model files: [^.]*' "$F/table.md"))" \
	grep -Eq '; mapped model files: staged .* less in ([a-z_]+, )*denoise and decode' "$F/table.md"
check "size small float32: table.md has the mapped table" \
	grep -q '^| stage | eager, peak mapped | staged, peak mapped |$' "$F/table.md"

# The same pipeline with no adapter (no-adapter.json): diffusers' pipeline recognised, its
# components staged by a plan learned from one eager run, the stages named by what runs; at size
# small each stage's staged peak within 10 % of the hand-written adapter's, latents identical.
N=$tmp/n
"$SB" compare --pipeline "$root/pipelines/qwen-image/no-adapter.json" --set size=small \
	--set dtype=bfloat16 --seed 7 --cache "$C" --reps 1 --interval 20ms --out "$N" \
	>"$tmp/n.out" 2>"$tmp/n.err"
rc=$?
check "no adapter: compare exits 0 (got $rc: $(grep -v 'it/s' "$tmp/n.err" | tail -n 5))" [ "$rc" -eq 0 ]
check "no adapter: latents identical" grep -qE '^([0-9]+) pairs in [0-9]+ latents: \1 identical' \
	"$N/latents.md"
ev=$(events "$N/staged-1.trace.jsonl.zst")
check "no adapter: each component built in its stage, released after ($ev)" [ "$ev" = \
	"load text_encoder encode_prompt,release text_encoder transformer,load transformer transformer,release transformer vae.decode,load vae vae.decode," ]
"$SB" table --format csv "$N"/staged-1.trace.jsonl.zst >"$tmp/n.csv"
for pair in setup:setup encode:encode_prompt denoise:transformer decode:vae.decode; do
	a=$(peak "${pair%%:*}" staged "$tmp/e.csv")
	n=$(peak "${pair#*:}" staged "$tmp/n.csv")
	check "no adapter: ${pair#*:}: staged peak ($n bytes) within 10 % of the adapter's ${pair%%:*} ($a bytes)" \
		awk -v a="$a" -v n="$n" 'BEGIN { d = n - a; if (d < 0) d = -d; exit !(a > 0 && n > 0 && d <= 0.1 * a) }'
done

# A second diffusers pipeline, PixArtSigmaPipeline (T5 encoder, PixArt transformer, KL VAE), whose
# pipeline file has no adapter at all: staged from its learned plan, latents identical.
X=$tmp/x
"$SB" compare --pipeline "$root/pipelines/pixart-sigma/pipeline.json" --set size=tiny --seed 7 \
	--cache "$tmp/pixart" --reps 1 --interval 20ms --out "$X" >"$tmp/x.out" 2>"$tmp/x.err"
rc=$?
check "pixart-sigma: compare exits 0 (got $rc: $(grep -v 'it/s' "$tmp/x.err" | tail -n 5))" [ "$rc" -eq 0 ]
check "pixart-sigma: latents identical" grep -qE '^([0-9]+) pairs in [0-9]+ latents: \1 identical' \
	"$X/latents.md"
ev=$(events "$X/staged-1.trace.jsonl.zst")
check "pixart-sigma: each component built in its stage, released after ($ev)" [ "$ev" = \
	"load text_encoder encode_prompt,release text_encoder transformer,load transformer transformer,release transformer vae.decode,load vae vae.decode," ]
exit $fail
