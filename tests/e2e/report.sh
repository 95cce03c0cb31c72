#!/bin/sh
# report.sh -- report.html: compare writes it beside its other outputs and prints its path;
# `stagebench report DIR` writes the same page again, and one from traces; the page holds the
# verdict, every stage's row, both charts as inline SVG, the latents, the failed run's error and
# stderr path, the first run named as an outlier (in the terminal and table.md too); it fetches
# nothing; a 100,000-stage trace's page stays bounded; bad input (runs.json missing, a trace cut
# short, hostile file and stage names) gives a page that says so and injects nothing.
# Needs SB_BIN; gnuplot for the charts.
set -u
. "$(dirname "$0")/common.inc"

# tags_ok PAGE: every element the page opens is one this project's pages or gnuplot's SVG use
# (a name from a trace that became markup would open another: script, img, iframe ...)
tags_ok() {
	bad=$(grep -o '<[A-Za-z][A-Za-z0-9]*' "$1" | tr -d '<' | sort -u | grep -vxE \
		'html|head|meta|title|style|body|main|h[1-6]|p|br|div|ul|li|table|thead|tbody|tr|th|td|figure|figcaption|footer|svg|g|defs|desc|path|rect|circle|use|polygon|polyline|line|text|tspan|clipPath|pattern|filter|feFlood|feComposite')
	[ -z "$bad" ] || { echo "  $1 opens: $bad"; return 1; }
}
# fetches_nothing PAGE: no URL the page could fetch (an element's src or href other than "#...",
# url() other than "#...", @import), and the policy that forbids any fetch
fetches_nothing() {
	! grep -qiE "<[a-z][^<>]*[[:space:]](src|href|xlink:href)=[\"']?[^\"'#]|url\\([\"']?[^#\"']|@import" "$1" &&
		grep -qF "content=\"default-src 'none'; style-src 'unsafe-inline'\"" "$1"
}

# The checks catch what they are for: a page with a script, one with an image fetched.
printf '<html><body><p>x</p><script>alert(1)</script></body></html>\n' >"$tmp/inj.html"
printf '<html><body><img src="http://example.com/x.png"></body></html>\n' >"$tmp/fetch.html"
if tags_ok "$tmp/inj.html" >/dev/null; then check "tags_ok fails on a page with a script" false; fi
if fetches_nothing "$tmp/fetch.html"; then check "fetches_nothing fails on an image fetched" false; fi

# A pipeline of its own: hostile stage names, eager run 1 2 s slower than run 2 (a first run
# that is an outlier), staged run 2 dying with an error that holds markup.
cat >"$tmp/pipe.py" <<'PY'
import json, os, sys, time
def stage(name):
    os.write(int(os.environ["STAGEBENCH_FD"]), (json.dumps(
        {"kind": "stage", "stage": name, "mono": time.clock_gettime(time.CLOCK_MONOTONIC)})
        + "\n").encode())
mode, run = sys.argv[1], sys.argv[2]
keep = []
for name in ("load", "a<script>alert(1)</script>", "q\"uo'te & <b>", "export"):
    stage(name)
    keep.append(bytearray(4 << 20))
    time.sleep(0.25)
    if mode == "eager" and run == "1" and name == "load":
        time.sleep(2)
    if mode == "staged" and run == "2" and name == "export":
        raise RuntimeError("<img src=x onerror=alert(2)> out of memory")
PY
printf '%s\n' '{"name": "rep", "command": ["{python}", "{pipeline_dir}/pipe.py", "{mode}", "{run}"],' \
	'"variants": {"eager": {}, "staged": {}}}' >"$tmp/rep.json"
O=$tmp/o
STAGEBENCH_PYTHON=$PY "$SB" compare eager staged --pipeline "$tmp/rep.json" --reps 2 \
	--interval 20ms --out "$O" >"$tmp/o.out" 2>"$tmp/o.err"
rc=$?
check "compare: exit 1, a run failed (got $rc: $(tail -n 3 "$tmp/o.err"))" [ "$rc" -eq 1 ]
check "compare prints report.html's path last on stdout" \
	[ "$(tail -n 1 "$tmp/o.out")" = "$O/report.html" ]
