#!/bin/sh
# completion.sh -- completions/stagebench.bash driven the way bash drives it (COMP_WORDS,
# COMP_CWORD, then _stagebench): commands, options, every option's values as its row in the
# option table says (`stagebench --complete-spec`), compare's variants from the pipeline file
# given (and the demo's by default), a command after `--`; the zsh completion the same way,
# compsys's functions stubbed. The checked-in completions are what `make completions` writes
# from the binary's tables (scripts/completions.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SB=${SB_BIN:-$root/stagebench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL completion: $*"; fail=1; }

# complete LINE...: the words offered for the last word of LINE (the binary is $SB), sorted
complete_words() {
	bash -c '
		. "$1/completions/stagebench.bash" || exit 3
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_stagebench
		printf "%s\n" "${COMPREPLY[@]}" | sort' complete_words "$root" "$SB" "$@"
}
# expect DESCRIPTION "WANTED WORDS" LINE...: exactly these words
expect() {
	desc=$1 want=$(printf '%s\n' $2 | sort)
	shift 2
	got=$(complete_words "$@")
	[ "$got" = "$want" ] || bad "$desc: got '$(echo $got)', wanted '$(echo $want)'"
}
# offers DESCRIPTION WORD LINE...: WORD is among the words offered
offers() {
	desc=$1 word=$2
	shift 2
	complete_words "$@" | grep -qx -- "$word" || bad "$desc: '$word' not offered for '$*'"
}

# the checked-in completions hold the binary's tables
spec=$("$SB" --complete-spec) || bad "stagebench --complete-spec failed"
"$root/scripts/completions.sh" "$SB" "$tmp/gen" || bad "scripts/completions.sh failed"
for f in stagebench.bash _stagebench; do
	cmp -s "$tmp/gen/$f" "$root/completions/$f" ||
		bad "completions/$f is not what 'make completions' writes from the binary's option tables:" \
			"$(diff "$root/completions/$f" "$tmp/gen/$f" | head -n 6)"
done

commands=$("$SB" --help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }')
[ -n "$commands" ] || bad "'stagebench --help' lists no commands"
expect "every command and the top options" "$commands --help --version" ""
expect "commands by prefix" "check compare" "c"
offers "compare's options" --pipeline compare --pi
offers "compare's guard options" --wait-free compare --wait
offers "record's short option" -o record -
expect "table's formats" "md csv json" table --format ""
expect "check's formats" "md json junit github" check --format ""

cat >"$tmp/p.json" <<'EOF'
{"name": "p", "command": ["true"], "variants": {"alpha": {}, "beta": {"env": {}}, "gamma-2": {}}}
EOF
expect "variants of the pipeline given" "alpha beta gamma-2" compare --pipeline "$tmp/p.json" ""
expect "variants of --pipeline=FILE, by prefix" "alpha" compare "--pipeline=$tmp/p.json" --seed 7 a
expect "variants of the demo by default" "eager staged staged-no-rng" compare ""
expect "variants after other options" "staged staged-no-rng" compare --seed 7 st
offers "pipeline files" "$tmp/p.json" compare --pipeline "$tmp/p"
offers "a command after --" sh record -o x.zst -- s
offers "the command's files after it" "$tmp/p.json" guard -- cat "$tmp/p"
expect "no words for a value" "" compare --seed ""
expect "record's variants" "eager staged staged-no-rng" record --pipeline demo/pipeline.json --variant ""
offers "record's guard options" --wait-free record --wa

# every option of the table whose value is one of some words: exactly those words offered,
# after its long name and after its short one; a flag is followed by the operands, not a value
printf '%s\n' "$spec" >"$tmp/spec"
while read -r kind c short long vkind words; do
	[ "$kind" = opt ] || continue
	case $vkind in
	words)
		expect "$c $long's values" "$words" "$c" "$long" ""
		[ "$short" = - ] || expect "$c $short's values" "$words" "$c" "$short" "" ;;
	flag)
		[ "$c" = compare ] && expect "compare's variants after $long" "eager staged staged-no-rng" compare "$long" "" ;;
	text)
		expect "no words for $c $long's value" "" "$c" "$long" "" ;;
	esac
done <"$tmp/spec"

# zsh: _stagebench with compsys's functions stubbed to print what they were given
zcomplete() {
	zsh -f -c '
		compadd() { if [[ $1 == -a ]]; then print -l -- ${(P)2}; else print -l -- "$@"; fi }
		_describe() { print -l -- ${${(P)4}%%:*} }
		_files() { print -- "_files $*" }
		_normal() { print -- "_normal $words[1]" }
		root=$1 sb=$2
		shift 2
		words=($sb "$@")
		CURRENT=$#words
		PREFIX=$words[-1]
		. $root/completions/_stagebench' zcomplete "$root" "$SB" "$@" | sort
}
zexpect() {
	desc=$1 want=$(printf '%s\n' $2 | sort)
	shift 2
	got=$(zcomplete "$@")
	[ "$got" = "$want" ] || bad "zsh: $desc: got '$(echo $got)', wanted '$(echo $want)'"
}
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$root/completions/_stagebench" || bad "zsh: _stagebench does not parse"
	zexpect "every command" "$commands" ""
	zexpect "variants of the pipeline given" "alpha beta gamma-2" compare --pipeline "$tmp/p.json" ""
	zexpect "variants of the demo by default" "eager staged staged-no-rng" compare ""
	zexpect "check's formats" "md json junit github" check --format ""
	zexpect "compare's cache states" "warm cold as-is" compare --cache-state ""
	zexpect "record's variants" "eager staged staged-no-rng" record --variant ""
	[ "$(zcomplete history --plot "")" = "_files -/" ] || bad "zsh: history --plot does not offer directories"
	zcomplete compare --pi | grep -qx -- --pipeline || bad "zsh: compare's option --pipeline not offered"
	[ "$(zcomplete record -- sh "")" = "_normal sh" ] || bad "zsh: no command completion after --"
