# history as CSV (unrounded bytes and seconds) and JSON (parsed; the regression is on c2's work).
cd "$TMP" || exit 99
. "$OLDPWD/history_runs.inc"
make_history
"$SB" history --format csv c1 c2 c3 | grep -E '^(mode|staged,work,peak footprint)'
"$SB" history --format json c1 c2 c3 >h.json
/usr/bin/python3 - h.json <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
print([(c["commit"], c["dirty"], c["runs"]) for c in h["commits"]])
for s in h["series"]:
    marks = [i for i, p in enumerate(s["peak footprint"]) if p and p["regression"]]
    print(s["mode"], s["stage"], [p and p["max"] for p in s["peak footprint"]], "regressions at", marks)
PY
"$SB" history --order sideways c1 2>&1; echo "exit $?"
