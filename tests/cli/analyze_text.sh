# analyze, human text: the staged run whose decode releases took 5 s (window
# from 122.091), the eager run stopped per runs.json, the Pixal3D run with a
# reload and an explicit setup stage.
cd "$FIXTURES/stageload" || exit 99
"$SB" analyze 2026-10-06-qwen-image/staged-1.trace.jsonl 2026-10-06-qwen-image/eager-1.trace.jsonl \
	2026-10-05/showcase/moss_native.trace.jsonl