else
	bad "zsh not installed (scripts/deps.sh test installs it)"
fi
# For every command the option table, its --help's option list, its man page (scripts/help2man.sh)
# and both completions name exactly the same options.
"$root/scripts/help2man.sh" "$SB" "$tmp/man" || bad "help2man.sh failed"
names() { grep -oE '(^|, )--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^, //'; }
for c in $(awk '$1 == "cmd" { print $2 }' "$tmp/spec"); do
	awk -v c="$c" '$1 == "opt" && $2 == c { if ($3 != "-") print $3; print $4 }' "$tmp/spec" | sort >"$tmp/table"
	# the rows of --help's option lists: at most six spaces in, a dash, the text two spaces on
	"$SB" "$c" --help | awk 'match($0, /^ +-/) && RLENGTH <= 7 { sub(/^ +/, ""); sub(/  .*/, ""); print }' |
		names | sort >"$tmp/help"
	# the man page's option tags: .TP, then \fB-o, --output TRACE\fR
	awk 'p { print; p = 0 } /^\.TP$/ { p = 1 }' "$tmp/man/stagebench-$c.1" | sed 's/\\fB//; s/\\fR.*//; s/\\-/-/g' |
		names | sort >"$tmp/man.txt"
	complete_words "$c" - >"$tmp/bash"
	if command -v zsh >/dev/null 2>&1; then zcomplete "$c" - >"$tmp/zsh"; else cp "$tmp/table" "$tmp/zsh"; fi
	[ -s "$tmp/table" ] || bad "$c: no options in --complete-spec"
	for f in help man.txt bash zsh; do
		cmp -s "$tmp/table" "$tmp/$f" ||
			bad "$c: the options of $f are not the table's: $(diff "$tmp/table" "$tmp/$f" | grep '^[<>]' | tr '\n' ' ')"
	done
done

# A value list written in an option table ("md csv json") is the list the command itself accepts:
# the words of its error for a bad value (for --format, render_format_list() over the renderers).
awk '$1 == "opt" && $5 == "words" && ($4 == "--format" || $4 == "--plot-format")' "$tmp/spec" >"$tmp/lists"
while read -r _ c _ o _ words; do
	msg=$("$SB" "$c" "$o" no-such-format x 2>&1 >/dev/null)
	said=$(printf '%s\n' "$msg" | sed -n "s/.*invalid value 'no-such-format' (\([^)]*\)).*/\1/p" |
		sed 's/,//g; s/ or / /')
	[ -n "$said" ] || { bad "$c $o: no value list in its error: $msg"; continue; }
	[ "$(printf '%s\n' $said | sort)" = "$(printf '%s\n' $words | sort)" ] ||
		bad "$c $o: the table offers '$words', the command accepts '$said'"
done <"$tmp/lists"
[ -s "$tmp/lists" ] || bad "no --format value lists in --complete-spec"

# Each command's usage synopsis (its --help up to the first blank line) names every option of its
# table, by its long or its short name, the guard's options as GUARD OPTIONS, --help aside; and
# names no option the table lacks.
awk '$1 == "cmd" && $2 != "guard" { print $2 }' "$tmp/spec" >"$tmp/cmds"
awk '$1 == "opt" && $2 == "guard" && $4 != "--output" && $4 != "--quiet" && $4 != "--verbose" { print $4 }' \
	"$tmp/spec" >"$tmp/guardopts"
while read -r c; do
	"$SB" "$c" --help | sed -n '1,/^$/p' >"$tmp/synopsis"
	grep -q 'GUARD OPTIONS' "$tmp/synopsis" && guard=1 || guard=0
	awk -v c="$c" '$1 == "opt" && $2 == c { print $3, $4 }' "$tmp/spec" >"$tmp/rows"
	while read -r short long; do
		[ "$long" = --help ] && continue
		[ $guard = 1 ] && grep -qx -- "$long" "$tmp/guardopts" && continue
		grep -qE -- "(^|[^a-z-])$long([^a-z-]|\$)" "$tmp/synopsis" && continue
		[ "$short" != - ] && grep -qE -- "(\[|\|)$short([] |]|\$)" "$tmp/synopsis" && continue
		bad "$c: its usage synopsis does not name $long"
	done <"$tmp/rows"
	for o in $(grep -oE -- '--[a-z][a-z0-9-]*' "$tmp/synopsis" | sort -u); do
		awk '{ print $2 }' "$tmp/rows" | grep -qx -- "$o" || bad "$c: its usage synopsis names $o, which it does not have"
	done
done <"$tmp/cmds"

[ $fail = 0 ] && echo "completion: ok"
exit $fail
