#!/bin/sh
# journey.sh -- checking each commit of a pipeline, as a user does it: a git repository of the
# demo pipeline with commits A (the pipeline), B (a comment), C (300 MiB kept alive from the
# texture stage on), D (a comment), E (the decode stage raises). `compare --by-commit` at each;
# then check, history (table, JSON, chart) and scripts/bisect-run.sh must each name the right
# commit for the right reason, in the stages where it happened and nowhere else.
# HISTORY_PNG=PATH keeps the history chart (docs/guide.md's figure is drawn so).
. "$(dirname "$0")/common.inc"
export STAGEBENCH_HOME="$root" STAGEBENCH="$SB"
# staged twice, tiny models; times are not judged (a loaded machine), memory and outcomes are
args="staged --reps 2 --size tiny --seed 7 --interval 20ms --pipeline pipeline.json --cache $tmp/cache -q"
repo=$tmp/repo
mkdir -p "$repo"
cp "$root/demo/pipeline.json" "$root/demo/pipeline.py" "$root/demo/cascade.py" "$root/demo/adapter.py" "$repo/"
cd "$repo" || exit 1
git init -q . && git config user.email journey@example.invalid && git config user.name journey
# the runs and Python's byte code are not the pipeline's (a .pyc would make a commit dirty)
printf '%s\n' runs/ __pycache__/ '*.pyc' >.gitignore
export PYTHONDONTWRITEBYTECODE=1
commit() { git add -A && git commit -q -m "$1"; }
edit() { "$PY" -c 'import sys; p = sys.argv[1]; s = open(p).read(); s2 = eval(sys.argv[2]); assert s2 != s, "no change"; open(p, "w").write(s2)' "$1" "$2"; }
# at COMMIT-VAR: compare --by-commit at the commit just made; its run directory in $dir_COMMIT
at() {
	"$SB" compare $args --by-commit >"$tmp/$1.log" 2>&1
	eval "dir_$1=\$(ls -d \"\$repo\"/runs/*-\$(git rev-parse --short HEAD))"
	eval "id_$1=\$(git rev-parse --short HEAD)"
}

commit "A: the demo pipeline" && at A
edit cascade.py 's + "\n# a comment\n"' && commit "B: a comment" && at B
edit cascade.py 's.replace("""            x = self._sample(flow, self._noise(), cond + shape.float())
        return x.to(torch.bfloat16)""", """            self.kept = torch.ones(300 << 20, dtype=torch.uint8)  # kept alive from here on
            x = self._sample(flow, self._noise(), cond + shape.float())
        return x.to(torch.bfloat16)""", 1)' && commit "C: texture keeps a scratch buffer" && at C
edit cascade.py 's + "# another comment\n"' && commit "D: another comment" && at D
edit cascade.py 's.replace("""    def decode_slat(self, shape, tex):
""", """    def decode_slat(self, shape, tex):
        raise RuntimeError("decode is broken")
