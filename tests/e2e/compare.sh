#!/bin/sh
# compare.sh -- `stagebench compare` on the demo pipeline at small sizes: the files it leaves,
# staged below eager, identical latents, the no-RNG control diverging, a guard stop in the
# table, --by-commit, a missing gnuplot, and the usage and runtime errors.
set -u
. "$(dirname "$0")/common.inc"
# gb STAGE COLUMN FILE: the figure of a table.md row in GB (column 1 = first mode; a figure
# printed in MB, as sizes under 1 GB are, is converted)
gb() { awk -F'|' -v s="$1" -v c="$2" '$2 == " " s " " { x = $(c + 2); sub(/^ */, "", x); m = x ~ /^[0-9.]+ MB/; sub(/ [GM]B.*/, "", x); print m ? x / 1024 : x; exit }' "$3"; }

# The models must be large enough to stand out of the interpreter's own memory
# (size 0.1: about 170 MB of weights); the rows checked are the longer model-resident
# stages, which hold samples at a 10 ms interval even on a loaded machine.
A=$tmp/a
"$SB" compare eager staged --set size=0.1 --reps 1 --interval 10ms --cache "$tmp/cache" \
	--out "$A" >"$tmp/a.out" 2>"$tmp/a.err"
rc=$?
check "eager staged exits 0 (got $rc: $(tail -n 3 "$tmp/a.err"))" [ "$rc" -eq 0 ]
for f in eager-1.trace.jsonl.zst staged-1.trace.jsonl.zst runs.json table.md latents.md \
	eager-1.latents/image.npy staged-1.latents/colors.npy eager-1/mesh.npz eager-1.log; do
	check "$f written" [ -s "$A/$f" ]
