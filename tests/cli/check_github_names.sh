# check --format github with a line break in a directory label: the closing line escapes it as
# GitHub reads messages (%0A), so no line of the output is a workflow command that is not ours.
# exit: 1
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
nl='
'
mv new "new$nl::error::injected"
"$SB" check --format github --baseline base "new$nl::error::injected" >out
rc=$?
tail -n 1 out
grep '^::error::' out
exit $rc
