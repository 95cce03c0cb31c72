# --supplement fills only stages no main run of its mode entered: the main
# eager run (the first attempt) was stopped in setup, so encode, denoise and
# decode come from the supplement eager-1; setup stays the main run's.
cd "$FIXTURES/stageload/2026-10-06-qwen-image" || exit 99
"$SB" table --supplement eager-1.trace.jsonl first-attempt/eager-1.trace.jsonl staged-1.trace.jsonl staged-2.trace.jsonl
