# --version names the version and the commit the binary was built from (12 hex digits,
# -dirty for a tree with changes, "unknown" outside git); the trace's start record carries
# the same two.
v=$("$SB" --version)
echo "$v" | sed 's/(commit [0-9a-f]\{12\}\(-dirty\)\{0,1\})$/(commit C)/; s/(commit unknown)$/(commit C)/'
"$SB" version | sed 's/(commit .*)$/(commit C)/'
"$SB" record -q -o "$TMP/v.trace.jsonl" -- true
t=$(head -n 1 "$TMP/v.trace.jsonl" | sed -n 's/.*"stagebench":{"version":"\([^"]*\)","commit":"\([^"]*\)"}.*/stagebench \1 (commit \2)/p')
[ "$t" = "$v" ] && echo "start record: the same version and commit" || echo "start record: '$t' vs '$v'"
