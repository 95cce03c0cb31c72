#!/bin/sh
# bisect.sh -- `git bisect run scripts/bisect-run.sh` on a small git repository of the demo
# pipeline: eight commits, one that breaks the pipeline (skipped: exit 125) and one, later, that
# holds 300 MiB more in the texture stage; bisect must name that one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SB=${SB_BIN:-$root/stagebench}
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL bisect: $*"; fail=1; }
export STAGEBENCH_HOME="$root" STAGEBENCH="$SB"
# what every commit is judged with: the staged variant twice, tiny models; times are not judged
# (a loaded machine), memory and latents are
compare_args="staged --reps 2 --size tiny --seed 7 --interval 20ms --pipeline pipeline.json --cache $tmp/cache -q"
judge() { "$root/scripts/bisect-run.sh" --baseline "$tmp/base" --max-time-growth 600s -- $compare_args; }

repo=$tmp/repo
mkdir -p "$repo"
cp "$root/demo/pipeline.json" "$root/demo/pipeline.py" "$root/demo/cascade.py" "$root/demo/adapter.py" "$repo/"
cd "$repo" || exit 1
git init -q . && git config user.email bisect@example.invalid && git config user.name bisect
# commit MESSAGE: commit everything, print nothing
commit() { git add -A && git commit -q -m "$1"; }
# edit FILE PYTHON-EXPRESSION-OF-s: rewrite FILE through the expression
edit() { /usr/bin/python3 -c 'import sys; p = sys.argv[1]; s = open(p).read(); s2 = eval(sys.argv[2]); assert s2 != s, "no change"; open(p, "w").write(s2)' "$1" "$2"; }

commit "the demo pipeline" || exit 1
good=$(git rev-parse HEAD)
"$SB" compare $compare_args --out "$tmp/base" >"$tmp/base.log" 2>&1 ||
	{ bad "baseline compare failed: $(tail -n 5 "$tmp/base.log")"; exit 1; }

# thresholds are checked before any compare: a value with a space in it (not split into more
# options for check) or one check refuses stops the bisection with a usage error (255)
for th in "5% --format md" "5qq"; do
	"$root/scripts/bisect-run.sh" --baseline "$tmp/base" --keep "$tmp/keep" --max-growth "$th" \
		-- $compare_args >"$tmp/th.log" 2>&1
	rc=$?
	[ $rc = 255 ] || bad "--max-growth '$th': exit $rc, wanted 255 ($(tail -n 3 "$tmp/th.log"))"
	grep -q "bisect-run: .*threshold" "$tmp/th.log" || bad "--max-growth '$th': not named: $(tail -n 3 "$tmp/th.log")"
	[ ! -e "$tmp/keep/$(git rev-parse --short HEAD)" ] || bad "--max-growth '$th': compare ran"
done

echo "notes" >NOTES && commit "notes"
edit pipeline.py '"import (\n" + s' && commit "pipeline: a broken import"
broken=$(git rev-parse HEAD)
git checkout -q "$good" -- pipeline.py && commit "pipeline: import fixed"
edit cascade.py 's + "\n# a comment\n"' && commit "cascade: a comment"
edit cascade.py 's.replace("""    def sample_tex_slat(self, cond, shape):
""", """    def sample_tex_slat(self, cond, shape):
        scratch = torch.ones(300 << 20, dtype=torch.uint8)  # every page written
""", 1)' && commit "texture: a scratch buffer"
planted=$(git rev-parse HEAD)
echo "more notes" >>NOTES && commit "more notes"
edit cascade.py 's + "# another comment\n"' && commit "cascade: another comment"
last=$(git rev-parse HEAD)
[ "$(git rev-list --count "$good..$last")" = 7 ] || bad "the repository was not built as planned"

# one commit that cannot be judged: its pipeline does not start
git checkout -q "$broken"
judge >"$tmp/broken.log" 2>&1
rc=$?
[ $rc = 125 ] || bad "the broken commit: exit $rc, wanted 125 ($(tail -n 3 "$tmp/broken.log"))"
grep -q "bisect-run: $(git rev-parse --short HEAD) skip: compare could not run the pipeline" "$tmp/broken.log" ||
	bad "the broken commit: no skip line: $(tail -n 3 "$tmp/broken.log")"
# the whole bisection
git checkout -q "$last"
git bisect start "$last" "$good" >/dev/null
# shellcheck disable=SC2086
git bisect run "$root/scripts/bisect-run.sh" --baseline "$tmp/base" --max-time-growth 600s -- $compare_args \
	>"$tmp/bisect.log" 2>&1
rc=$?
git bisect reset -q >/dev/null 2>&1
[ $rc = 0 ] || bad "git bisect run exited $rc: $(tail -n 5 "$tmp/bisect.log")"
grep -q "^$planted is the first bad commit" "$tmp/bisect.log" ||
	bad "bisect did not name the planted commit $planted: $(grep -E 'first bad|bisect-run:' "$tmp/bisect.log")"
# by its sampled peak footprint or its exact kernel peak: at --size tiny a stage can pass
# between two samples (a loaded machine), and a baseline run without a sampled texture peak
# leaves that metric unjudged ("1 baseline run with a value")
grep "^bisect-run: $(git rev-parse --short "$planted") bad: regression: " "$tmp/bisect.log" |
	grep -Eq "staged texture (peak footprint|kernel peak)" ||
	bad "the planted commit: not judged bad for the texture stage's peak: $(grep bisect-run: "$tmp/bisect.log")"
grep -q "^bisect-run: .* good: no regression" "$tmp/bisect.log" || bad "no commit was judged good"
echo "bisect: $(grep -c '^bisect-run: ' "$tmp/bisect.log") commits judged"
[ $fail = 0 ] && echo "bisect: ok"
exit $fail