""", 1)' && commit "E: decode raises" && at E
# shellcheck disable=SC2154 # set by at()
[ "$(ls -d runs/* | wc -l)" = 5 ] || { echo "FAIL journey: five run directories wanted: $(ls runs)"; exit 1; }
check "the crash named in compare's report" grep -q "staged run 1 failed in decode: .*RuntimeError: decode is broken" "$tmp/E.log"

# check, neighbour against neighbour: only C (memory, in texture and after) and E (outcome, in
# decode and after) regress
stages_of() { # the stages of the regressions (rows) in check's markdown on stdin
	awk -F' *[|] *' '/^## Regressions/ { r = 1; next } /^## / { r = 0 } r && $2 == "staged" { print $3 " " $4 }'
}
for p in "A B" "B C" "C D" "D E"; do
	set -- $p
	eval "base=\$dir_$1 cand=\$dir_$2"
	"$SB" check --max-time-growth 600s --baseline "$base" "$cand" >"$tmp/check-$2.md"
	eval "rc_$2=$?"
	stages_of <"$tmp/check-$2.md" >"$tmp/check-$2.rows"
done
check "A to B: no regression (exit $rc_B)" test "$rc_B" = 0 -a ! -s "$tmp/check-B.rows"
check "C to D: no regression (exit $rc_D)" test "$rc_D" = 0 -a ! -s "$tmp/check-D.rows"
check "B to C: exit 1 ($rc_C)" test "$rc_C" = 1
check "B to C: a memory regression in texture: $(cat "$tmp/check-C.rows")" grep -Eq "^texture (peak footprint|kernel peak)" "$tmp/check-C.rows"
check "B to C: nothing before texture, nothing but memory: $(cat "$tmp/check-C.rows")" \
	sh -c "! grep -Ev '^(texture|decode|export) (peak footprint|kernel peak)' '$tmp/check-C.rows'"
check "D to E: exit 1 ($rc_E)" test "$rc_E" = 1
# (decode's latents are missing too: the runs died before writing them)
check "D to E: decode and export outcomes: $(cat "$tmp/check-E.rows")" \
	test "$(grep -v '^decode latent ' "$tmp/check-E.rows" | sort | tr '\n' ,)" = "decode outcome,export outcome,"
check "D to E: decode and export not compared" grep -q "| staged | decode, export | memory and time | no completed run in the candidate |" "$tmp/check-E.md"
# E against itself: both sides failed, never a silent pass
"$SB" check --baseline "$dir_E" "$dir_E" >"$tmp/check-EE.md"
check "E against E: exit 1 ($?)" test $? = 1
check "E against E: says what it could not compare" grep -q "no completed run on either side" "$tmp/check-EE.md"

# history: the same two commits, the same stages, the same reasons; short ids with subjects
"$SB" history --plot "$tmp/plots" "$dir_A" "$dir_B" "$dir_C" "$dir_D" "$dir_E" >"$tmp/history.md"
check "history exit" test $? = 0
awk -F' *[|] *' '/^## Regressions/ { r = 1; next } /^## / || /^Each cell/ { r = 0 } r && $4 == "staged" { print $2 " " $3 " " $5 " " $6 }' \
	"$tmp/history.md" | sort -u >"$tmp/history.rows"
check "history's regressions are C's memory and E's outcomes: $(cat "$tmp/history.rows")" "$PY" -c '
import sys
rows = [l.split() for l in open(sys.argv[1])]
b, c, d, e = sys.argv[2:6]
ok = rows and all((f, t) in ((b, c), (d, e)) for f, t, *_ in rows)
ok = ok and any(t == c and s == "texture" and w in ("peak", "kernel") for f, t, s, w, *_ in rows)
ok = ok and all(s in ("texture", "decode", "export") and w in ("peak", "kernel") for f, t, s, w, *_ in rows if t == c)
ok = ok and sorted((s, w) for f, t, s, w, *_ in rows if t == e and w != "latent") == [("decode", "outcome"), ("export", "outcome")]
ok = ok and all(s == "decode" for f, t, s, w, *_ in rows if t == e and w == "latent")
sys.exit(0 if ok else 1)' "$tmp/history.rows" "$id_B" "$id_C" "$id_D" "$id_E"
check "history: E's decode failed" grep -q "^| staged | decode | .* | failed |$" "$tmp/history.md"
check "history: the subject line" grep -q "$id_C \"C: texture keeps a scratch buffer\"" "$tmp/history.md"
"$SB" history --format json "$dir_A" "$dir_B" "$dir_C" "$dir_D" "$dir_E" >"$tmp/history.json"
check "history JSON: the same marks" "$PY" -c '
import json, sys
h = json.load(open(sys.argv[1]))
ids = [c["short"] for c in h["commits"]]
assert ids == sys.argv[2:7], ids
to = {(r["to"][:len(ids[0])], r["stage"], r["what"].split()[0]) for r in h["regressions"]}
assert {t for t, s, w in to} == {ids[2], ids[4]}, to
assert {(s, w) for t, s, w in to if t == ids[4]} - {("decode", "latent")} == {("decode", "outcome"), ("export", "outcome")}, to
pk = {s["stage"]: s["peak footprint"] for s in h["series"]}
assert pk["decode"][4]["failed"] == 2 and pk["decode"][4]["runs"] == 0, pk["decode"]
assert not any(p and p["regression"] for st in ("preprocess", "camera", "structure") for p in pk[st])
' "$tmp/history.json" "$id_A" "$id_B" "$id_C" "$id_D" "$id_E"
"$SB" history --format html "$dir_A" "$dir_B" "$dir_C" "$dir_D" "$dir_E" >"$tmp/history.html"
check "history html: exit 0 ($?)" test $? = 0
check "history html: one page" sh -c "head -n 1 '$tmp/history.html' | grep -qx '<!DOCTYPE html>' &&
	tail -n 1 '$tmp/history.html' | grep -qx '</html>' && [ \$(grep -c '<html' '$tmp/history.html') -eq 1 ]"
check "history html: E's decode failed, in a table row" \
	grep -q '^<tr><td>staged</td><td>decode</td>.*<td>failed</td></tr>$' "$tmp/history.html"
check "history html: the subject line, escaped" \
	grep -qF "$id_C &quot;C: texture keeps a scratch buffer&quot;" "$tmp/history.html"
check "history html: no script, nothing fetched" sh -c "! grep -qiE '<script|<img|<link|src=' '$tmp/history.html'"
if command -v gnuplot >/dev/null 2>&1; then
	check "history html: the peak and time charts inline" sh -c "
		grep -q '<figure id=\"chart-history-peak\">' '$tmp/history.html' &&
		grep -q '<figure id=\"chart-history-time\">' '$tmp/history.html'"
	check "history chart drawn" test -s "$tmp/plots/history-peak.png"
	[ -z "${HISTORY_PNG:-}" ] || cp "$tmp/plots/history-peak.png" "$HISTORY_PNG"
fi

# bisect from D back to A names C, for texture's memory
git checkout -q "$(git rev-parse HEAD~1)"
git bisect start HEAD "HEAD~3" >/dev/null
# shellcheck disable=SC2086
git bisect run "$root/scripts/bisect-run.sh" --baseline "$dir_A" --max-time-growth 600s -- $args \
	>"$tmp/bisect.log" 2>&1
rc=$?
git bisect reset -q >/dev/null 2>&1
check "bisect run exit ($rc)" test $rc = 0
check "bisect names C: $(grep -E 'first bad|bisect-run:' "$tmp/bisect.log")" grep -q "^$id_C[0-9a-f]* is the first bad commit" "$tmp/bisect.log"
check "bisect: C bad for texture's memory" grep -Eq "^bisect-run: $id_C bad: regression: .*staged texture (peak footprint|kernel peak)" "$tmp/bisect.log"
# and E, against D, bad for the decode stage's outcome
git checkout -q master 2>/dev/null || git checkout -q main
"$root/scripts/bisect-run.sh" --baseline "$dir_D" --max-time-growth 600s -- $args >"$tmp/bisect-E.log" 2>&1
check "bisect-run at E: exit 1 ($?)" test $? = 1
check "bisect-run at E: decode's outcome" grep -q "^bisect-run: $id_E bad: regression: staged decode outcome" "$tmp/bisect-E.log"
[ $fail = 0 ] && echo "journey: ok"
exit $fail
