# table in CSV: the same figures unrounded, in bytes and seconds.
cd "$FIXTURES/stageload/2026-10-06-qwen-image" || exit 99
"$SB" table --format csv eager-1.trace.jsonl staged-1.trace.jsonl staged-2.trace.jsonl
