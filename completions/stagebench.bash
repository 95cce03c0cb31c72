# bash completion for stagebench                                      -*- shell-script -*-
#
# The commands, their options, how each option's value is completed and what the operands are
# come from stagebench's option tables (cli/opt.h): the block between BEGIN and END is the output
# of `stagebench --complete-spec`, written there by `make completions` (scripts/completions.sh);
# tests/e2e/completion.sh fails when it is out of step with the binary. Its lines:
#   cmd NAME SUMMARY
#   opt CMD -X|- --LONG KIND [WORD...]   KIND: flag, text, file, dir, pipeline, trace, variant,
#                                        command, words (one of the WORDs)
#   arg CMD KIND                         the operands (none: there are none)
# Variant names come from the pipeline file given with --pipeline (default: the bundled demo's).
# After `--`, record and guard complete a command and its files.

# BEGIN stagebench --complete-spec (written by make completions)
_stagebench_spec='cmd record record a memory trace of a command
opt record -o --output file
opt record - --mode text
opt record - --interval text
opt record - --label text
opt record - --latents dir
opt record - --no-peak-reset flag
opt record - --pipeline pipeline
opt record - --variant variant
opt record - --set text
opt record - --seed text
opt record - --cache dir
opt record - --adapter file
opt record - --staged flag
opt record -q --quiet flag
opt record -v --verbose flag
opt record -h --help flag
opt record - --wait-free text
opt record - --swap-budget text
opt record - --swap-limit text
opt record - --kill-free text
opt record - --busy text
opt record - --quiet-for text
opt record - --start-timeout text
opt record - --poll text
opt record - --max-footprint text
opt record - --max-device text
opt record - --grace text
arg record command
cmd guard run a command only while the machine has room for it
opt guard -o --output file
opt guard -q --quiet flag
opt guard -v --verbose flag
opt guard -h --help flag
opt guard - --wait-free text
opt guard - --swap-budget text
opt guard - --swap-limit text
opt guard - --kill-free text
opt guard - --busy text
opt guard - --quiet-for text
opt guard - --start-timeout text
opt guard - --poll text
opt guard - --max-footprint text
opt guard - --max-device text
opt guard - --grace text
arg guard command
cmd compare run pipeline variants alternately, guarded and recorded
opt compare - --pipeline pipeline
opt compare - --seed text
opt compare - --reps text
opt compare - --out dir
opt compare - --by-commit flag
opt compare - --set text
opt compare - --size words tiny small default large
opt compare - --cache dir
opt compare - --interval text
opt compare - --prepare text
opt compare - --files file
opt compare - --adapter file
opt compare - --warmup text
opt compare - --cache-state words warm cold as-is
opt compare - --no-prime flag
opt compare - --no-rng-replay flag
opt compare - --no-peak-reset flag
opt compare - --plan flag
opt compare - --task text
opt compare - --merge flag
opt compare -q --quiet flag
opt compare -v --verbose flag
opt compare -h --help flag
opt compare - --wait-free text
opt compare - --swap-budget text
opt compare - --swap-limit text
opt compare - --kill-free text
opt compare - --busy text
opt compare - --quiet-for text
opt compare - --start-timeout text
opt compare - --poll text
opt compare - --max-footprint text
opt compare - --max-device text
opt compare - --grace text
arg compare variant
cmd learn learn a staging plan from one eager run
opt learn - --pipeline pipeline
opt learn -o --output file
opt learn - --force flag
opt learn - --out dir
opt learn - --seed text
opt learn - --set text
opt learn - --size words tiny small default large
opt learn - --cache dir
opt learn - --interval text
opt learn - --prepare text
opt learn - --files file
opt learn -q --quiet flag
opt learn -v --verbose flag
opt learn -h --help flag
opt learn - --wait-free text
opt learn - --swap-budget text
opt learn - --swap-limit text
opt learn - --kill-free text
opt learn - --busy text
opt learn - --quiet-for text
opt learn - --start-timeout text
opt learn - --poll text
opt learn - --max-footprint text
opt learn - --max-device text
opt learn - --grace text
arg learn variant
cmd analyze per-run, per-stage memory figures from traces
opt analyze - --json flag
opt analyze -h --help flag
arg analyze trace
cmd table the per-stage peak table, by mode
opt table - --stages text
opt table - --supplement trace
opt table - --format words md csv json
opt table -h --help flag
arg table trace
cmd latents compare latent copies across runs
opt latents - --baseline variant
opt latents - --format words md json
opt latents -q --quiet flag
opt latents -h --help flag
arg latents dir
cmd plot draw memory charts with gnuplot
opt plot -o --out dir
opt plot -f --format words png svg
opt plot - --ram text
opt plot - --supplement trace
opt plot - --title text
opt plot - --note text
opt plot -h --help flag
arg plot trace
cmd check flag regressions against a baseline run directory
opt check - --baseline dir
opt check - --max-growth text
opt check - --max-time-growth text
opt check - --allow-latent-change flag
opt check - --format words md json junit github
opt check -h --help flag
arg check dir
cmd report report.html of a comparison, again or from traces
opt report -o --out dir
opt report - --no-charts flag
opt report -q --quiet flag
opt report -h --help flag
arg report trace
cmd history stages over commits: a table and charts
opt history - --format words md csv json html
opt history - --order words recorded given
opt history - --plot dir
opt history - --plot-format words png svg
opt history -h --help flag
arg history dir'
# END stagebench --complete-spec

