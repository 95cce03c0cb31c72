#!/bin/sh
# adapters.sh -- `stagebench compare` with pipelines/pixal3d-mac and pipelines/qwen-image as a
# user runs them, against the stand-ins of tests/python/standins (tiny models, CPU): every run
# completes, the staged traces load each model in its stage (the shape decoder again at
# decode, the two adapter-level releases), latents identical across variants.
set -u
. "$(dirname "$0")/common.inc"
if ! "$PY" -c "import torch, PIL" 2>/dev/null; then
	echo "SKIP adapters: no torch or PIL for $PY"
	exit 0
fi
# events TRACE: "kind name stage," for each load, reload and release
S=$root/tests/python/standins

# Pixal3D-mac: the checkout is the stand-in; python empty would look for its .venv.
"$PY" "$S/pixal3d_port/make_model_dir.py" "$tmp/pixal-model"
"$PY" -c "from PIL import Image; Image.new('RGB', (32, 32), (200, 30, 90)).save('$tmp/in.png')"
"$SB" compare eager staged --pipeline "$root/pipelines/pixal3d-mac/pipeline.json" \
	--set port="$S/pixal3d_port" --set image="$tmp/in.png" --set device=cpu \
	--set model_path="$tmp/pixal-model" --set python="$PY" --seed 7 --reps 1 \
	--out "$tmp/p" >"$tmp/p.out" 2>"$tmp/p.err"
rc=$?
check "pixal3d-mac: compare exits 0 (got $rc: $(tail -n 3 "$tmp/p.err"))" [ "$rc" -eq 0 ]
ev=$(events "$tmp/p/staged-1.trace.jsonl.zst")
check "pixal3d-mac: staged loads and releases ($ev)" [ "$ev" = "release rembg_model camera,\
load sparse_structure_flow_model structure,load sparse_structure_decoder structure,\
release sparse_structure_flow_model shape_512,release sparse_structure_decoder shape_512,\
load shape_slat_flow_model_512 shape_512,load shape_slat_decoder shape_512,\
release shape_slat_flow_model_512 shape_1024,release shape_slat_decoder shape_1024,\
load shape_slat_flow_model_1024 shape_1024,release shape_slat_flow_model_1024 texture,\
load tex_slat_flow_model_1024 texture,release tex_slat_flow_model_1024 decode,\
release image_cond_models decode,reload shape_slat_decoder decode,load tex_slat_decoder decode,\
release shape_slat_decoder export,release tex_slat_decoder export," ]
check "pixal3d-mac: latents identical" grep -q '^5 pairs in 5 latents: 5 identical' "$tmp/p/latents.md"

# Qwen-Image: diffusers and transformers are the stand-ins, on the caller's PYTHONPATH.
"$PY" "$S/qwen/make_model_dir.py" "$tmp/qwen-model"
PYTHONPATH="$S/qwen" STAGEBENCH_PYTHON="$PY" "$SB" compare eager staged offload \
	--pipeline "$root/pipelines/qwen-image/pipeline.json" --set model="$tmp/qwen-model" \
	--set device=cpu --set dtype=float32 --set width=128 --set height=128 --set steps=3 \
	--seed 7 --reps 1 --out "$tmp/q" >"$tmp/q.out" 2>"$tmp/q.err"
rc=$?
check "qwen-image: compare exits 0 (got $rc: $(tail -n 3 "$tmp/q.err"))" [ "$rc" -eq 0 ]
ev=$(events "$tmp/q/staged-1.trace.jsonl.zst")
check "qwen-image: staged loads and releases ($ev)" [ "$ev" = \
	"load text_encoder encode,release text_encoder denoise,load transformer denoise,release transformer decode," ]
ev=$(events "$tmp/q/eager-1.trace.jsonl.zst")
check "qwen-image: eager loads at setup ($ev)" [ "$ev" = "load text_encoder setup,load transformer setup," ]
check "qwen-image: latents (before and after the VAE) identical in the three variants" \
	grep -q '^6 pairs in 2 latents: 6 identical' "$tmp/q/latents.md"
exit $fail
