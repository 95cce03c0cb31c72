# history over three commits given out of order: columns by recording time, the dirty one
# starred, its heavier work stage marked as a regression against the commit before it.
cd "$TMP" || exit 99
. "$OLDPWD/history_runs.inc"
make_history
"$SB" history c3 c1 c2
echo "--- given order"
"$SB" history --order given c3 c1 c2 | awk '/^## /{p = /peak footprint/} p'
