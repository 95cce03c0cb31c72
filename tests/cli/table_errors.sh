# Usage errors exit 2; garbage in a trace exits 3 naming file:line, with nothing on stdout.
# exit: 0
"$SB" table 2>/dev/null; echo "no trace: $?"
"$SB" table --format xml x 2>/dev/null; echo "bad format: $?"
"$SB" table --stages a,,b x 2>/dev/null; echo "bad stages: $?"
"$SB" table --bogus x 2>/dev/null; echo "bad option: $?"
"$SB" table --help | head -n 1; echo "help: $?"
printf '{"type":"start","mode":"eager"}\n{"type":"sample","t":1,"footprint":12}\nnot json\n' >"$TMP/bad.jsonl"
"$SB" table "$TMP/bad.jsonl" 2>"$TMP/err"; echo "garbage: $?"
sed "s|$TMP/||" "$TMP/err"
"$SB" table "$TMP/missing.jsonl" 2>/dev/null; echo "missing: $?"
printf '[{"mode":"eager","run":1,"exit":"three"}]\n' >"$TMP/runs.json"
printf '{"type":"start","mode":"eager"}\n' >"$TMP/eager-1.trace.jsonl"
"$SB" table "$TMP/eager-1.trace.jsonl" >/dev/null 2>&1; echo "bad runs.json: $?"
