#!/bin/sh
# readers.sh -- which reader read the footprint, in what a user of a real comparison reads:
# the demo compared at its tiny size under STAGEBENCH_CGROUP=0 (the per-process reader) and
# with the run's own memory cgroup (the default where one can be made: cgroup v1 on a root
# machine with v1's memory controller, v2 in a delegated subtree) says which in table.md's
# first line, in the terminal's first line under the table's heading, in report.html's
# verdict (its first paragraph) and run summary, and in analyze (text, JSON); the
# per-process reader with its one sentence on what it can miss, the cgroup reader without;
# nothing there reads "exact"; a table of one run of each says they are not comparable.
# Needs SB_BIN and python3-torch (the demo).
set -u
. "$(dirname "$0")/common.inc"

# page_reader HTML: report.html's verdict, first paragraph, and the run summary's reader cells
page() {
	"$PY" - "$1" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.div = self.p = self.h2 = None
        self.paras, self.cells, self.td, self.section = [], [], None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and a.get("class") == "verdict":
            self.div = True
        elif tag == "p" and self.div:
            self.p = ""
        elif tag == "h2":
            self.section = a.get("id")
        elif tag == "td" and self.section == "runs":
            self.td = ""
    def handle_endtag(self, tag):
        if tag == "p" and self.p is not None:
            self.paras.append(self.p)
            self.p = None
        elif tag == "div" and self.div:
            self.div = False
        elif tag == "td" and self.td is not None:
            self.cells.append(self.td)
            self.td = None
        elif tag == "tr" and self.section == "runs" and self.cells:
            print("row", self.cells[-1])
            self.cells = []
    def handle_data(self, d):
        if self.p is not None:
            self.p += d
        if self.td is not None:
            self.td += d
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print("verdict", p.paras[0] if p.paras else "(none)")
PY
}

# checks DIR LABEL CAVEAT(yes|no): what a comparison in DIR says of its reader LABEL
checks() {
	d=$1 label=$2 caveat=$3
	want="Footprint reader: $label (every run)."
	first=$(head -n 1 "$d/table.md")
	check "$label: table.md opens with its reader ($first)" \
		sh -c "case \"\$1\" in \"\$2\"*) exit 0 ;; esac; exit 1" sh "$first" "$want"
	term=$(awk 'p && NF { print; exit } /^## Per-stage peak footprint$/ { p = 1 }' "$d.out")
	check "$label: the terminal's first line under the table's heading is it ($term)" [ "$term" = "$first" ]
	check "$label: the terminal's run summary names it for each run" \
		[ "$(grep -c "^| [a-z]*-1 | completed | .* | $label |\$" "$d.out")" -eq 2 ]
	page "$d/report.html" >"$d.page"
	v=$(sed -n 's/^verdict //p' "$d.page")
	check "$label: report.html's verdict opens with it ($v)" [ "$v" = "$first" ]
	check "$label: report.html's run summary names it for each run" \
		[ "$(grep -c "^row $label\$" "$d.page")" -eq 2 ]
	"$SB" analyze "$d/eager-1.trace.jsonl.zst" >"$d.analyze"
	check "$label: analyze says it" grep -q "^  footprint reader   $label\$" "$d.analyze"
	tok=$("$SB" analyze --json "$d/staged-1.trace.jsonl.zst" |
		"$PY" -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["reader"])')
	check "$label: analyze --json's reader ($tok)" [ "$tok" = "$4" ]
	if [ "$caveat" = yes ]; then
		check "$label: what it can miss, in table.md's line" \
			sh -c "echo \"\$1\" | grep -q 'shared memory that forked workers write between its readings and miss the pages of short-lived workers, so its figures may be off by tens of percent' && echo \"\$1\" | grep -q 'a memory cgroup of the run.s own reads each page once (docs/platforms.md)'" sh "$first"
		check "$label: and in analyze" grep -q 'off by tens of percent' "$d.analyze"
	else
		check "$label: no caveat" sh -c "! grep -q 'tens of percent' '$d/table.md' '$d.analyze'"
	fi
	check "$label: nothing reads exact" sh -c "! grep -qi exact '$d/table.md' '$d.out' '$d.analyze' '$d.page'"
}

STAGEBENCH_CGROUP=0 STAGEBENCH_PYTHON=$PY "$SB" compare eager staged --seed 7 --size tiny --reps 1 \
	--out "$tmp/pp" >"$tmp/pp.out" 2>"$tmp/pp.err"
rc=$?
check "per-process: compare exits 0 (got $rc: $(tail -n 3 "$tmp/pp.err"))" [ "$rc" -eq 0 ]
checks "$tmp/pp" per-process yes per-process

# the cgroup half where the recorder makes a cgroup of the run's own (its probe's mark says which)
export STAGEBENCH_CGROUP=1
"$SB" record -q -o "$tmp/probe.zst" -- true 2>/dev/null
tok=$(zstdcat "$tmp/probe.zst" 2>/dev/null | grep -o '"note":"meter: cgroup-v[12]' | head -1)
tok=${tok#*meter: }
case $tok in
cgroup-v1) cg="cgroup v1" ;;
cgroup-v2) cg="cgroup v2" ;;
*) cg= ;;
esac
if [ -z "$cg" ]; then
	echo "  note readers.sh: no memory cgroup of the run's own can be made here: the cgroup half is skipped"
	exit $fail
fi
STAGEBENCH_PYTHON=$PY "$SB" compare eager staged --seed 7 --size tiny --reps 1 \
	--out "$tmp/cg" >"$tmp/cg.out" 2>"$tmp/cg.err"
rc=$?
check "$cg: compare exits 0 (got $rc: $(tail -n 3 "$tmp/cg.err"))" [ "$rc" -eq 0 ]
checks "$tmp/cg" "$cg" no "$tok"

# one run of each reader in one table: said not comparable, on its first line
mixed=$("$SB" table "$tmp/cg/eager-1.trace.jsonl.zst" "$tmp/pp/staged-1.trace.jsonl.zst" | head -n 1)
check "runs of two readers: not comparable ($mixed)" sh -c "case \"\$1\" in \"Footprint reader: eager: $cg; staged: per-process. The runs were read by different readers: their figures are not comparable as they are. The per-process reader\"*) exit 0 ;; esac; exit 1" sh "$mixed"
differ=$("$SB" table --format json "$tmp/cg/eager-1.trace.jsonl.zst" "$tmp/pp/staged-1.trace.jsonl.zst" |
	"$PY" -c 'import json, sys; print(json.load(sys.stdin)["readers_differ"])')
check "runs of two readers: table --format json's readers_differ ($differ)" [ "$differ" = True ]
exit $fail