P=$O/report.html
check "report.html written" [ -s "$P" ]
check "report.html: under 1 MB ($(wc -c <"$P") bytes)" [ "$(wc -c <"$P")" -lt 1048576 ]
check "report.html: no element but ours and the charts'" tags_ok "$P"
check "report.html: fetches nothing" fetches_nothing "$P"
# the verdict first: the same sentence as table.md, before the table
verdict=$(grep -m1 -E '^In (every|the) stage' "$O/table.md")
vh=$(printf '%s' "$verdict" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g'"; s/'/\&#39;/g")
check "the verdict sentence of table.md is on the page ($verdict)" \
	sh -c "[ -n \"\$1\" ] && grep -qF -- \"\$1\" '$P'" sh "$vh"
check "the verdict comes first" awk '/id="verdict"/ { v = NR } /id="table"/ { t = NR }
	END { exit !(v && t && v < t) }' "$P"
for s in 'setup' 'load' 'a&lt;script&gt;alert(1)&lt;/script&gt;' 'q&quot;uo&#39;te &amp; &lt;b&gt;' 'export'; do
	check "the stage $s has its row" grep -qF "<tr><td>$s</td>" "$P"
done
check "both charts inline, named" sh -c "[ \$(grep -c '<svg role=\"img\"' '$P') -eq 2 ] &&
	grep -q '<figure id=\"chart-memory\">' '$P' && grep -q '<figure id=\"chart-stages\">' '$P'"
check "the charts' description names the stages" \
	grep -qF 'Stages: setup, load, a&lt;script&gt;alert(1)&lt;/script&gt;' "$P"
check "the stages chart labels its stages" grep -qF '<text>export</text>' "$O/stages.svg"
check "the latents section" grep -q '<h2 id="latents">Latents</h2>' "$P"
check "the failed run: its stage, its error escaped, its stderr's path" grep -qF \
	"staged run 2 failed in export: RuntimeError: &lt;img src=x onerror=alert(2)&gt; out of memory (exit code 1; its stderr: $O/staged-2.err)" "$P"
# the first run: eager run 1 took 2 s more than run 2 (its wall time from runs' traces)
check "table.md names the first run an outlier, with --warmup 1" \
	grep -q '^First run an outlier: eager run 1 .*took .* against .*--warmup 1 ' "$O/table.md"
check "so does the terminal" grep -q '^First run an outlier: eager run 1 ' "$tmp/o.out"
check "and the page, in the verdict" awk '/id="verdict"/ { v = 1 } /id="table"/ { v = 0 }
	v && /First run an outlier: eager run 1/ { f = 1 } END { exit !f }' "$P"
check "staged's first run is not named" sh -c "! grep -q 'staged run 1 .*outlier' '$O/table.md'"
check "versions, commands, hosts" sh -c "grep -q 'id=\"versions\"' '$P' &&
	grep -q 'id=\"commands\"' '$P' && grep -q 'id=\"hosts\"' '$P' &&
	grep -qF 'pipe.py eager 1</td>' '$P'"

# stagebench report DIR: the same page
cp "$P" "$tmp/first.html"
"$SB" report "$O" >"$tmp/r.out" 2>"$tmp/r.err"
rc=$?
check "report DIR: exit 1 as compare (got $rc: $(tail -n 3 "$tmp/r.err"))" [ "$rc" -eq 1 ]
check "report DIR prints the page's path" [ "$(cat "$tmp/r.out")" = "$P" ]
check "report DIR writes the page compare wrote, byte for byte" cmp -s "$tmp/first.html" "$P"
"$SB" report -o "$tmp/fromtraces" "$O"/eager-*.trace.jsonl.zst >"$tmp/t.out" 2>"$tmp/t.err"
check "report TRACE...: a page of the two eager runs" sh -c "
	[ \"\$(cat '$tmp/t.out')\" = '$tmp/fromtraces/report.html' ] &&
	grep -q '<title>stagebench: eager (fromtraces)</title>' '$tmp/fromtraces/report.html'"
"$SB" report >/dev/null 2>"$tmp/none.err"
check "report with nothing: a usage error" sh -c "[ $? -eq 2 ] && grep -q 'no directory or trace given' '$tmp/none.err'"
"$SB" report "$tmp/nosuch.trace.jsonl" >/dev/null 2>"$tmp/nosuch.err"
check "report of a file that is not there: exit 3, named" sh -c "[ $? -eq 3 ] &&
	grep -q 'nosuch.trace.jsonl.: no such file' '$tmp/nosuch.err'"

# Bad input: no runs.json, a trace cut short, a hostile file name (quotes, markup, a newline)
B=$tmp/bad
mkdir "$B"
cp "$O/eager-2.trace.jsonl.zst" "$B/"
cp "$O/staged-1.trace.jsonl.zst" "$B/st\"a'g<script>alert(3)<img src=x onerror=alert(4)>
x-1.trace.jsonl.zst"
# cut inside a line: ten whole lines and part of the eleventh (a cut at a line's end reads as a
# recorder that died, not as a damaged trace)
zstd -qdc "$O/eager-1.trace.jsonl.zst" | head -n 11 | "$PY" -c 'import sys
d = sys.stdin.buffer.read()
sys.stdout.buffer.write(d[:d.rindex(b"\n", 0, len(d) - 1) + 41])' >"$B/eager-1.trace.jsonl"
"$SB" report "$B" >"$tmp/b.out" 2>"$tmp/b.err"
rc=$?
check "bad input: a page all the same (exit $rc: $(tail -n 2 "$tmp/b.err"))" [ -s "$B/report.html" ]
check "bad input: no element but ours and the charts'" tags_ok "$B/report.html"
check "bad input: fetches nothing" fetches_nothing "$B/report.html"
check "bad input: runs.json missing is said" grep -qF "$B/runs.json is missing" "$B/report.html"
check "bad input: the trace cut short is said" \
	grep -qF "eager-1: its trace $B/eager-1.trace.jsonl is cut short or damaged" "$B/report.html"
check "bad input: the hostile name is shown escaped, its newline as \\n" grep -qF \
	'st&quot;a&#39;g&lt;script&gt;alert(3)&lt;img src=x onerror=alert(4)&gt;\nx-1' "$B/report.html"
check "bad input: the run's mode is its trace's, not its file name's" \
	grep -qF '<title>stagebench: eager against staged (bad)</title>' "$B/report.html"
rm "$B"/*.trace.jsonl*
"$SB" report "$B" >/dev/null 2>"$tmp/e.err"
rc=$?
check "no trace at all: exit 3, a page that says so (got $rc)" sh -c "[ $rc -eq 3 ] &&
	grep -q 'holds no trace: there is nothing to report' '$B/report.html' &&
	grep -q 'No verdict: no run could be read' '$B/report.html'"

# 100,000 stages: the page stays small, its tables cut, its stages chart the 60 highest
L=$tmp/long
mkdir "$L"
"$PY" - "$L/run-1.trace.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"type": "start", "format": "stagebench/1", "interval": 0.01,
                        "mode": "staged", "command": ["long"]}) + "\n")
    for i in range(100000):
        t = 0.02 * i + 0.01
        f.write('{"type":"event","kind":"stage","t":%.3f,"stage":"stage_%06d"}\n' % (t, i))
        f.write('{"type":"sample","t":%.3f,"footprint":%d}\n' % (t + 0.005, (100 + i % 1000) << 20))
    f.write('{"type":"end","exit":0,"wall":2000.01}\n')
PY
"$SB" report "$L/run-1.trace.jsonl" >/dev/null 2>"$tmp/l.err"
check "100,000 stages: a page (exit $?: $(tail -n 2 "$tmp/l.err"))" [ -s "$L/report.html" ]
size=$(wc -c <"$L/report.html")
check "100,000 stages: the page under 1 MB ($size bytes)" [ "$size" -lt 1048576 ]
check "100,000 stages: table.md has every row" [ "$(grep -c '^| stage_' "$L/table.md")" -eq 100000 ]
check "100,000 stages: the page's table 400 rows, the rest counted" sh -c "
	[ \$(sed -n '/id=\"table\"/,/<\/table>/p' '$L/report.html' | grep -c '^<tr><td>[a-z]') -eq 400 ] &&
	grep -qF '... and 99601 more rows, left out of this page' '$L/report.html'"
if command -v gnuplot >/dev/null 2>&1; then
	# the 60 highest peaks: footprint (100 + i % 1000) MiB, highest at i % 1000 = 999..
	bars=$(grep -o '<text>stage_[0-9]*</text>' "$L/stages.svg" | sort -u | wc -l)
	check "100,000 stages: the stages chart draws 60 of them ($bars)" [ "$bars" -le 60 ]
	check "100,000 stages: those with the highest peaks" sh -c "
		grep -o '<text>stage_[0-9]*</text>' '$L/stages.svg' | grep -o '[0-9]*' |
		awk '{ if (\$1 % 1000 < 999) bad = 1 } END { exit bad }'"
	check "100,000 stages: said under the charts" grep -qF \
		'The stages chart draws the 60 of the 100001 stages with the highest peaks' "$L/report.html"
fi

exit $fail
