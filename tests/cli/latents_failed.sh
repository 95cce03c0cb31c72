# compare's latent verdict when runs failed: every run died in work, so the latents of the
# stages after it were never recorded; the result line says so instead of "identical".
cd "$TMP" || exit 99
. "$OLDPWD/history_failed.inc"
make_failed
"$SB" latents c3 | tail -n 2
