# Top-level help lists every command and exits 0; an unknown command is a usage error.
"$SB" --help | head -n 1
"$SB" frobnicate 2>/dev/null; echo "unknown: $?"
"$SB" 2>/dev/null; echo "none: $?"
