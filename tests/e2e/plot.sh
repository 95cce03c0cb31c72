#!/bin/sh
# plot.sh -- `stagebench plot` on the stageload fixtures: both charts written, the same SVG bytes
# every time, stopped runs and stage names drawn, and a clear exit 3 without gnuplot.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SB=${SB_BIN:-$root/stagebench}
FIXTURES=${FIXTURES:-$root/tests/fixtures}
QWEN=$FIXTURES/stageload/2026-10-06-qwen-image
MOSS=$FIXTURES/stageload/2026-10-05/showcase/moss_native.trace.jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check DESCRIPTION COMMAND...
	desc=$1
	shift
	if ! "$@"; then
		echo "FAIL plot: $desc"
		fail=1
	fi
}

if ! command -v gnuplot >/dev/null 2>&1; then
	echo "FAIL plot: gnuplot is not installed (Debian package gnuplot-nox)"
	exit 1
fi

# Two runs over the same traces give the same bytes.
for d in a b; do
	"$SB" plot --format svg -o "$tmp/$d" "$QWEN"/eager-1.trace.jsonl "$QWEN"/staged-1.trace.jsonl \
		"$QWEN"/staged-2.trace.jsonl >"$tmp/$d.out" 2>"$tmp/$d.err"
	rc=$? # taken at once: a $(...) in check's arguments would set $? under bash
	check "qwen-image run $d exits 0 (exit $rc: $(cat "$tmp/$d.err"))" [ $rc -eq 0 ]
done
check "stdout names the files written" \
	[ "$(cat "$tmp/a.out")" = "$(printf '%s\n%s' "$tmp/a/memory.svg" "$tmp/a/stages.svg")" ]
for f in memory stages; do
	check "$f.svg exists and is non-trivial" [ "$(wc -c <"$tmp/a/$f.svg")" -gt 5000 ]
	check "$f.svg is an SVG" grep -q '<svg' "$tmp/a/$f.svg"
	check "$f.svg is the same bytes on a second run" cmp -s "$tmp/a/$f.svg" "$tmp/b/$f.svg"
done
# runs.json says the guard stopped eager in decode (its trace ends with `end` all the same).
check "memory.svg marks the stopped run" grep -q 'stopped by the guard' "$tmp/a/memory.svg"
check "memory.svg says where eager was stopped" \
	grep -q '>eager, run 1: stopped by the guard in decode; peak 43.6 GB<' "$tmp/a/memory.svg"
for s in setup encode denoise decode; do
	check "memory.svg labels stage $s" grep -q ">$s<" "$tmp/a/memory.svg"
done
check "stages.svg shows eager stopped in decode" grep -q '>stopped<' "$tmp/a/stages.svg"
check "stages.svg has both modes" grep -q '>staged<' "$tmp/a/stages.svg"

# The published Qwen-Image charts: the first eager attempt, the full one as a
# supplement (hatched, named in the legend), the machine's 48 GB, a title and a note.
(cd "$QWEN" && "$SB" plot --format svg -o "$tmp/pub" --ram 48G --supplement eager-1.trace.jsonl \
	--title 'Qwen-Image-2.1 at 1024 px' --note 'stageload, 2026-10-06' \
	first-attempt/eager-1.trace.jsonl staged-1.trace.jsonl staged-2.trace.jsonl) \
	>"$tmp/pub.out" 2>"$tmp/pub.err"
rc=$?
check "published charts exit 0 (exit $rc: $(cat "$tmp/pub.err"))" [ $rc -eq 0 ]
check "the supplement is named in the legend" \
	grep -q '>eager, supplement: eager-1.trace.jsonl (stopped by the guard)<' "$tmp/pub/stages.svg"
check "the supplement's bars are hatched" grep -q '<pattern' "$tmp/pub/stages.svg"
for f in memory stages; do
	check "$f.svg has the RAM label" grep -q '>RAM 48.0 GB<' "$tmp/pub/$f.svg"
	check "$f.svg has the title" grep -q '>Qwen-Image-2.1 at 1024 px<' "$tmp/pub/$f.svg"
	check "$f.svg has the note" grep -q '>stageload, 2026-10-06<' "$tmp/pub/$f.svg"
