# check --format github on the hand-written runs of check_md: an ::error line per regression,
# ::notice per improvement, ::warning per not-judged row, then the summary line.
# exit: 1
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
"$SB" check --format github --baseline base new
