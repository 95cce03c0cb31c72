# A damaged trace with a huge time (t: 1e300) prints it in a bounded form, "1.0e300 s", in
# analyze and in table, never a 300-digit number or a cell cut short without its unit.
t="$TMP/huge.trace.jsonl"
printf '%s\n' '{"type":"start","format":"stagebench/1","mode":"m"}' \
	'{"type":"sample","t":0.5,"footprint":1073741824}' \
	'{"type":"event","kind":"stage","stage":"long","t":1}' \
	'{"type":"sample","t":1e300,"footprint":2147483648}' \
	'{"type":"end","exit":0,"wall":1e300}' >"$t"
"$SB" analyze "$t" | sed "s|$TMP/||"
echo "--- table"
"$SB" table "$t"
echo "--- longest line"
{ "$SB" analyze "$t"; "$SB" table "$t"; } | awk '{ if (length($0) > n) n = length($0) } END { print (n < 200 ? "under 200" : n) }'