done
check "the first attempt's panel says how it ended" \
	grep -q '>eager, run 1: stopped by the guard in setup; peak 27.4 GB<' "$tmp/pub/memory.svg"
check "the staged panels say they completed" \
	grep -q '>staged, run 2: completed; peak 19.0 GB<' "$tmp/pub/memory.svg"
(cd "$QWEN" && "$SB" plot --format svg -o "$tmp/pub2" --ram 48G --supplement eager-1.trace.jsonl \
	--title 'Qwen-Image-2.1 at 1024 px' --note 'stageload, 2026-10-06' \
	first-attempt/eager-1.trace.jsonl staged-1.trace.jsonl staged-2.trace.jsonl) >/dev/null 2>&1
for f in memory stages; do
	check "$f.svg with a supplement, RAM, title and note is the same bytes twice" \
		cmp -s "$tmp/pub/$f.svg" "$tmp/pub2/$f.svg"
	check "$f.svg carries no date of its own" \
		sh -c "! grep -v 'stageload, 2026-10-06' '$tmp/pub/$f.svg' | grep -qE '20[0-9]{2}-[0-9]{2}-[0-9]{2}|[0-9]{2}:[0-9]{2}:[0-9]{2}'"
done

# The offload run swapped while its footprint stayed low: the stages chart says so.
OFFLOAD=$FIXTURES/stageload/2026-10-08-qwen-image-offload/offload-1.trace.jsonl
"$SB" plot --format svg -o "$tmp/off" "$QWEN"/eager-1.trace.jsonl "$OFFLOAD" >/dev/null 2>"$tmp/off.err"
rc=$?
check "offload charts exit 0 (exit $rc: $(cat "$tmp/off.err"))" [ $rc -eq 0 ]
check "offload's decode is marked for swap" grep -q '>swap +6.3 GB<' "$tmp/off/stages.svg"
check "the swap mark is in the legend" \
	grep -q '>system swap rose in the stage (by 256 MB or more)<' "$tmp/off/stages.svg"

# A stagebench-less Pixal3D run (the reload trace), png by default, in the current directory.
mkdir -p "$tmp/moss"
(cd "$tmp/moss" && "$SB" plot "$MOSS" >out 2>err)
rc=$?
check "moss_native exits 0 (exit $rc: $(cat "$tmp/moss/err"))" [ $rc -eq 0 ]
check "png default: ./memory.png printed" [ "$(cat "$tmp/moss/out")" = "$(printf './memory.png\n./stages.png')" ]
for f in memory stages; do
	check "$f.png is a PNG" [ "$(head -c 4 "$tmp/moss/$f.png" | tail -c 3)" = PNG ]
	check "$f.png is non-trivial" [ "$(wc -c <"$tmp/moss/$f.png")" -gt 10000 ]
done

# No gnuplot on PATH: exit 3 with the message that says what to install.
PATH=/nonexistent "$SB" plot -o "$tmp/none" "$MOSS" >"$tmp/none.out" 2>"$tmp/none.err"
rc=$?
check "missing gnuplot exits 3 (got $rc)" [ $rc -eq 3 ]
check "missing gnuplot names the package" \
	grep -q 'gnuplot not found: install the Debian package gnuplot-nox' "$tmp/none.err"
check "missing gnuplot writes nothing" [ ! -e "$tmp/none/memory.png" ]

# A run under a megabyte draws (its y range is not [0.000:0.000]).
printf '%s\n' '{"type":"start","mode":"eager"}' '{"type":"sample","t":0.0,"footprint":102400}' \
	'{"type":"sample","t":0.5,"footprint":204800}' '{"type":"end"}' >"$tmp/tiny.trace.jsonl"
"$SB" plot -o "$tmp/tiny" "$tmp/tiny.trace.jsonl" >/dev/null 2>"$tmp/tiny.err"
rc=$?
check "a 200 KiB run draws (exit $rc: $(cat "$tmp/tiny.err"))" [ $rc -eq 0 ]

