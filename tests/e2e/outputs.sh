#!/bin/sh
# outputs.sh -- what `stagebench compare` writes into --out is its own: a symlink left where a
# run's log, stderr copy, trace or chart goes is replaced, never written through; a chart that
# a full disk cut short is an error (exit 3, the reason, no partial file), never exit 0.
# Needs SB_BIN and SB_HELPERS.
set -u
. "$(dirname "$0")/common.inc"
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem

printf '%s\n' "{\"name\": \"out\", \"command\": [\"$E\", \"stage=work\", \"alloc=8M\", \"sleep=50ms\"," \
	'"stage=done", "print=done"], "variants": {"p": {}}}' >"$tmp/out.json"

# 1. symlinks in --out, pointing outside it: a run's log, stderr copy and chart in a whole
# compare; its trace in a task of a campaign (a trace already in --out is an earlier
# comparison's: a whole compare refuses that --out, and writes nothing through the link either)
O=$tmp/links
mkdir "$O"
for f in p-1.log p-1.err p-1.trace.jsonl.zst memory.png; do
	echo "precious $f" >"$tmp/precious-$f"
done
for f in p-1.log p-1.err memory.png; do
	ln -s "$tmp/precious-$f" "$O/$f"
done
"$SB" compare p --pipeline "$tmp/out.json" --reps 1 --interval 10ms --out "$O" \
	>"$tmp/links.out" 2>"$tmp/links.err"
rc=$?
check "symlinks in --out: exit 0 (got $rc: $(tail -n 3 "$tmp/links.err"))" [ "$rc" -eq 0 ]
T=$tmp/tlinks
"$SB" compare p --pipeline "$tmp/out.json" --reps 1 --interval 10ms --out "$T" --plan >/dev/null 2>&1
ln -s "$tmp/precious-p-1.trace.jsonl.zst" "$T/p-1.trace.jsonl.zst"
"$SB" compare p --pipeline "$tmp/out.json" --reps 1 --interval 10ms --out "$T" --task 0 \
	>"$tmp/tlinks.out" 2>"$tmp/tlinks.err"
rc=$?
check "a symlink where a task's trace goes: exit 0 (got $rc: $(tail -n 3 "$tmp/tlinks.err"))" [ "$rc" -eq 0 ]
for f in p-1.log p-1.err p-1.trace.jsonl.zst memory.png; do
	d=$O
	[ "$f" = p-1.trace.jsonl.zst ] && d=$T
	check "$f: the file its symlink pointed to is untouched" \
		[ "$(cat "$tmp/precious-$f")" = "precious $f" ]
	check "$f: written in --out in the symlink's place" [ ! -L "$d/$f" ]
done
check "p-1.log holds the run's stdout" grep -q '^done$' "$O/p-1.log"
check "the trace is whole" sh -c "zstd -dc '$T/p-1.trace.jsonl.zst' | tail -n 1 | grep -q '\"type\":\"end\"'"

