# one value, one reading: check's baseline range and history's cell for the same runs print
# the same figures (1034 and 1044 MiB: "1.01 to 1.02 GB"), by the one range form of units.h.
cd "$TMP" || exit 99
. "$OLDPWD/history_runs.inc"
mkdir -p a b
hrun abc1234 false 2026-11-01T10:00:00+00:00 1034 20 >a/staged-1.trace.jsonl
hrun abc1234 false 2026-11-01T10:01:00+00:00 1044 21 >a/staged-2.trace.jsonl
hrun def5678 false 2026-11-01T11:00:00+00:00 1700 20 >b/staged-1.trace.jsonl
hrun def5678 false 2026-11-01T11:01:00+00:00 1710 21 >b/staged-2.trace.jsonl
"$SB" check --baseline a b | grep '| work | peak footprint' | cut -d'|' -f5
"$SB" history a b | grep '| work |' | head -n 1 | cut -d'|' -f4
