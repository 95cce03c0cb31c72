# A trace cut inside its last zstd frame (a recorder killed while it wrote) is read by every
# reader up to that frame, with a warning naming the byte offsets: analyze, table, check,
# history and plot give what they give for the file of its complete frames alone (ref/).
# exit: 0
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
mkdir cut ref
cp -r new/l new/runs.json new/eager-1.trace.jsonl new/staged-2.trace.jsonl cut/
cp -r new/l new/runs.json new/eager-1.trace.jsonl new/staged-2.trace.jsonl ref/
t=new/staged-1.trace.jsonl
n=$(wc -l <"$t")
# frame 1: up to the work stage's sample; frame 2: the rest (its peak, save, the end)
head -n $((n - 5)) "$t" | zstd -q -c >ref/staged-1.trace.jsonl.zst
tail -n 5 "$t" | zstd -q -c >f2.zst
cat ref/staged-1.trace.jsonl.zst f2.zst >whole.zst
whole=$(wc -c <whole.zst)
head -c $((whole - 6)) whole.zst >cut/staged-1.trace.jsonl.zst
frame=$(wc -c <ref/staged-1.trace.jsonl.zst)
at=$(wc -c <cut/staged-1.trace.jsonl.zst)
warn="stagebench: warning: cut/staged-1.trace.jsonl.zst: cut at byte $at, inside its last zstd frame (from byte $frame): the recording stopped before it closed the file; reading the $((n - 5)) lines before that frame"
# same NAME CMD...: CMD on cut/ and on ref/: the same output, the warning once on stderr
same() {
	name=$1
	shift
	"$@" cut >"$name.cut" 2>"$name.err"
	rc=$?
	"$@" ref >"$name.ref" 2>/dev/null
	sed -i 's| (cut short: read up to the cut)$||; s|cut/|ref/|g; s|\bcut\b|ref|g' "$name.cut"
	if cmp -s "$name.cut" "$name.ref" && [ -s "$name.ref" ]; then o=same; else o=differs; fi
	# history reads each directory twice (its points, then each pair's regressions)
	if grep -qxF "$warn" "$name.err"; then w=given; else w=missing; fi
	echo "$name: exit $rc, output $o as the complete frames', the warning $w"
	[ "$o" = same ] || diff "$name.ref" "$name.cut" | head -n 20
	[ "$w" = given ] || cat "$name.err"
}
an() { "$SB" analyze "$1/staged-1.trace.jsonl.zst"; }
tb() { "$SB" table "$1"/*.trace.jsonl*; }
ck() { "$SB" check --baseline base "$1"; }
hi() { "$SB" history base "$1"; }
pl() { "$SB" plot -o "$1" --format svg "$1"/*.trace.jsonl* && cat "$1/memory.svg" "$1/stages.svg"; }
same analyze an
same table tb
same check ck
same history hi
same plot pl
echo "--- analyze of the cut trace"
"$SB" analyze cut/staged-1.trace.jsonl.zst 2>/dev/null
echo "--- a plain trace whose last line has no newline"
head -c -20 "$t" >cut/plain.trace.jsonl
"$SB" analyze cut/plain.trace.jsonl >plain.out 2>plain.err
echo "exit $?"
# the line cut starts after the first n - 1 lines
at=$(head -n $((n - 1)) "$t" | wc -c)
grep -c "^stagebench: warning: cut/plain.trace.jsonl:$n: cut at byte $at, inside its last line" plain.err
head -n $((n - 1)) "$t" >ref/plain.trace.jsonl
"$SB" analyze ref/plain.trace.jsonl | sed 's|ref/|cut/|' | diff - plain.out | grep -v '^[0-9]' ; echo "differs only in the first line"
