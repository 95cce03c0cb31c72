#!/bin/sh
# slurm_compare.sh -- "$root/scripts/slurm-compare" against a stand-in sbatch that runs each job at once
# under /bin/sh, as Slurm does (a --wrap string with `sh -c`, a job script with sh): arguments
# with bytes that bash's printf %q would write as $'...' (a non-ASCII --out under LC_ALL=C, a
# newline) reach compare as they are; compare options the script adds itself are refused.
# Needs SB_BIN and SB_HELPERS. No Slurm needed (tests/slurm has the real cluster).
set -u
. "$(dirname "$0")/common.inc"
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
mkdir -p "$tmp/bin"
# sbatch: --array=0-N runs the job N+1 times (SLURM_ARRAY_TASK_ID), --output gets its output
# (%a the task), --parsable prints an id; the job is --wrap's string or a script file.
cat >"$tmp/bin/sbatch" <<'SB'
#!/bin/bash
array="" outpat=/dev/null wrap="" script=""
while [ $# -gt 0 ]; do
	case "$1" in
	--array=*) array=${1#--array=} ;;
	--output=*) outpat=${1#--output=} ;;
	--wrap) wrap=$2; shift ;;
	--*) ;;
	*) script=$1; shift; break ;;
	esac
	shift
done
echo "${script:-wrap}" >>"$SBATCH_LOG"
run() { # TASK
	out=${outpat//%a/$1}
	if [ -n "$wrap" ]; then
		SLURM_ARRAY_TASK_ID=$1 /bin/sh -c "$wrap" >"$out" 2>&1
	else
		SLURM_ARRAY_TASK_ID=$1 /bin/sh "$script" "$@" >"$out" 2>&1
	fi
}
rc=0
if [ -n "$array" ]; then
	for k in $(seq "${array%-*}" "${array#*-}"); do run "$k"; done
else
	run "" || rc=$?
fi
echo "$RANDOM"
exit $rc
SB
chmod +x "$tmp/bin/sbatch"
PATH=$tmp/bin:$PATH
export SBATCH_LOG=$tmp/sbatch.log
cat >"$tmp/p.json" <<EOF2
{"name": "sl", "command": ["$E", "stage=work", "alloc=1M", "stage=done"], "defaults": {"x": "1"}, "variants": {"p": {}, "q": {}}}
EOF2
cd "$tmp" || exit 1

# 1. a non-ASCII --out under LC_ALL=C, and a newline in another argument
out=$(printf '%s/r\303\251sultat' "$tmp")
LC_ALL=C "$root/scripts/slurm-compare" --wait --stagebench "$SB" -- p q --pipeline "$tmp/p.json" --reps 1 \
	--set "x=it's a
b" --out "$out" >"$tmp/1.log" 2>&1
rc=$?
check "a non-ASCII --out and a newline: exit 0 (got $rc; $(tail -n 3 "$tmp/1.log"))" [ $rc -eq 0 ]
check "the tasks wrote into the --out given" sh -c "[ -s '$out/runs.d/p-1.json' ] && [ -s '$out/runs.d/q-1.json' ]"
check "the merge wrote runs.json there" [ -s "$out/runs.json" ]
check "nothing went to a directory named \$" [ ! -e "$tmp/\$" ]

# 5. compare options that slurm-compare adds itself
for opt in --plan "--task 1" --merge; do
	: >"$SBATCH_LOG"
	# shellcheck disable=SC2086 # $opt is one option or an option and its value
	"$root/scripts/slurm-compare" --stagebench "$SB" -- p q --pipeline "$tmp/p.json" --reps 1 \
		--out "$tmp/o5" $opt >"$tmp/5.log" 2>&1
	rc=$?
	check "compare arguments with $opt: exit 2 (got $rc)" [ $rc -eq 2 ]
	check "and nothing submitted" [ ! -s "$SBATCH_LOG" ]
	check "naming the option" grep -q -- "${opt% *}" "$tmp/5.log"
done

exit $fail
