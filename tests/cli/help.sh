# Top-level help lists every command and exits 0; an unknown command is a usage error.
# Every command: --help on stdout with exit 0, an unknown option is a usage error (exit 2).
"$SB" --help | head -n 1
"$SB" frobnicate 2>/dev/null; echo "unknown: $?"
"$SB" 2>/dev/null; echo "none: $?"
# The commands as the top-level help lists them, so a new command is covered here too.
cmds=$("$SB" --help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }')
for c in $cmds; do
	first=$("$SB" $c --help | head -n 1)
	rc=$("$SB" $c --help >/dev/null 2>&1; echo $?)
	bad=$("$SB" $c --no-such-option >/dev/null 2>&1; echo $?)
	case "$first" in
	"usage: stagebench $c"*) echo "$c: help exit $rc, bad option exit $bad" ;;
	*) echo "$c: help starts with '$first'" ;;
	esac
done
# A write error on stdout is a failure, not a silent success.
"$SB" table "$FIXTURES/stageload/2026-10-06-qwen-image/staged-1.trace.jsonl" >/dev/full 2>/dev/null
echo "stdout full: $?"
