#!/bin/sh
# bisect-run.sh -- judge the checked-out commit of a pipeline for `git bisect run`.
#
# Usage (from the pipeline's repository; see docs/bisect.md):
#   git bisect run /path/to/bisect-run.sh --baseline DIR [--build CMD] [--keep DIR]
#       [--max-growth X] [--max-time-growth X] [--allow-latent-change] [--strict]
#       [--stagebench PATH] -- COMPARE ARGUMENTS...
#
# For the commit checked out: runs CMD (sh -c, when --build is given), then
# `stagebench compare COMPARE ARGUMENTS... --out OUT`, then `stagebench check --baseline DIR OUT`
# with the thresholds given, and exits as `git bisect run` reads it:
#   0    good: check found no regression against the baseline
#   1    bad: check found a regression (heavier, slower, a stage no longer reached, latents
#        changed beyond the baseline's noise)
#   125  cannot be judged, skip it: the build failed; compare could not run the pipeline (exit
#        3: a run could not start, or exit 1 with every run dead before the pipeline's first
#        stage, e.g. a syntax error); check could not read the runs; or, with
#        --strict, check left something not judged (fewer than 2 runs with a value in a stage,
#        so its noise is unknown; without --strict that is noted on the verdict line)
#   255  stop bisecting: a usage error (of this script, compare or check: thresholds are checked
#        before any compare), or an interrupt
# One line on stderr says which and why. OUT is a fresh temporary directory, removed after,
# unless --keep DIR: then DIR/COMMIT (the short commit) is kept. STAGEBENCH (or --stagebench)
# names the binary; default: stagebench beside this script's directory, else on PATH.
set -u
here=$(cd "$(dirname "$0")" && pwd)
sb=${STAGEBENCH:-}
baseline="" build="" keep="" strict=0
usage() {
	echo "usage: $0 --baseline DIR [--build CMD] [--keep DIR] [--max-growth X] [--max-time-growth X]" >&2
	echo "       [--allow-latent-change] [--strict] [--stagebench PATH] -- COMPARE ARGUMENTS..." >&2
	exit 255
}
# check's own thresholds, kept as positional words in $checkopts: each value one word (a
# percentage, a size or a duration), else a usage error before anything runs
checkopts=""
threshold() { # threshold OPTION VALUE
	case $2 in
	'' | *[!a-zA-Z0-9%.]*)
		echo "bisect-run: option '$1': invalid threshold '$2' (one word: 5%, 512M, 2s)" >&2
		exit 255 ;;
	esac
	checkopts="$checkopts $1=$2"
}
while [ $# -gt 0 ]; do
	case $1 in
	--baseline) [ $# -ge 2 ] || usage; baseline=$2; shift ;;
	--build) [ $# -ge 2 ] || usage; build=$2; shift ;;
	--keep) [ $# -ge 2 ] || usage; keep=$2; shift ;;
	--stagebench) [ $# -ge 2 ] || usage; sb=$2; shift ;;
	--strict) strict=1 ;;
	--max-growth | --max-time-growth) [ $# -ge 2 ] || usage; threshold "$1" "$2"; shift ;;
	--max-growth=* | --max-time-growth=*) threshold "${1%%=*}" "${1#*=}" ;;
	--allow-latent-change) checkopts="$checkopts $1" ;;
	--) shift; break ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
	shift
done
[ -n "$baseline" ] || usage
[ -d "$baseline" ] || { echo "bisect-run: baseline '$baseline' is not a directory" >&2; exit 255; }
baseline=$(cd "$baseline" && pwd)
if [ -z "$sb" ]; then
	if [ -x "$here/../stagebench" ]; then sb=$here/../stagebench; else sb=stagebench; fi
fi
# check reads the thresholds now, on the baseline against itself: one it refuses (exit 2)
# stops the bisection before any compare
# shellcheck disable=SC2086 # checkopts: words without spaces or globs (threshold above)
said=$("$sb" check --format json $checkopts --baseline "$baseline" "$baseline" 2>&1 >/dev/null)
if [ $? = 2 ]; then
	printf '%s\n' "$said" | sed 's/^/bisect-run: /' >&2
	echo "bisect-run: check refuses the thresholds: stop" >&2
	exit 255
fi
commit=$(git rev-parse --short HEAD 2>/dev/null) || { echo "bisect-run: not in a git checkout" >&2; exit 255; }
verdict() { # verdict STATUS WORD WHY
	echo "bisect-run: $commit $2: $3" >&2
	exit "$1"
}

if [ -n "$build" ]; then
	sh -c "$build" >&2 || verdict 125 skip "the build ('$build') failed"
fi
if [ -n "$keep" ]; then
	mkdir -p "$keep" || exit 255
	out=$(cd "$keep" && pwd)/$commit
	rm -rf "$out"
else
	tmp=$(mktemp -d) || exit 255
	trap 'rm -rf "$tmp"' EXIT
	out=$tmp/runs
fi
"$sb" compare "$@" --out "$out" >&2
rc=$?
case $rc in
0) ;;
1) # a finding: a latent differs, or a run's command failed on its own. Runs that all died
   # before the pipeline's first stage (still in setup) mean it does not start: not judged.
   # Otherwise check judges the runs (a stage a run never reached is a regression).
   "$sb" analyze --json "$out"/*.trace.jsonl* >"$out.analyze.json" 2>/dev/null
   python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
sys.exit(0 if runs and all(r["ran_to"] == "setup" and r["outcome"] != "completed" for r in runs) else 1)' \
	"$out.analyze.json" 2>/dev/null && verdict 125 skip "compare could not run the pipeline: every run ended in setup (exit 1)"
   rm -f "$out.analyze.json" ;;
2) verdict 255 stop "compare: usage error (exit 2)" ;;
*) if [ $rc -gt 128 ]; then verdict 255 stop "compare interrupted (exit $rc)"; fi
   verdict 125 skip "compare could not run the pipeline (exit $rc)" ;;
esac
# shellcheck disable=SC2086 # checkopts: words without spaces or globs (threshold above)
"$sb" check --format json $checkopts --baseline "$baseline" "$out" >"$out.check.json"
rc=$?
case $rc in
0 | 1) ;;
2) verdict 255 stop "check: usage error (exit 2)" ;;
*) verdict 125 skip "check could not read the runs (exit $rc)" ;;
esac
summary=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
regs = ["%s %s %s" % (x["mode"], x["stage"], x["metric"]) for x in r.get("regressions", [])]
nj = ["%s %s (%s)" % (x["mode"], x["stage"], x["why"]) for x in r.get("not_judged", [])]
print("bad" if regs else "notjudged" if nj else "good")
print("; ".join(regs) if regs else "no regression" + ("; not judged: " + "; ".join(nj) if nj else ""))' "$out.check.json")
[ -n "$keep" ] || rm -f "$out.check.json"
word=$(printf '%s\n' "$summary" | sed -n 1p)
why=$(printf '%s\n' "$summary" | sed -n 2p)
case $word in
good) verdict 0 good "$why" ;;
bad) verdict 1 bad "regression: $why" ;;
notjudged) if [ $strict = 1 ]; then verdict 125 skip "$why"; else verdict 0 good "$why"; fi ;;
*) verdict 125 skip "check's report could not be read" ;;
esac
