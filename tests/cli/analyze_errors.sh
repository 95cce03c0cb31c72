# analyze: usage errors exit 2, unreadable traces exit 3 with file:line.
"$SB" analyze 2>/dev/null; echo "no trace: $?"
"$SB" analyze --frob x 2>/dev/null; echo "bad option: $?"
"$SB" analyze -h | head -n 1; echo "help: $?"
printf '{"type":"start","mode":"eager"}\n{"type":"sample","t":"x"}\n' >"$TMP/bad.jsonl"
"$SB" analyze "$TMP/bad.jsonl" 2>"$TMP/err"; echo "garbage: $?"
sed "s|$TMP/||" "$TMP/err"
printf '{"type":"sample","t":1}\n' >"$TMP/nostart.jsonl"
"$SB" analyze --json "$TMP/nostart.jsonl" 2>/dev/null; echo "no start: $?"
