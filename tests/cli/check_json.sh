# check --format json on the same run sets as check_md: bytes and seconds, every run's value.
# exit: 1
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
"$SB" check --format json --baseline base new
