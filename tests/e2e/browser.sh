#!/bin/sh
# browser.sh -- report.html in a real browser: Debian's chromium, headless, loads the demo's
# report from a file:// URL with no network (a network namespace of its own), takes a
# screenshot and dumps the DOM it rendered: the verdict, the nine demo stages' rows, both charts
# as SVG with the stage names, the latents; no console message, no request of the page's. A
# second page, of a comparison in which a run failed, shows the failure and its error as text
# (no element made of it). The checks are shown to catch what they look for on pages that
# break them. Needs SB_BIN, chromium and python3-torch (the demo); gnuplot for the charts.
set -u
. "$(dirname "$0")/common.inc"

CR=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CR" ]; then
	echo "  SKIP browser.sh: no chromium (scripts/deps.sh test installs it)"
	exit 0
fi
# No network: a namespace of its own when we may make one; the page's policy forbids any
# fetch either way, and the net log below says what was asked for.
NONET=
if unshare -n true 2>/dev/null; then
	NONET="unshare -n"
elif unshare -rn true 2>/dev/null; then
	NONET="unshare -rn"
else
	echo "  note browser.sh: no network namespace here; the net log alone shows no request"
fi

# browse NAME URL: chromium's DOM in $tmp/NAME.dom, its log in NAME.log, its net log in
# NAME.net, a screenshot in NAME.png. Chromium's own background services (updates, time)
# are turned off as far as flags go; their hosts are left out of the requests below.
browse() {
	for what in dump-dom screenshot; do
		arg=--dump-dom
		[ "$what" = screenshot ] && arg="--screenshot=$tmp/$1.png"
		# shellcheck disable=SC2086
		timeout 120 $NONET "$CR" --headless --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$tmp/profile-$1-$what" --disable-background-networking \
			--disable-component-update --disable-sync --disable-extensions \
			--disable-default-apps --disable-features=Translate,SpellCheck,MediaRouter \
			--window-size=1280,2400 --hide-scrollbars --enable-logging=stderr --v=0 \
			--log-net-log="$tmp/$1-$what.net" "$arg" "$2" >"$tmp/$1.$what" 2>"$tmp/$1-$what.log"
	done
	mv "$tmp/$1.dump-dom" "$tmp/$1.dom"
	cat "$tmp/$1-dump-dom.log" "$tmp/$1-screenshot.log" >"$tmp/$1.log"
	cat "$tmp/$1-dump-dom.net" "$tmp/$1-screenshot.net" >"$tmp/$1.net" 2>/dev/null
}
# requests NAME: the URLs chromium asked for that are not its own services'
requests() {
	grep -o '"url":"[^"]*"' "$tmp/$1.net" | sort -u |
		grep -vE '"url":"https?://([a-z0-9-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)/' |
		grep -v '"url":"file://'
}
# console NAME: the console messages (an error, a policy violation) logged while the page was
# shown, less those of chromium's own pages (source: chrome://..., as its "Slow network is
# detected" notice when the machine is busy)
console() { grep ':CONSOLE' "$tmp/$1.log" | grep -v 'source: chrome://'; }
consoled() { [ -n "$(console "$1")" ]; }

# The checks catch what they are for: an image fetched, a console error.
printf '<!DOCTYPE html><html><body><p>x</p><img src="http://example.invalid/x.png"></body></html>\n' \
	>"$tmp/fetch.html"
browse fetch "file://$tmp/fetch.html"
check "a page that fetches an image: the request is seen ($(requests fetch))" \
	sh -c "grep -o '\"url\":\"[^\"]*\"' '$tmp/fetch.net' | grep -q 'example.invalid/x.png'"
printf '<!DOCTYPE html><html><body><p>x</p><script>console.error("boom")</script></body></html>\n' \
	>"$tmp/console.html"
browse console "file://$tmp/console.html"
check "a page that logs a console error: it is seen" consoled console

# The demo's report
STAGEBENCH_PYTHON=$PY "$SB" compare eager staged --seed 7 --size tiny --out "$tmp/demo" \
	>"$tmp/demo.out" 2>"$tmp/demo.err"
