# check: two baseline and two candidate runs per mode, hand-written; a heavier stage, a stage
# no longer reached, a faster stage, a changed latent, and a mode with one baseline run.
# exit: 1
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
"$SB" check --baseline base new
