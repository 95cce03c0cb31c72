# history over commits whose runs stop completing a stage: the cells say "failed" where no run
# completed it, the Regressions section names the commit where the outcome regressed (and only
# there), commits are short ids; JSON carries the same marks; the chart crosses the failed stages.
cd "$TMP" || exit 99
. "$OLDPWD/history_failed.inc"
make_failed
"$SB" history c1 c2 c3 c4
echo "--- json"
"$SB" history --format json c1 c2 c3 c4 | python3 -c '
import json, sys
h = json.load(sys.stdin)
print([c["short"] for c in h["commits"]])
for s in h["series"]:
    print(s["stage"], [None if p is None else (p["runs"], p["failed"], p["regression"]) for p in s["peak footprint"]])
for r in h["regressions"]:
    print(r["from"][:7], "->", r["to"][:7], r["mode"], r["stage"], r["what"])'