rc=$?
check "the demo compare: exit 0 (got $rc: $(tail -n 3 "$tmp/demo.err"))" [ "$rc" -eq 0 ]
check "it prints report.html's path" [ "$(tail -n 1 "$tmp/demo.out")" = "$tmp/demo/report.html" ]
size=$(wc -c <"$tmp/demo/report.html")
check "the demo's report under 1 MB ($size bytes)" [ "$size" -lt 1048576 ]
browse demo "file://$tmp/demo/report.html"
D=$tmp/demo.dom
check "chromium rendered the page" grep -q '<h1>stagebench: eager against staged (demo)</h1>' "$D"
verdict=$(grep -m1 -E '^In (every|the) stage' "$tmp/demo/table.md" |
	sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g') # as the DOM serializes text
check "the verdict, as table.md says it ($verdict)" sh -c "[ -n \"\$1\" ] &&
	sed -n '/<div class=\"verdict\">/,/<\\/div>/p' '$D' | grep -qF -- \"\$1\"" sh "$verdict"
# the reader line: table.md's first, the verdict's first paragraph, the reader that ran (the
# run's own cgroup where one can be made, else the per-process one)
reader=$(head -n 1 "$tmp/demo/table.md" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')
check "the verdict opens with table.md's reader line ($reader)" sh -c "[ -n \"\$1\" ] &&
	sed -n '/<div class=\"verdict\">/,/<\\/div>/p' '$D' | sed -n 2p | grep -qxF -- \"<p>\$1</p>\"" sh "$reader"
case $reader in
"Footprint reader: cgroup v"[12]" (every run)." | "Footprint reader: per-process (every run). The per-process reader"*) ;;
*) echo "FAIL browser: the demo's reader line names no reader that runs here: $reader"; fail=1 ;;
esac
stages="setup preprocess camera structure shape_512 shape_1024 texture decode export"
n=0
# Each stage's row as table.md has it: a figure in both cells, or "no sample" where a stage of a
# few milliseconds ended before the recorder read its start (a busy machine), said under it.
for s in $stages; do
	n=$((n + 1))
	cells=$(awk -F' [|] ' -v s="$s" '$1 == "| " s { sub(/ [|]$/, "", $3); print $2 "</td><td>" $3; exit }' \
		"$tmp/demo/table.md")
	check "the stage row $s, as table.md's ($cells; rendered: $(grep -o "<tr><td>$s</td>.*" "$D" |
		head -n 2 | tr '\n' ' '))" sh -c "echo '$cells' | grep -qxE '([0-9.]+ (to [0-9.]+ )?[MG]B|no sample)</td><td>([0-9.]+ (to [0-9.]+ )?[MG]B|no sample)' &&
		grep -qF '<tr><td>$s</td><td>$cells</td></tr>' '$D'"
done
check "nine stages" [ "$n" -eq 9 ]
if grep -q '| no sample |' "$tmp/demo/table.md"; then
	check "a stage with no sample is said on the page" grep -q '<p>No sample in ' "$D"
fi
# the charts: each the svg element of its figure, with the stage names as text
awk '/<figure id="chart-memory">/ { f = 1 } f { print } f && /<\/figure>/ { exit }' "$D" >"$tmp/memory.svgdom"
awk '/<figure id="chart-stages">/ { f = 1 } f { print } f && /<\/figure>/ { exit }' "$D" >"$tmp/stages.svgdom"
for c in memory stages; do
	check "the $c chart is an SVG element with its name" grep -q '<svg role="img" aria-label="' "$tmp/$c.svgdom"
done
for s in $stages; do
	check "the stages chart labels $s" grep -q "<text>$s</text>" "$tmp/stages.svgdom"
	check "the memory chart's description names $s" grep -q "<desc>Runs: .*Stages: .*$s" "$tmp/memory.svgdom"