# A stage named with a leading quote draws; an output directory with a newline
# gets the charts, and stdout holds only the paths.
sed 's/"stage":"encode"/"stage":"'"'"'encode"/' "$QWEN"/staged-1.trace.jsonl >"$tmp/quote.trace.jsonl"
nl="$tmp/new
line"
"$SB" plot -o "$nl" "$tmp/quote.trace.jsonl" >"$tmp/nl.out" 2>"$tmp/nl.err"
rc=$?
check "a quoted stage name and a newline in -o draw (exit $rc: $(cat "$tmp/nl.err"))" [ $rc -eq 0 ]
check "the PNG is where -o named" [ -s "$nl/stages.png" ]
check "stdout names the paths only" [ "$(wc -c <"$tmp/nl.out")" -lt 200 ]

# Usage errors exit 2, help exits 0 on stdout.
"$SB" plot --format gif "$MOSS" >/dev/null 2>&1
check "unknown format exits 2" [ $? -eq 2 ]
"$SB" plot >/dev/null 2>&1
check "no trace exits 2" [ $? -eq 2 ]
"$SB" plot --help | grep -q '^usage: stagebench plot'
check "--help on stdout" [ $? -eq 0 ]
"$SB" plot -o "$tmp/x" "$tmp/no-such.trace.jsonl" >/dev/null 2>"$tmp/missing.err"
check "unreadable trace exits 3" [ $? -eq 3 ]
check "unreadable trace is named" grep -q 'no-such.trace.jsonl' "$tmp/missing.err"


# A chart gnuplot could not write whole (a full disk) is an error: exit 3 with the reason,
# no partial file left. A stand-in gnuplot cuts its output at 20 KB (any host); as root, a
# tmpfs with 8 KB free does it for real.
mkdir "$tmp/cutbin"
{
	printf '%s\n' '#!/bin/sh'
	printf '%s\n' "gp=\$(mktemp '$tmp/cut.gp.XXXXXX')"
	printf '%s\n' 'cat >"$gp"'
	printf '%s\n' "'$(command -v gnuplot)' \"\$gp\" || exit"
	printf '%s\n' 'out=$(sed -n '\''s/^set output "\(.*\)"$/\1/p'\'' "$gp" | head -n 1)'
	printf '%s\n' '[ -n "$out" ] && truncate -s 20K "$out"'
	printf '%s\n' 'exit 0'
} >"$tmp/cutbin/gnuplot"
chmod +x "$tmp/cutbin/gnuplot"
PATH=$tmp/cutbin:$PATH "$SB" plot -o "$tmp/cut" "$MOSS" >"$tmp/cut.out" 2>"$tmp/cut.err"
rc=$?
check "a chart cut short exits 3 (exit $rc)" [ $rc -eq 3 ]
check "a chart cut short is named, with the reason ($(cat "$tmp/cut.err"))" \
	grep -q "memory.png.*cut short" "$tmp/cut.err"
check "no partial chart is left ($(ls -A "$tmp/cut" | tr '\n' ' '))" [ -z "$(ls -A "$tmp/cut")" ]
if [ "$(id -u)" = 0 ] && mkdir "$tmp/full" && mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
	# fill it, then give 8 KB back (less than any chart)
	dd if=/dev/zero of="$tmp/full/fill" bs=4k 2>/dev/null
	truncate -s -8K "$tmp/full/fill"
	"$SB" plot -o "$tmp/full/out" "$MOSS" >"$tmp/full.out" 2>"$tmp/full.err"
	rc=$?
	left=$(find "$tmp/full/out" -type f | tr '\n' ' ')
	umount "$tmp/full"
	check "plot on a full disk exits 3 (exit $rc: $(cat "$tmp/full.err"))" [ $rc -eq 3 ]
	check "plot on a full disk leaves no partial chart ($left)" [ -z "$left" ]
else
	echo "skip plot: a full tmpfs (needs root and mount)"
fi

# A symlink in -o is replaced, never written through.
mkdir "$tmp/link"
echo precious >"$tmp/precious"
ln -s "$tmp/precious" "$tmp/link/memory.png"
"$SB" plot -o "$tmp/link" "$MOSS" >/dev/null 2>"$tmp/link.err"
rc=$?
check "plot over a symlink exits 0 (exit $rc: $(cat "$tmp/link.err"))" [ $rc -eq 0 ]
check "the symlink's target is untouched" [ "$(cat "$tmp/precious")" = precious ]
check "the chart replaced the symlink" [ ! -L "$tmp/link/memory.png" ]
check "the chart is there" [ -s "$tmp/link/memory.png" ]

exit $fail
