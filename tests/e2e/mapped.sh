#!/bin/sh
# mapped.sh -- pages of a data file the tree maps (model weights mapped, not copied) are the
# samples' `mapped`, each page once: a process maps a 64 MiB file and reads it, then forks a
# chain of 4 copies that each read it again (5 processes, one set of pages); and the major page
# faults of a stage in which the file's pages are evicted (madvise MADV_PAGEOUT, then
# posix_fadvise DONTNEED; MADV_RANDOM so that each page read again is a fault of its own) and
# read back. Truth: the mapping's Rss and the processes' majflt, read from /proc here.
# Needs SB_BIN and SB_HELPERS.
set -u
SB=${SB_BIN:?SB_BIN not set}
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/var/tmp}/sb-mapped.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
. "$(dirname "$0")/handshake.inc"
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

# The file must not be on tmpfs (its pages would be shared memory, in footprint).
if [ "$(stat -f -c %T "$T")" = tmpfs ]; then
	echo "  skip $T is on tmpfs: no place for a data file here (set TMPDIR)"
	exit 0
fi
head -c 64M /dev/urandom >"$T/weights.bin" && sync

# q TRACE EXPR: a python expression over the flushed part of TRACE (samples; at(stage): the
# samples from that stage event on).
q() {
	zstdcat "$1" 2>/dev/null | PYTHONPATH="$HERE" $PY -c '
import flushed, sys
samples, events = flushed.load(sys.stdin)
def at(stage):
    return flushed.from_stage(samples, events, stage)
print(eval(sys.argv[1]))' "$2"
}

# rss_of PID: the Rss of PID's mapping of the file, bytes (its smaps).
rss_of() {
	awk -v f="$T/weights.bin" '$NF == f { m = 1; next } m && $1 == "Rss:" { print $2 * 1024; exit }' \
		"/proc/$1/smaps"
}
ppid_of() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f2; }

# ---- one set of pages, five processes -------------------------------------------------
"$SB" record -q -o "$T/fork.zst" --interval 20ms -- "$E" map="$T/weights.bin" \
	fork reread fork reread fork reread fork reread stage=mapped ready="$T/last.pid" \
	wait="$T/mapped.go" &
rec=$!
wait_for test -s "$T/last.pid"
pid=$(cat "$T/last.pid")
one=0 sum=0 n=0
while [ "$n" -lt 5 ]; do
	r=$(rss_of "$pid")
	[ "$n" -eq 0 ] && one=$r
	sum=$((sum + r))
	n=$((n + 1))
	pid=$(ppid_of "$pid")
done
[ "$one" -ge $((60 * 1048576)) ] && [ "$sum" -ge $((5 * 60 * 1048576)) ] ||
	bad "the five processes did not each map the file resident (first $one, sum $sum)"
# The meter reads smaps again within its cost budget: wait for a sample that saw all five.
close_enough() {
	q "$T/fork.zst" "int(any(s['procs'] == 5 and s.get('mapped', 0) >= 0.97 * $one for s in at('mapped')))" |
		grep -qx 1
}
wait_for close_enough
# The figure once the meter has read all five (the last sample), and the highest of the run:
# between two readings a lone process's figure follows its RssFile, so the library pages it
# faults in meanwhile count until the next reading (docs/platforms.md); one more copy of the
# file never does.
top=$(q "$T/fork.zst" "[s.get('mapped', 0) for s in at('mapped')][-1]")
most=$(q "$T/fork.zst" "max(s.get('mapped', 0) for s in samples)")
rss=$(q "$T/fork.zst" "max(s['rss'] for s in at('mapped'))")
: >"$T/mapped.go"
wait "$rec" || bad "record failed"
if [ "$top" -ge $((one * 97 / 100)) ] && [ "$top" -le $((one * 103 / 100 + 4194304)) ]; then
	ok "a file mapped by 5 processes counts once: mapped $top bytes, the mapping's Rss $one (sum over the 5: $sum; tree rss $rss)"
else
	bad "mapped $top bytes, want the mapping's Rss $one once (the 5 processes' sum: $sum)"
fi
if [ "$most" -lt $((one * 3 / 2)) ]; then
	ok "no sample counts the file twice: at most $most bytes"
else
	bad "a sample counts the file more than once: $most bytes, the mapping's Rss $one"
fi
ev=$(q "$T/fork.zst" "[(e['name'], e.get('nbytes')) for e in events if e['kind'] == 'mapped']")
[ "$ev" = "[('$T/weights.bin', 67108864)]" ] && ok "one mapped event names the file and its size" ||
	bad "mapped events: $ev"
fp=$(q "$T/fork.zst" "max(s['footprint'] for s in at('mapped'))")
[ "$fp" -lt $((16 * 1048576)) ] && ok "the footprint leaves the file out ($fp bytes)" ||
	bad "footprint $fp bytes holds the mapped file"

# ---- pages read back: major faults in the stage that evicted them -----------------------
"$SB" record -q -o "$T/evict.zst" --interval 20ms -- "$E" map="$T/weights.bin" stage=steady \
	ready="$T/steady.pid" wait="$T/steady.go" stage=evict pageout reread \
	ready="$T/evict.pid" wait="$T/evict.go" &
rec=$!
wait_for test -s "$T/steady.pid"
pid=$(cat "$T/steady.pid")
maj() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f10; }
before=$(maj "$pid")
drive "$T/evict.zst" "$T" steady
wait_for test -s "$T/evict.pid"
after=$(maj "$pid")
want=$((after - before))
seen() { q "$T/evict.zst" "max(s.get('majflt', 0) for s in samples)"; }
wait_for at_least "$after" seen
: >"$T/evict.go"
wait "$rec" || bad "record failed"
"$SB" analyze --json "$T/evict.zst" >"$T/a.json" || bad "analyze failed"
got=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"][0] if "runs" in d else d[0]
st={s["name"]: s for s in r["stages"]}; print(st["evict"]["major_faults"], st["steady"]["major_faults"])' "$T/a.json")
ev=${got% *} st=${got#* }
if [ "$want" -ge 8000 ] && [ "$ev" -ge "$want" ] && [ "$ev" -le $((want + want / 10 + 50)) ] &&
	[ "$st" -le 50 ]; then
	ok "major faults in the stage that read evicted pages back: $ev (the process's majflt rose by $want; steady: $st)"
else
	bad "major faults evict $ev, steady $st; the process's majflt rose by $want in evict"
fi
"$SB" analyze "$T/evict.zst" 2>/dev/null | grep -q "major faults" || bad "analyze's text has no major faults column"

exit $fail
