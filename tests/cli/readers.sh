# readers: which reader read each run's footprint (common/reader.h, traces/FORMAT.md "mark"):
# the "meter: TOKEN: WORDS" mark (every reader), the cgroup reader's older words, a macOS
# trace (one reader, no mark needed), a Linux trace older than the mark (unknown); analyze
# (text, JSON) and table (markdown, JSON) name it, the per-process reader with its caveat,
# and a table whose runs were read differently says their figures are not comparable.
cd "$TMP" || exit 99
# run MODE BACKEND [NOTE]: a trace whose meter backend is BACKEND, with a mark NOTE at t 0
run() {
	printf '{"type":"start","format":"stagebench/1","mode":"%s","meter":{"backend":"%s","footprint":"x"}}\n' "$1" "$2"
	[ -n "${3:-}" ] && printf '{"type":"event","kind":"mark","t":0,"note":"%s"}\n' "$3"
	printf '{"type":"event","kind":"stage","stage":"work","t":1}\n'
	printf '{"type":"sample","t":1.5,"footprint":209715200}\n'
	printf '{"type":"end","exit":0,"wall":3}\n'
}
run eager linux "meter: cgroup-v2: footprint read from the run's own memory cgroup (v2 memory.stat anon + shmem), every process of the tree in it" >v2.trace.jsonl
run eager linux "meter: footprint read from the run's own memory cgroup (v1 memory.stat total_rss + total_shmem), every process of the tree in it" >v1-old.trace.jsonl
run staged linux "meter: per-process: footprint read process by process" >pp.trace.jsonl
run staged macos >mac.trace.jsonl
run eager linux >old.trace.jsonl
run staged linux "meter: sideways: a reader this version does not know" >odd.trace.jsonl
echo "== analyze: each trace's reader"
"$SB" analyze v2.trace.jsonl v1-old.trace.jsonl pp.trace.jsonl mac.trace.jsonl old.trace.jsonl \
	odd.trace.jsonl | grep -E '\.trace\.jsonl$|footprint reader|^ {21}[A-Z]'
echo "== analyze --json: the reader's token"
"$SB" analyze --json v2.trace.jsonl v1-old.trace.jsonl pp.trace.jsonl mac.trace.jsonl old.trace.jsonl |
	/usr/bin/python3 -c 'import json, sys; [print(r["path"], r["reader"]) for r in json.load(sys.stdin)["runs"]]'
echo "== table: one reader"
"$SB" table v2.trace.jsonl | head -n 1
echo "== table: cgroup against per-process, not comparable"
"$SB" table v1-old.trace.jsonl pp.trace.jsonl | head -n 1
echo "== table: a known reader and an unknown one"
"$SB" table old.trace.jsonl mac.trace.jsonl | head -n 1
echo "== table --format json"
"$SB" table --format json v1-old.trace.jsonl pp.trace.jsonl | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for m in d["modes"]:
    for r in m["runs"]:
        print(m["mode"], r["path"], r["reader"])
print("readers_differ", d["readers_differ"])'
