# Every command reports a refused option in one format on stderr, exit 2:
# an unknown long or short option, an option missing its value, a bad value.
for c in record guard compare analyze table latents plot check; do
	"$SB" $c --no-such-option x 2>&1 >/dev/null; echo "$c unknown long: $?"
	"$SB" $c -Z x 2>&1 >/dev/null; echo "$c unknown short: $?"
done
"$SB" record --interval 2>&1 >/dev/null; echo "record missing value: $?"
"$SB" record -o 2>&1 >/dev/null; echo "record missing short value: $?"
"$SB" record --interval 0.1us -- true 2>&1 >/dev/null; echo "record bad value: $?"
"$SB" guard --poll 2>&1 >/dev/null; echo "guard missing value: $?"
"$SB" guard --wait-free lots -- true 2>&1 >/dev/null; echo "guard bad value: $?"
"$SB" guard --quiet=yes -- true 2>&1 >/dev/null; echo "guard value not taken: $?"
"$SB" compare --reps 2>&1 >/dev/null; echo "compare missing value: $?"
"$SB" compare --reps 0 2>&1 >/dev/null; echo "compare bad value: $?"
"$SB" table --format 2>&1 >/dev/null; echo "table missing value: $?"
"$SB" table --format xml x 2>&1 >/dev/null; echo "table bad value: $?"
"$SB" latents --format 2>&1 >/dev/null; echo "latents missing value: $?"
"$SB" latents --format xml x 2>&1 >/dev/null; echo "latents bad value: $?"
"$SB" plot -o 2>&1 >/dev/null; echo "plot missing short value: $?"
"$SB" plot --ram lots x 2>&1 >/dev/null; echo "plot bad value: $?"
"$SB" check --baseline 2>&1 >/dev/null; echo "check missing value: $?"
"$SB" check --baseline b --format xml x 2>&1 >/dev/null; echo "check bad value: $?"
"$SB" analyze 2>&1 >/dev/null; echo "analyze no operand: $?"
"$SB" record --label nokey -- true 2>&1 >/dev/null; echo "record bad label: $?"
{ "$SB" compare --set nokey 2>&1 >/dev/null; echo "compare bad set: $?"; } | sed 's|[^ ]*/demo/|DEMO/|'
{ "$SB" compare --set colour=red 2>&1 >/dev/null; echo "compare unknown set: $?"; } | sed 's|[^ ]*/demo/|DEMO/|'
{ "$SB" record -o "$TMP/t.trace" --pipeline ../../demo/pipeline.json --variant eager --set colour=red -- true \
	2>&1 >/dev/null; echo "record unknown set: $?"; } | sed 's|[^ ]*/demo/|DEMO/|'
{ "$SB" compare nosuch 2>&1 >/dev/null; echo "compare unknown variant: $?"; } | sed 's|[^ ]*/demo/|DEMO/|'
"$SB" compare eager eager 2>&1 >/dev/null; echo "compare variant twice: $?"
"$SB" guard 2>&1 >/dev/null; echo "guard no command: $?"