done
check "runs.json lists eager-1 then staged-1" \
	[ "$(grep -o '"trace": *"[^"]*"' "$A/runs.json" | tr -d ' ')" = \
	"$(printf '"trace":"eager-1.trace.jsonl.zst"\n"trace":"staged-1.trace.jsonl.zst"')" ]
check "stdout holds the table" grep -q '^| shape_512 |' "$tmp/a.out"
check "stdout holds the latents" grep -q '^# Latents: 2 runs, baseline eager' "$tmp/a.out"
check "stdout holds the run summary" grep -q '^| staged-1 | completed |' "$tmp/a.out"
check "the pipeline's own output went to its log, not stdout" \
	sh -c "grep -q '^\[demo\]' '$A/eager-1.log' && ! grep -q '^\[demo\]' '$tmp/a.out'"
check "progress lines on stderr" grep -q '\[2/2\] staged run 1: completed, wall ' "$tmp/a.err"
check "table.md is what 'stagebench table' says of the traces" \
	sh -c "'$SB' table '$A'/eager-1.trace.jsonl.zst '$A'/staged-1.trace.jsonl.zst | cmp -s - '$A/table.md'"
start=$(zstd -dc "$A/staged-1.trace.jsonl.zst" | head -n 1)
S=$tmp/start.json # the start record, read from a file: its words may hold any quote
printf '%s\n' "$start" >"$S"
check "start record: mode, labels (the campaign of plan.json)" sh -c "grep -q '\"mode\":\"staged\"' '$S' &&
	grep -q '\"labels\":{\"seed\":\"7\",\"pipeline\":\"demo\",\"rep\":\"1\",\"campaign\":\"[0-9a-f]\{16\}\"}' '$S'"
if git -C "$root/demo" rev-parse HEAD >/dev/null 2>&1; then
	# HEAD may have moved since (commits made meanwhile): the commit must be an ancestor of it.
	c=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("commit", ""))' "$S")
	check "start record: the pipeline's commit ($c)" \
		sh -c "[ -n '$c' ] && git -C '$root/demo' merge-base --is-ancestor '$c' HEAD"
	check "start record: whether the checkout was dirty" grep -Eq '"dirty":(true|false)' "$S"
fi
check "start record: the size from --set" grep -q '"--size","0.1"' "$S"

"$SB" table --format csv "$A"/eager-1.trace.jsonl.zst "$A"/staged-1.trace.jsonl.zst >"$tmp/a.csv"
for s in preprocess shape_512 shape_1024 texture decode; do
	e=$(peak "$s" eager "$tmp/a.csv")
	st=$(peak "$s" staged "$tmp/a.csv")
	check "$s: staged ($st bytes) below eager ($e bytes)" lt "$st" "$e"
done
for s in shape_512 texture; do
	e=$(gb "$s" 1 "$A/table.md")
	st=$(gb "$s" 2 "$A/table.md")
	check "table.md $s: staged $st GB below eager $e GB" lt "$st" "$e"
done
check "latents: every pair identical" \
	grep -q '^9 pairs in 9 latents: 9 identical, 0 within noise\.$' "$A/latents.md"
"$SB" latents -q "$A" >/dev/null 2>&1
check "'stagebench latents' on the directory agrees (exit 0)" [ $? -eq 0 ]
if command -v gnuplot >/dev/null 2>&1; then
	for f in memory stages; do
		check "$f.png drawn" [ "$(head -c 4 "$A/$f.png" | tail -c 3)" = PNG ]
	done
fi

# The guard stops eager (over --max-footprint) while staged completes; compare goes on and exits 0.
e=$(awk -F, '$1 == "eager" && $2 == 1 { print $7 }' "$tmp/a.csv")
st=$(awk -F, '$1 == "staged" && $2 == 1 { print $7 }' "$tmp/a.csv")
limit=$(awk -v a="$e" -v b="$st" 'BEGIN { printf "%.0fM", (a + b) / 2 / 1048576 }')
G=$tmp/g
"$SB" compare eager staged --set size=0.1 --reps 1 --interval 10ms --cache "$tmp/cache" \
	--max-footprint "$limit" --out "$G" >"$tmp/g.out" 2>"$tmp/g.err"
rc=$?
check "guard stop: exit 0 (got $rc: $(tail -n 3 "$tmp/g.err"))" [ "$rc" -eq 0 ]
check "guard stop: progress says eager was stopped" \
	grep -q '\[1/2\] eager run 1: stopped by the guard' "$tmp/g.err"
check "guard stop: staged still ran" grep -q '\[2/2\] staged run 1: completed' "$tmp/g.err"
# (a stop right at a stage's start can leave that stage's window without a sample)
check "guard stop: table.md says 'stopped by the guard'" \
	grep -Eq '^\| [a-z_0-9]* \| stopped by the guard (at [0-9.]* [GM]B|with no sample) \| ' "$G/table.md"
check "guard stop: runs.json says so" grep -q '"mode": *"eager".*"stopped_by": *"guard"' "$G/runs.json"
check "guard stop: staged completed in the table" grep -q '^| staged | 1 | export (completed) |' "$G/table.md"

# A run whose command fails on its own is a finding (exit 1, its log named); a command that
# cannot start is a failure to run (exit 3). No demo: a shell pipeline of two variants.
printf '%s\n' '{"name": "shell", "command": ["sh", "-c", "echo out-$0; exit $0"],' \
	'"variants": {"ok": {"args": ["0"]}, "bad": {"args": ["5"]}}}' >"$tmp/shell.json"
"$SB" compare ok bad --pipeline "$tmp/shell.json" --reps 1 --out "$tmp/sh" >/dev/null 2>"$tmp/sh.err"
rc=$?
check "a failing run: exit 1 (got $rc: $(tail -n 3 "$tmp/sh.err"))" [ "$rc" -eq 1 ]
check "a failing run: its log is named and holds its stdout" \
	sh -c "grep -q 'bad run 1: failed with exit code 5' '$tmp/sh.err' && grep -q '^out-' '$tmp/sh/bad-1.log'"
printf '%s\n' '{"name": "none", "command": ["/nonexistent/stagebench-cmd"], "variants": {"v": {}}}' \
	>"$tmp/none2.json"
"$SB" compare --pipeline "$tmp/none2.json" --reps 1 --out "$tmp/none2" >/dev/null 2>"$tmp/none2.err"
rc=$?
check "a command that cannot start: exit 3 (got $rc)" [ "$rc" -eq 3 ]

# A variant name that would make a path outside --out (or any name outside [A-Za-z0-9._-],
# or starting with '.') is refused before anything is written: exit 3, the name quoted.
mkdir -p "$tmp/esc/a/b"
printf '%s\n' '{"name": "esc", "command": ["true"], "variants": {"../../ESCAPED": {}}}' \
	>"$tmp/esc/a/b/p.json"
(cd "$tmp/esc/a/b" && "$SB" compare --pipeline p.json --reps 1 --out out >/dev/null 2>"$tmp/esc.err")
rc=$?
check "variant '../../ESCAPED': exit 3 (got $rc)" [ "$rc" -eq 3 ]
check "variant '../../ESCAPED': named, nothing escaped" \
	sh -c "grep -q 'variant name \"../../ESCAPED\"' '$tmp/esc.err' && [ -z \"\$(ls -A '$tmp/esc/a/b/out' 2>/dev/null)\" ] && [ ! -e '$tmp/esc/ESCAPED-1.trace.jsonl.zst' ]"
printf '%s\n' '{"name": "esc", "command": ["true"], "variants": {"a/b": {}}}' >"$tmp/esc2.json"
"$SB" compare --pipeline "$tmp/esc2.json" --reps 1 --out "$tmp/esc2" >/dev/null 2>"$tmp/esc2.err"
check "variant 'a/b': exit 3" sh -c "[ $? -eq 3 ] && grep -q \"variant name \\\"a/b\\\"\" '$tmp/esc2.err'"

# Same conditions for every run: a prepare command runs once before anything (its output in
# prepare.log; every run sees what it built), --warmup 1 runs each variant once apart
# (warmup/, not in runs.json), --cache-state cold is in each trace's start record with the
# declared files counted, and a first run 2 s slower than its variant's second is named.
# A failing prepare runs nothing (exit 3).
cat >"$tmp/cond.json" <<'JSON'
{"name": "cond",
 "prepare": ["sh", "-c", "echo built >{cache}/made; echo prepared"],
 "files": ["{cache}"],
 "command": ["sh", "-c", "cat {cache}/made; [ $0 = 1 ] && [ {mode} = slow ] && sleep 2; exit 0", "{run}"],
 "variants": {"fast": {}, "slow": {}}}
JSON
mkdir -p "$tmp/ccache"
"$SB" compare fast slow --pipeline "$tmp/cond.json" --cache "$tmp/ccache" --reps 2 --warmup 1 \
	--cache-state cold --out "$tmp/cond" >/dev/null 2>"$tmp/cond.err"
rc=$?
check "conditions: exit 0 (got $rc: $(tail -n 3 "$tmp/cond.err"))" [ "$rc" -eq 0 ]
check "prepare ran once, first" sh -c "grep -q '^prepared' '$tmp/cond/prepare.log' &&
	grep -q '^built' '$tmp/cond/warmup/fast-1.log' && grep -q '^built' '$tmp/cond/fast-1.log'"
check "warmup runs recorded apart, left out of runs.json" sh -c "
	[ -s '$tmp/cond/warmup/slow-1.trace.jsonl.zst' ] && ! grep -q warmup '$tmp/cond/runs.json' &&
	[ \$(grep -c '\"trace\"' '$tmp/cond/runs.json') -eq 4 ]"
check "the cache state is in the start record" sh -c "zstdcat '$tmp/cond/fast-2.trace.jsonl.zst' |
	head -n 1 | grep -q '\"cache_state\":\"cold\",\"cache_files\":1,\"cache_bytes\":6'"
check "the slow first run is named" \
	grep -q "warning: slow run 1 took .* times the .* of the other slow run: a first run often pays" "$tmp/cond.err"
check "no other run is named" sh -c "[ \$(grep -c 'times the' '$tmp/cond.err') -eq 1 ]"
printf '%s\n' '{"name": "badprep", "prepare": ["sh", "-c", "echo no; exit 4"],' \
	'"command": ["true"], "variants": {"v": {}}}' >"$tmp/badprep.json"
"$SB" compare --pipeline "$tmp/badprep.json" --reps 1 --out "$tmp/badprep" >/dev/null 2>"$tmp/badprep.err"
rc=$?
check "a failing prepare: exit 3, nothing run (got $rc: $(cat "$tmp/badprep.err"))" sh -c "
	[ $rc -eq 3 ] && grep -q 'prepare: failed with exit code 4: nothing was run' '$tmp/badprep.err' &&
	[ ! -e '$tmp/badprep/v-1.trace.jsonl.zst' ]"

# Fair first runs by default: a pipeline that declares files runs each time with them
# warm (read once) unless --cache-state says otherwise; one that declares none, as-is.
"$SB" compare fast --pipeline "$tmp/cond.json" --cache "$tmp/ccache" --reps 1 \
	--out "$tmp/dflt" >/dev/null 2>"$tmp/dflt.err"
check "declared files: warm by default" sh -c "zstdcat '$tmp/dflt/fast-1.trace.jsonl.zst' |
	head -n 1 | grep -q '\"cache_state\":\"warm\",\"cache_files\":1,\"cache_bytes\":6'"
printf '%s\n' '{"name": "nofiles", "command": ["true"], "variants": {"v": {}}}' >"$tmp/nofiles.json"
"$SB" compare --pipeline "$tmp/nofiles.json" --reps 1 --out "$tmp/nofiles" >/dev/null 2>&1
check "no declared files: as-is by default" sh -c "zstdcat '$tmp/nofiles/v-1.trace.jsonl.zst' |
	head -n 1 | grep -q '\"cache_state\":\"as-is\"'"

# Memory primed before each run: the first run of a variant gets the declared files' size,
# the next what that variant's runs used at most (the largest footprint sampled in them).
EATMEM=${SB_HELPERS:-$root/build/helpers}/eatmem
cat >"$tmp/prime.json" <<JSON
{"name": "prime", "files": ["{cache}"],
 "command": ["$EATMEM", "alloc=64M", "sleep=500ms"], "variants": {"v": {}}}
JSON
"$SB" compare --pipeline "$tmp/prime.json" --cache "$tmp/ccache" --reps 2 \
	--out "$tmp/prime" >/dev/null 2>"$tmp/prime.err"
primed() { zstdcat "$1" | head -n 1 | sed -n 's/.*"memory_primed":\([0-9]*\).*/\1/p'; }
p1=$(primed "$tmp/prime/v-1.trace.jsonl.zst")
p2=$(primed "$tmp/prime/v-2.trace.jsonl.zst")
top1=$(zstdcat "$tmp/prime/v-1.trace.jsonl.zst" | sed -n 's/.*"type":"sample".*"footprint":\([0-9]*\).*/\1/p' |
	sort -n | tail -n 1)
check "primed: run 1 the files' 6 bytes, run 2 run 1's largest sampled footprint (got '$p1', '$p2', '$top1')" \
	sh -c "[ '$p1' = 6 ] && [ -n '$top1' ] && [ '$top1' -gt 6 ] && [ '$p2' = '$top1' ]"
check "the priming is a mark at t 0, the record after the start" sh -c "zstdcat '$tmp/prime/v-2.trace.jsonl.zst' |
	sed -n 2p | grep -q '\"kind\":\"mark\",\"t\":0.0000,\"note\":\"memory primed: '"
"$SB" compare --pipeline "$tmp/prime.json" --cache "$tmp/ccache" --reps 1 --no-prime \
	--out "$tmp/noprime" >/dev/null 2>&1
check "--no-prime: nothing primed" sh -c "zstdcat '$tmp/noprime/v-1.trace.jsonl.zst' | head -n 1 |
	grep -q '\"cache_bytes\":6}'"

# The control: without RNG restore, staged loading changes the noise from the first stage
# that builds a model mid-run (preprocess builds rembg_model before its output). Run from a
# fresh directory with --by-commit and gnuplot off PATH (charts skipped, the runs go on).
mkdir -p "$tmp/cwd" "$tmp/bin"
ln -s "$(command -v git)" "$tmp/bin/git" 2>/dev/null
(cd "$tmp/cwd" && PATH="$tmp/bin" "$SB" compare eager staged-no-rng --size tiny --reps 1 \
	--cache "$tmp/cache" --by-commit >"$tmp/n.out" 2>"$tmp/n.err")
rc=$?
check "no-rng: exit 1, its latents differ (got $rc: $(tail -n 3 "$tmp/n.err"))" [ "$rc" -eq 1 ]
N=$(ls -d "$tmp"/cwd/runs/*-demo* 2>/dev/null | head -n 1)
if git -C "$root/demo" rev-parse HEAD >/dev/null 2>&1; then
	short=$(basename "$N" | sed -n 's/^[0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}-demo-\([0-9a-f]\{7,\}\)\(-dirty\)\{0,1\}$/\1/p')
	check "--by-commit: runs/DATE-demo-COMMIT[-dirty] ($N)" \
		sh -c "[ -n '$short' ] && git -C '$root/demo' merge-base --is-ancestor '$short' HEAD"
fi
check "no gnuplot: a warning, no charts" sh -c "grep -q 'gnuplot not found' '$tmp/n.err' && [ ! -e '$N/memory.png' ]"
check "no-rng: latents.md written" [ -s "$N/latents.md" ]
awk '/^## image /,/^## cond /' "$N/latents.md" >"$tmp/image.md"
check "no-rng: the first latent (image, preprocess) differs" \
	sh -c "grep '^| eager-1 ' '$tmp/image.md' | grep -vq identical"
check "no-rng: no latent identical" sh -c "grep -q ' 0 identical' '$N/latents.md'"

# Errors.
printf '{"name": "x", "command": 5}\n' >"$tmp/bad.json"
"$SB" compare --pipeline "$tmp/bad.json" --out "$tmp/bad" >/dev/null 2>"$tmp/bad.err"
rc=$?
check "bad pipeline file: exit 3 (got $rc)" [ "$rc" -eq 3 ]
check "bad pipeline file: named" grep -q "$tmp/bad.json" "$tmp/bad.err"
"$SB" compare --pipeline "$tmp/none.json" --out "$tmp/bad" >/dev/null 2>"$tmp/none.err"
check "missing pipeline file: exit 3, named" sh -c "[ $? -eq 3 ] && grep -q '$tmp/none.json' '$tmp/none.err'"
"$SB" compare eager frobnicate --out "$tmp/bad" >/dev/null 2>"$tmp/var.err"
rc=$?
check "unknown variant: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "unknown variant: named with those available" \
	grep -q "unknown variant 'frobnicate'.*eager, staged, staged-no-rng" "$tmp/var.err"
"$SB" compare --set colour=red --out "$tmp/bad" >/dev/null 2>"$tmp/set.err"
check "--set of a key with no default: exit 2" sh -c "[ $? -eq 2 ] && grep -q \"no default 'colour'.*size\" '$tmp/set.err'"
"$SB" compare --reps 0 >/dev/null 2>&1
check "--reps 0: exit 2" [ $? -eq 2 ]
check "nothing written on errors" [ ! -e "$tmp/bad" ]
"$SB" compare --help >"$tmp/help" 2>&1
check "--help exits 0 and documents --by-commit and --max-footprint" \
	sh -c "[ $? -eq 0 ] && grep -q -- '--by-commit' '$tmp/help' && grep -q -- '--max-footprint' '$tmp/help'"

# The binary elsewhere: the demo is not found unless STAGEBENCH_HOME says where.
mkdir -p "$tmp/elsewhere"
cp "$SB" "$tmp/elsewhere/stagebench"
"$tmp/elsewhere/stagebench" compare --out "$tmp/bad" >/dev/null 2>"$tmp/home.err"
check "no demo beside the binary: exit 3 naming STAGEBENCH_HOME" \
	sh -c "[ $? -eq 3 ] && grep -q 'cannot find the bundled demo.*STAGEBENCH_HOME' '$tmp/home.err'"
STAGEBENCH_HOME=$root "$tmp/elsewhere/stagebench" compare nosuch >/dev/null 2>"$tmp/home2.err"
check "STAGEBENCH_HOME locates the demo" sh -c "[ $? -eq 2 ] && grep -q 'staged-no-rng' '$tmp/home2.err'"

# --no-rng-replay: the staged runs' probe says RNG replay is off (the variant's env had it on).
"$SB" compare staged --reps 1 --seed 7 --no-rng-replay --out "$tmp/norr" >"$tmp/norr.log" 2>&1
rc=$?
check "--no-rng-replay: exit 0, the staged trace's probe says rng_replay=off" \
	sh -c "[ $rc -eq 0 ] && zstdcat '$tmp'/norr/staged-1.trace.jsonl.zst | grep -q '\"probe: mode=staged.*rng_replay=off'"
zstdcat "$tmp"/norr/staged-1.trace.jsonl.zst >/dev/null 2>&1 || sed 's/^/    /' "$tmp/norr.log"

exit $fail
