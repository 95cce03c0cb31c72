# history of runs that read a device: the device peak per stage over commits, the jump at
# the second commit marked as check marks it (work's MPS driver memory 1000 MiB -> 3000 MiB,
# its footprint unchanged); csv and json carry the same series.
cd "$TMP" || exit 99
drun() { # drun COMMIT UTC DEV_MIB
	printf '{"type":"start","format":"stagebench/1","mode":"staged","utc":"%s","commit":"%s","interval":0.5}\n' "$2" "$1"
	printf '{"type":"sample","t":0.5,"footprint":209715200}\n'
	printf '{"type":"event","kind":"stage","stage":"work","t":10}\n'
	printf '{"type":"event","kind":"gpu","stage":"work","device":"mps","metric":"mps_driver","bytes":52428800,"t":10.1}\n'
	printf '{"type":"sample","t":12.5,"footprint":209715200}\n'
	printf '{"type":"sample","t":15.25,"devmem":%s}\n' $(($3 * 1048576))
	printf '{"type":"end","exit":0,"wall":20}\n'
}
mkdir c1 c2
drun abc1234 2026-11-01T10:00:00+00:00 1000 >c1/staged-1.trace.jsonl
drun abc1234 2026-11-01T10:01:00+00:00 1010 >c1/staged-2.trace.jsonl
drun def5678 2026-11-01T11:00:00+00:00 3000 >c2/staged-1.trace.jsonl
drun def5678 2026-11-01T11:01:00+00:00 3020 >c2/staged-2.trace.jsonl
"$SB" history c1 c2 | awk '/^## /{p = /device peak/} p'
echo "--- csv"
"$SB" history --format csv c1 c2 | grep -e '^mode' -e 'device peak'
echo "--- json units"
"$SB" history --format json c1 c2 | grep -A6 '"units"'
