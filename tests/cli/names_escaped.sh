# Hostile names from a trace: a '|' and a line break in stage and mode names stay inside
# their markdown cell, CSV quotes them, and the terminal shows escape sequences as text.
t="$TMP/odd.trace.jsonl"
printf '%s\n' '{"type":"start","format":"stagebench/1","mode":"m|x"}' \
	'{"type":"sample","t":0.5,"footprint":1073741824}' \
	'{"type":"event","kind":"stage","stage":"a|b","t":1}' \
	'{"type":"sample","t":1.5,"footprint":2147483648}' \
	'{"type":"event","kind":"stage","stage":"two\nlines","t":2}' \
	'{"type":"sample","t":2.5,"footprint":3221225472}' \
	'{"type":"event","kind":"stage","stage":"\u001b[31mred","t":3}' \
	'{"type":"sample","t":3.5,"footprint":1073741824}' \
	'{"type":"end","exit":0,"wall":4}' >"$t"
"$SB" table "$t"
echo "--- csv"
"$SB" table --format csv "$t" | head -n 5
echo "--- analyze"
"$SB" analyze "$t" | sed -n '/^  stage /,$p'
