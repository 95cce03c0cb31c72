# table on the real Qwen-Image runs, markdown. Expected figures: see
# tests/unit/test_table.c (hand-computed with python3 over the JSON lines).
# eager-1 ends with `end` but runs.json says exit 3: stopped by the guard.
cd "$FIXTURES/stageload/2026-10-06-qwen-image" || exit 99
"$SB" table eager-1.trace.jsonl staged-1.trace.jsonl staged-2.trace.jsonl