# _stagebench_commands: the commands
_stagebench_commands() {
	local kind name rest
	while read -r kind name rest; do
		[[ $kind == cmd ]] && printf '%s\n' "$name"
	done <<<"$_stagebench_spec"
}

# _stagebench_options CMD: its options, short and long
_stagebench_options() {
	local kind cmd short long rest
	while read -r kind cmd short long rest; do
		[[ $kind == opt && $cmd == "$1" ]] || continue
		[[ $short != - ]] && printf '%s\n' "$short"
		printf '%s\n' "$long"
	done <<<"$_stagebench_spec"
}

# _stagebench_value CMD OPTION: how OPTION's value is completed (KIND [WORD...]); nothing when
# CMD has no such option
_stagebench_value() {
	local kind cmd short long value
	while read -r kind cmd short long value; do
		if [[ $kind == opt && $cmd == "$1" && ($short == "$2" || $long == "$2") ]]; then
			printf '%s\n' "$value"
			return
		fi
	done <<<"$_stagebench_spec"
}

# _stagebench_operands CMD: how its operands are completed
_stagebench_operands() {
	local kind cmd value
	while read -r kind cmd value; do
		if [[ $kind == arg && $cmd == "$1" ]]; then
			printf '%s\n' "$value"
			return
		fi
	done <<<"$_stagebench_spec"
}

# _stagebench_pipeline_file: the --pipeline given on the line, else the bundled demo's
_stagebench_pipeline_file() {
	local i
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		case ${COMP_WORDS[i]} in
		--pipeline) printf '%s\n' "${COMP_WORDS[i + 1]/#\~/$HOME}"; return ;;
		--pipeline=*) local f=${COMP_WORDS[i]#--pipeline=}; printf '%s\n' "${f/#\~/$HOME}"; return ;;
		esac
	done
	local bin dir
	bin=$(command -v "$_stagebench_bin" 2>/dev/null) || return
	bin=$(readlink -f "$bin" 2>/dev/null || printf '%s' "$bin")
	dir=${bin%/*}
	for f in "${STAGEBENCH_HOME:+$STAGEBENCH_HOME/demo/pipeline.json}" \
		"$dir/demo/pipeline.json" "$dir/../demo/pipeline.json" \
		"$dir/../share/stagebench/demo/pipeline.json"; do
		[[ -n $f && -r $f ]] && { printf '%s\n' "$f"; return; }
	done
}

# _stagebench_variants FILE: the names under "variants" in a pipeline file
_stagebench_variants() {
	[[ -r $1 ]] || return
	python3 -c 'import json, sys
for v in json.load(open(sys.argv[1])).get("variants", {}): print(v)' "$1" 2>/dev/null
}

# _stagebench_offer KIND [WORD...]: COMPREPLY for $cur, a value or an operand of that kind
_stagebench_offer() {
	case $1 in
	file) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	pipeline) mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur") ;;
	trace) mapfile -t COMPREPLY < <(compgen -f -X '!*.jsonl*' -- "$cur"; compgen -d -- "$cur") ;;
	variant)
		mapfile -t COMPREPLY < <(compgen -W "$(_stagebench_variants "$(_stagebench_pipeline_file)")" -- "$cur") ;;
	command) mapfile -t COMPREPLY < <(compgen -c -- "$cur") ;;
	words) shift; mapfile -t COMPREPLY < <(compgen -W "$*" -- "$cur") ;;
	esac
}

_stagebench() {
	local cur prev cmd i value
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	_stagebench_bin=${COMP_WORDS[0]}
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "$(_stagebench_commands) --help --version" -- "$cur")
		return
	fi
	cmd=${COMP_WORDS[1]}
	# after `--`: the command that record or guard runs
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i + 1 == COMP_CWORD)); then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
			return
		fi
	done
	value=$(_stagebench_value "$cmd" "$prev")
	if [[ -n $value && $value != flag ]]; then
		# shellcheck disable=SC2086 # KIND and its words
		_stagebench_offer $value
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_stagebench_options "$cmd")" -- "$cur")
		return
	fi
	_stagebench_offer "$(_stagebench_operands "$cmd")"
}
complete -F _stagebench -o filenames stagebench
