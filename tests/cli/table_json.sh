# table in JSON, with --stages picking and ordering rows (export: not reached).
cd "$FIXTURES/stageload/2026-10-06-qwen-image" || exit 99
"$SB" table --format json --stages decode,denoise,export eager-1.trace.jsonl staged-1.trace.jsonl staged-2.trace.jsonl
