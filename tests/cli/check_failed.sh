# check of commits whose runs failed: against a good baseline the outcome regressions and the
# stages with no completed run in the candidate; against a baseline that failed the same way
# (both sides failed) no silent pass: the stages it could not compare, the failed runs, exit 1.
# exit: 1
cd "$TMP" || exit 99
. "$OLDPWD/history_failed.inc"
make_failed
"$SB" check --baseline c2 c3 | sed -n '1,/^rule:/p' | grep -v '^rule:'

"$SB" check --baseline c3 c4 | grep -v '^rule:'
echo "--- junit"
"$SB" check --format junit --baseline c3 c4 | grep -B1 'skipped'
"$SB" check --baseline c3 c4 >/dev/null
