# history keys its series by the (mode, stage) pair: mode "a\u0001b" with stage "c" and mode "a"
# with stage "b\u0001c" are two series, not one.
cd "$TMP" || exit 99
mkdir c1
for m in 'a\u0001b:c' 'a:b\u0001c'; do
	mode=${m%%:*} stage=${m#*:}
	printf '%s\n' "{\"type\":\"start\",\"format\":\"stagebench/1\",\"mode\":\"$mode\",\"utc\":\"2026-11-01T10:00:00+00:00\",\"commit\":\"abc1234\",\"dirty\":false}" \
		'{"type":"sample","t":0.5,"footprint":104857600}' \
		"{\"type\":\"event\",\"kind\":\"stage\",\"stage\":\"$stage\",\"t\":1}" \
		'{"type":"sample","t":1.5,"footprint":209715200}' \
		'{"type":"end","exit":0,"wall":2}' >"c1/$(printf '%s' "$mode" | tr -dc a-z)-1.trace.jsonl"
done
"$SB" history --format csv c1 | tr '\001' '^'