# 2. a chart cut short: a stand-in gnuplot truncates what the real one wrote (a full disk)
if command -v gnuplot >/dev/null 2>&1; then
	mkdir "$tmp/bin"
	{
		printf '%s\n' '#!/bin/sh'
		printf '%s\n' "gp=\$(mktemp '$tmp/cut.XXXXXX')"  # a file per chart: the charts' gnuplots run at once
		printf '%s\n' 'cat >"$gp"'
		printf '%s\n' "'$(command -v gnuplot)' \"\$gp\" || exit"
		printf '%s\n' 'out=$(sed -n '\''s/^set output "\(.*\)"$/\1/p'\'' "$gp" | head -n 1)'
		printf '%s\n' '[ -n "$out" ] && truncate -s 20K "$out"'
		printf '%s\n' 'exit 0'
	} >"$tmp/bin/gnuplot"
	chmod +x "$tmp/bin/gnuplot"
	PATH=$tmp/bin:$PATH "$SB" compare p --pipeline "$tmp/out.json" --reps 1 --interval 10ms \
		--out "$tmp/cut" >"$tmp/cut.out" 2>"$tmp/cut.err"
	rc=$?
	check "a chart cut short: exit 3 (got $rc)" [ "$rc" -eq 3 ]
	check "a chart cut short: the reason is given ($(tail -n 3 "$tmp/cut.err"))" \
		grep -q "memory.png.*cut short" "$tmp/cut.err"
	check "a chart cut short: no chart is left" sh -c "! ls -A '$tmp/cut' | grep -q png"
	check "a chart cut short: the tables are written" [ -s "$tmp/cut/table.md" ]
	# as root, for real: the run done (--task) on a tmpfs, then the disk filled but for 16 KB,
	# then the report (--merge): the text files fit, the charts (17 KB and more) do not
	if [ "$(id -u)" = 0 ] && mkdir "$tmp/full" && mount -t tmpfs -o size=256k tmpfs "$tmp/full" 2>/dev/null; then
		"$SB" compare p --pipeline "$tmp/out.json" --reps 1 --out "$tmp/full/o" --plan \
			>/dev/null 2>&1
		"$SB" compare p --pipeline "$tmp/out.json" --reps 1 --interval 10ms --task 0 \
			--out "$tmp/full/o" >/dev/null 2>"$tmp/full-task.err"
		dd if=/dev/zero of="$tmp/full/fill" bs=4k 2>/dev/null
		truncate -s -16K "$tmp/full/fill"
		"$SB" compare p --pipeline "$tmp/out.json" --reps 1 --merge --out "$tmp/full/o" \
			>"$tmp/full.out" 2>"$tmp/full.err"
		rc=$?
		# a chart that fit is whole (its IEND chunk last); none is cut short
		left=$(for f in "$tmp"/full/o/*.png; do
			[ -e "$f" ] && ! tail -c 12 "$f" | grep -q IEND && echo "$f"; done | tr '\n' ' ')
		umount "$tmp/full"
		check "compare on a full disk: exit 3 (got $rc: $(tail -n 3 "$tmp/full.err"))" [ "$rc" -eq 3 ]
		check "compare on a full disk: no partial chart ($left)" [ -z "$left" ]
	else
		echo "  skip compare on a full tmpfs (needs root and mount)"
	fi
fi

# 3. what quotes a file's contents never starts a line of its own: a stage name from a trace
# and a runs.d entry's `why` with a line break in them; in a CI log, "::error ...::" at the
# start of a line is a workflow command that GitHub Actions obeys.
printf '%s\n' "{\"name\": \"out\", \"command\": [\"$E\", \"stage=work\", \"stage=x\\n::error::stage\"," \
	'"exit=3"], "variants": {"p": {}}}' >"$tmp/inj.json"
O=$tmp/inj
"$SB" compare p --pipeline "$tmp/inj.json" --reps 1 --out "$O" --plan >/dev/null 2>&1
"$SB" compare p --pipeline "$tmp/inj.json" --task 0 --reps 1 --out "$O" >/dev/null 2>"$tmp/inj-task.err"
sed 's/"exit": 3,/"exit": 3, "why": "died\\n::error::why",/' "$O/runs.d/p-1.json" >"$tmp/p-1.json" &&
	mv "$tmp/p-1.json" "$O/runs.d/p-1.json"
check "runs.d entry edited ($(cat "$O/runs.d/p-1.json"))" grep -q '::error::why' "$O/runs.d/p-1.json"
"$SB" compare p --pipeline "$tmp/inj.json" --merge --reps 1 --out "$O" >"$tmp/inj.out" 2>"$tmp/inj.err"
rc=$?
check "merge of a failed run: exit 1 (got $rc: $(tail -n 3 "$tmp/inj.err"))" [ "$rc" -eq 1 ]
check "stderr: no line starts a workflow command ($(grep '^::' "$tmp/inj.err"))" \
	sh -c "! grep -q '^::' '$tmp/inj.err'"
check "stderr: the why is quoted, escaped" grep -qF 'p-1: died\n::error::why' "$tmp/inj.err"
check "stdout: no line starts a workflow command ($(grep '^::' "$tmp/inj.out"))" \
	sh -c "! grep -q '^::' '$tmp/inj.out'"

exit $fail