done
check "the memory chart labels stage bands" grep -q '<text>export</text>' "$tmp/memory.svgdom"
check "the latents section" grep -q '<h2 id="latents">Latents</h2>' "$D"
# The plan: each model's row as the traces' events say, read here on their own: per run, the
# stage in force (the last stage event) at each load and release; a load while the model is
# loaded is one more build; a model not released is held to the end.
plan_of() {
	zstd -dc "$1" | awk '
	function field(k,   m) {
		if (!match($0, "\"" k "\":\"[^\"]*\"")) return ""
		m = substr($0, RSTART + length(k) + 4, RLENGTH - length(k) - 5); return m
	}
	function add(a, n, v) { a[n] = a[n] (a[n] == "" ? "" : ", ") v }
	function close_builds(n) { if (builds[n] > 1) L[n] = L[n] " (" builds[n] " builds)"; open[n] = 0 }
	/"kind":"stage"/ { stage = field("stage"); next }
	/"kind":"(load|reload|release)"/ {
		n = field("name"); k = field("kind"); s = stage == "" ? "setup" : stage
		if (!(n in seen)) { seen[n] = 1; order[++nm] = n }
		if (k == "release") {
			if (open[n]) close_builds(n); else add(L, n, "no load event")
			add(R, n, s)
		} else if (open[n]) {
			builds[n]++
		} else {
			add(L, n, s (k == "reload" ? " (reload)" : "")); open[n] = 1; builds[n] = 1
		}
	}
	END { for (i = 1; i <= nm; i++) { n = order[i]
		if (open[n]) { close_builds(n); add(R, n, "held to the end") }
		print n "\t" L[n] "\t" R[n] } }' | sort
}
# plan_rows DOM: every model of the traces has its row in DOM's plan section, its cells (the
# size left aside) the ones the events give; where a variant's runs disagree on a model, the
# section says they do not agree, and its row is not compared
plan_rows() {
	awk '/<h2 id="plan">/ { f = 1; next } f && /<h2/ { exit } f' "$1" >"$tmp/plan.section"
	bad=
	for m in eager staged; do
		for t in "$tmp/demo/$m"-*.trace.jsonl.zst; do plan_of "$t" >"$t.plan"; done
		cat "$tmp/demo/$m"-*.trace.jsonl.zst.plan | sort | uniq -c |
			awk -v n="$(ls "$tmp/demo/$m"-*.trace.jsonl.zst | wc -l)" '$1 == n' |
			sed 's/^ *[0-9]* //' >"$tmp/plan.$m"
		cut -f1 "$tmp/demo/$m"-*.trace.jsonl.zst.plan | sort -u >"$tmp/models.$m"
		if [ "$(wc -l <"$tmp/plan.$m")" -ne "$(wc -l <"$tmp/models.$m")" ] &&
			! grep -q "The [0-9]* $m runs do not agree on the plan of: " "$tmp/plan.section"; then
			bad="$bad the $m runs disagree, not said;"
		fi
	done
	[ -s "$tmp/plan.eager" ] && [ -s "$tmp/plan.staged" ] || bad="$bad no events read;"
	for model in $(cat "$tmp/models.eager" "$tmp/models.staged" | sort -u); do
		want=
		for m in eager staged; do
			cells=$(awk -F'\t' -v n="$model" '$1 == n { print "<td>" $2 "</td><td>" $3 "</td>" }' "$tmp/plan.$m")
			if [ -z "$cells" ] && grep -qx "$model" "$tmp/models.$m"; then
				want=skip
				break
			fi
			want="$want${cells:-<td>-</td><td>-</td>}"
		done
		[ "$want" = skip ] && continue
		got=$(grep -o "<tr><td>$model</td><td>[^<]*</td>.*</tr>" "$tmp/plan.section" |
			sed 's|^<tr><td>[^<]*</td><td>[^<]*</td>||; s|</tr>$||')
		[ "$got" = "$want" ] || bad="$bad $model: $got, not $want;"
	done
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}
check "the plan's section, after the table" awk '/id="table"/ { t = NR } /<h2 id="plan">Models: where each was loaded and released<\/h2>/ { p = NR }
	END { exit !(t && p && t < p) }' "$D"
r=$(plan_rows "$D")
check "the plan: each model's load and release stage as the traces say ($r)" [ -z "$r" ]
check "the plan: staged loads after setup and releases (the check reads a plan at all)" \
	grep -q '<td>preprocess</td><td>camera</td></tr>' "$tmp/plan.section"
