# check: a rerun inside the baseline's noise is clean (exit 0); thresholds and
# --allow-latent-change move what counts.
# exit: 0
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
echo "--- the baseline against itself"
"$SB" check --baseline base base; echo "exit $?"
echo "--- generous thresholds, latent change allowed"
"$SB" check --max-growth 2G --max-time-growth 1m --allow-latent-change --baseline base new2; echo "exit $?"
