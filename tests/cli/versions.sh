# versions: table and check say when the runs compared imported different library versions
# (traces/FORMAT.md, "versions" events), nothing when they agree or are unknown; JSON gives
# each run's versions. An old trace (no versions) and a library only one side imported
# (diffusers) are never a difference.
cd "$TMP" || exit 99
# run MODE TORCH PYTHON [DIFFUSERS]: the probe names Python at its start, torch once imported
run() {
	printf '{"type":"start","format":"stagebench/1","mode":"%s"}\n' "$1"
	printf '{"type":"event","kind":"versions","t":0.01,"versions":{"python":"%s","implementation":"CPython"}}\n' "$3"
	printf '{"type":"event","kind":"stage","stage":"work","t":1}\n'
	printf '{"type":"sample","t":1.5,"footprint":209715200}\n'
	printf '{"type":"event","kind":"versions","t":1.6,"versions":{"torch":"%s"}}\n' "$2"
	[ -n "${4:-}" ] && printf '{"type":"event","kind":"versions","t":1.7,"versions":{"diffusers":"%s"}}\n' "$4"
	printf '{"type":"sample","t":2.5,"footprint":209715200}\n'
	printf '{"type":"end","exit":0,"wall":3}\n'
}
old() {
	printf '{"type":"start","format":"stagebench/1","mode":"%s"}\n' "$1"
	printf '{"type":"event","kind":"stage","stage":"work","t":1}\n'
	printf '{"type":"sample","t":1.5,"footprint":209715200}\n'
	printf '{"type":"end","exit":0,"wall":3}\n'
}
mkdir base new same
run eager 2.6.0 3.11.2 >base/eager-1.trace.jsonl
run eager 2.6.0 3.11.2 >base/eager-2.trace.jsonl
run staged 2.6.0 3.11.2 0.30.0 >base/staged-1.trace.jsonl
run staged 2.6.0 3.11.2 0.30.0 >base/staged-2.trace.jsonl
run eager 2.15.0 3.11.2 >new/eager-1.trace.jsonl
run eager 2.15.0 3.13.5 >new/eager-2.trace.jsonl
run staged 2.15.0 3.11.2 0.30.0 >new/staged-1.trace.jsonl
run staged 2.15.0 3.11.2 0.30.0 >new/staged-2.trace.jsonl
run eager 2.6.0 3.11.2 >same/eager-1.trace.jsonl
run staged 2.6.0 3.11.2 0.30.0 >same/staged-1.trace.jsonl
old staged >same/staged-2.trace.jsonl
pick() {
	/usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
runs = [r for m in d["modes"] for r in m["runs"]] if "modes" in d else \
       [r for s in ("baseline", "candidate") for r in d[s]["runs"]]
for r in runs:
    print(r.get("path") or r.get("id"), json.dumps(r.get("versions")))
print("versions_differ", json.dumps(d.get("versions_differ")))'
}
echo "== table: eager ran torch 2.6.0, staged 2.15.0"
"$SB" table base/eager-1.trace.jsonl new/staged-1.trace.jsonl
echo "== table --format json"
"$SB" table --format json base/eager-1.trace.jsonl new/staged-1.trace.jsonl | pick
echo "== table: the same versions, and a trace without any: no note"
"$SB" table same/*.trace.jsonl | head -n 4
"$SB" table --format json same/*.trace.jsonl | pick
echo "== check"
"$SB" check --baseline base new | head -n 4
echo "== check --format json"
"$SB" check --format json --baseline base new | pick
echo "== check --format github"
"$SB" check --format github --baseline base new
echo "== check: the same versions: no note"
"$SB" check --baseline base base | head -n 3
