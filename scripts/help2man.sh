#!/bin/sh
# help2man.sh -- the man pages, made from the --help texts of the built binary.
#
# Usage: scripts/help2man.sh STAGEBENCH OUTDIR
#
# Writes OUTDIR/stagebench.1 (from `stagebench --help`) and OUTDIR/stagebench-CMD.1 for every
# command that `stagebench --help` lists (from `stagebench CMD --help`). The --help texts are
# the one source: a page cannot say anything its command's --help does not. Their layout, as
# every command writes it:
#   usage: stagebench CMD ...        (SYNOPSIS; continuation lines indented)
#   plain paragraphs                 (DESCRIPTION)
#     -o, --opt ARG     text         (an option list: two spaces in, the text in a column;
#                       more text     continuation lines indented to the text column)
#   other indented lines             (kept as they are: formulas, examples)
#   WORDS:                           (a heading of its own, e.g. "guard options:")
#   exit...: text                    (EXIT STATUS)
set -eu
[ $# -eq 2 ] || { echo "usage: $0 STAGEBENCH OUTDIR" >&2; exit 2; }
sb=$1 out=$2
mkdir -p "$out"
version=$("$sb" --version | awk '{ print $2; exit }')
date=${SOURCE_DATE_EPOCH:+$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%d)}
date=${date:-$(date -u +%Y-%m-%d)}
commands=$("$sb" --help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }')
[ -n "$commands" ] || { echo "help2man: '$sb --help' lists no commands" >&2; exit 3; }

# page NAME SUMMARY: roff on stdout from a --help text on stdin
page() {
	awk -v name="$1" -v summary="$2" -v version="$version" -v date="$date" -v cmds="$commands" '
	function esc(s,   r, i, ch, prev, opt) {  # roff: backslashes; dashes of options are minus signs
		r = ""; prev = " "; opt = 0
		for (i = 1; i <= length(s); i++) {
			ch = substr(s, i, 1)
			if (ch == "-" && index(" [(|,=", prev)) opt = 1
			else if (index(" [](|,=", ch)) opt = 0
			if (ch == "\\") r = r "\\e"
			else if (ch == "-" && opt) r = r "\\-"
			else r = r ch
			prev = ch
		}
		if (r ~ /^[.\047]/) r = "\\&" r
		return r
	}
	function up(s) { return toupper(s) }
	function flush_para() { if (para != "") { print ".PP"; print para; para = "" } }
	function end_pre() { if (pre) { print ".fi"; print ".RE"; pre = 0 } }
	function section(s) { flush_para(); end_pre(); print ".SH " s }
	BEGIN {
		print ".\\\" Made by scripts/help2man.sh from the --help text; edit that, not this."
		printf ".TH %s 1 \"%s\" \"stagebench %s\" \"stagebench manual\"\n", up(name), date, version
		print ".SH NAME"
		print esc(name) " \\- " esc(summary)
		state = "usage"
	}
	state == "usage" && /^usage: / {
		sub(/^usage: /, "")
		print ".SH SYNOPSIS"; print ".nf"; print esc($0)
		next
	}
	state == "usage" && /^ +[^ ]/ { sub(/^ +/, "        "); print esc($0); next }
	state == "usage" { print ".fi"; section("DESCRIPTION"); state = "body"; next }
	/^$/ { flush_para(); end_pre(); inopt = 0; next }
	/^exit[a-z ]*: / {
		section("EXIT STATUS"); sub(/^exit[a-z ]*: /, ""); para = esc($0); next
	}
	/^[A-Za-z][A-Za-z ]*:$/ && !/ .* .* .* / {
		flush_para(); end_pre(); sub(/:$/, ""); print ".SS " esc(up(substr($0, 1, 1)) substr($0, 2)); next
	}
	# an option line: two to six spaces, a dash, an operand in capitals or a page name, then two
	# spaces and text
	/^  +(-|[A-Z][A-Z_.]*[^a-z]*  |[a-z-]+\(1\)  )/ && match($0, /^ */) && RLENGTH <= 6 && match($0, /[^ ]  +[^ ]/) {
		flush_para(); end_pre()
		tag = substr($0, 1, RSTART); sub(/^ +/, "", tag)
		col = RSTART + RLENGTH - 1
		text = substr($0, col)
		print ".TP"; print "\\fB" esc(tag) "\\fR"; print esc(text)
		inopt = 1; next
	}
	inopt && /^ +[^ ]/ { t = $0; sub(/^ +/, "", t); print esc(t); next }
	/^ / {
		flush_para()
		if (!pre) { print ".RS 4"; print ".nf"; pre = 1 }
		t = $0; sub(/^  /, "", t); print esc(t); next
	}
	{ end_pre(); para = (para == "" ? esc($0) : para "\n" esc($0)) }
	END {
		flush_para(); end_pre()
		print ".SH SEE ALSO"
		n = split(cmds, c, "\n"); s = ""
		if (name != "stagebench") s = "\\fBstagebench\\fR(1)"
		for (i = 1; i <= n; i++)
			if ("stagebench-" c[i] != name) s = s (s == "" ? "" : ", ") "\\fBstagebench\\-" c[i] "\\fR(1)"
		print s
	}'
}

# The top page: its command list becomes a list of pages.
"$sb" --help | awk '
	/^commands:/ { print "COMMANDS:"; c = 1; next }
	c && /^  [a-z]/ { cmd = $1; sub(/^ +[a-z]+ +/, ""); printf "  stagebench-%s(1)  %s\n", cmd, $0; next }
	c && /^$/ { c = 0 }
	{ print }' | page stagebench "$("$sb" --help | awk 'NR == 3 { sub(/\.$/, ""); print tolower(substr($0, 1, 1)) substr($0, 2); exit }')" >"$out/stagebench.1"
for c in $commands; do
	summary=$("$sb" --help | awk -v c="$c" '$1 == c { sub(/^ +[a-z]+ +/, ""); print; exit }')
	"$sb" "$c" --help | page "stagebench-$c" "$summary" >"$out/stagebench-$c.1"
done
