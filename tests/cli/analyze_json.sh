# analyze --json: bytes and seconds; the first eager attempt has no end record.
cd "$FIXTURES/stageload" || exit 99
"$SB" analyze --json 2026-10-06-qwen-image/first-attempt/eager-1.trace.jsonl 2026-10-08-qwen-image-offload/offload-1.trace.jsonl