check "the plan: eager's in one sentence" grep -q 'eager: every model loaded in setup and held to the end.' "$tmp/plan.section"
sed 's|<td>shape_1024</td><td>texture</td></tr>|<td>shape_1024</td><td>decode</td></tr>|' "$D" >"$tmp/tampered.dom"
r=$(plan_rows "$tmp/tampered.dom")
check "the plan check catches a release stage that is not the trace's ($r)" [ -n "$r" ]
check "the plan in table.md and the terminal too" sh -c "grep -q '^## Models: where each was loaded and released\$' '$tmp/demo/table.md' &&
	grep -q '^## Models: where each was loaded and released\$' '$tmp/demo.out'"
check "no console message ($(console demo | head -n 2))" [ -z "$(console demo)" ]
check "no request of the page's ($(requests demo | head -n 3))" [ -z "$(requests demo)" ]
check "a screenshot" sh -c "[ \$(wc -c <'$tmp/demo.png') -gt 50000 ]"
[ -n "${SCREENSHOTS:-}" ] && cp "$tmp/demo.png" "$SCREENSHOTS/demo-report.png"

# A comparison in which a run failed
cat >"$tmp/pipe.py" <<'PY'
import json, os, sys, time
def stage(name):
    os.write(int(os.environ["STAGEBENCH_FD"]), (json.dumps(
        {"kind": "stage", "stage": name, "mono": time.clock_gettime(time.CLOCK_MONOTONIC)})
        + "\n").encode())
keep = []
for name in ("load", "denoise", "decode"):
    stage(name)
    keep.append(bytearray(8 << 20))
    time.sleep(0.2)
    if sys.argv[1] == "staged" and name == "denoise":
        raise RuntimeError("<img src=x onerror=alert(1)> CUDA out of memory in denoise")
PY
printf '%s\n' '{"name": "dies", "command": ["{python}", "{pipeline_dir}/pipe.py", "{mode}"],' \
	'"variants": {"eager": {}, "staged": {}}}' >"$tmp/dies.json"
# (read process by process: the page says so at the top of its verdict)
STAGEBENCH_CGROUP=0 STAGEBENCH_PYTHON=$PY "$SB" compare eager staged --pipeline "$tmp/dies.json" --reps 1 \
	--interval 20ms --out "$tmp/dies" >"$tmp/dies.out" 2>"$tmp/dies.err"
rc=$?
check "a failed run: exit 1 (got $rc: $(tail -n 3 "$tmp/dies.err"))" [ "$rc" -eq 1 ]
browse dies "file://$tmp/dies/report.html"
F=$tmp/dies.dom
check "failed: the section, after the verdict" awk '/id="verdict"/ { v = NR } /id="failed"/ { f = NR }
	END { exit !(v && f && v < f) }' "$F"
check "failed: the run, its stage, its error as text, its stderr's path" grep -qF \
	"staged run 1 failed in denoise: RuntimeError: &lt;img src=x onerror=alert(1)&gt; CUDA out of memory in denoise (exit code 1; its stderr: $tmp/dies/staged-1.err)" "$F"
check "failed: no element made of the error" sh -c "! grep -q '<img' '$F'"
first=$(sed -n '/<div class="verdict">/,/<\/div>/p' "$F" | sed -n 2p)
check "per-process: the verdict opens with the reader and what it can miss ($first)" sh -c "
	case \"\$1\" in '<p>Footprint reader: per-process (every run). The per-process reader adds up'*'off by tens of percent'*'</p>') exit 0 ;; esac; exit 1" sh "$first"
check "failed: the run summary says how it ended" grep -q '<tr><td>staged-1</td><td>exit code 1' "$F"
check "failed: no load event, no plan section" sh -c "! grep -q 'id=\"plan\"' '$F'"
check "failed: no console message ($(console dies | head -n 2))" [ -z "$(console dies)" ]
check "failed: no request of the page's ($(requests dies | head -n 3))" [ -z "$(requests dies)" ]
[ -n "${SCREENSHOTS:-}" ] && cp "$tmp/dies.png" "$SCREENSHOTS/failed-report.png"

exit $fail
