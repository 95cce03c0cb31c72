# The published offload run beside the Qwen-Image runs (issue 17's command): offload's
# footprint stayed low while swap grew more than eager's and the guard stopped it, so the
# table never says offload used less; staged swapped less than eager: its line stays.
cd "$FIXTURES/stageload" || exit 99
"$SB" table 2026-10-06-qwen-image/*.trace.jsonl 2026-10-08-qwen-image-offload/offload-1.trace.jsonl
