# bash completion for stagebench                                      -*- shell-script -*-
#
# Commands, options and option values come from the --help texts of the stagebench being
# completed (so they follow the binary); compare's variant names come from the pipeline file
# given with --pipeline (default: the bundled demo's). After `--`, record and guard complete a
# command and its files.

# _stagebench_help [CMD]: the --help text, remembered per binary and command
_stagebench_help() {
	local key="${1:-_}" var
	var="_stagebench_help_${key//[^a-zA-Z0-9]/_}"
	if [[ -z ${!var-} ]]; then
		printf -v "$var" '%s' "$("$_stagebench_bin" ${1:+"$1"} --help 2>/dev/null)"
	fi
	printf '%s\n' "${!var}"
}

# _stagebench_commands: the commands `stagebench --help` lists
_stagebench_commands() {
	_stagebench_help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }'
}

# _stagebench_options CMD: every long and short option its --help names
_stagebench_options() {
	_stagebench_help "$1" | grep -oE '(^|[ [,])--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^[ [,]//' | sort -u
}

# _stagebench_values CMD OPTION: the choices its usage writes as `OPTION a|b|c`
_stagebench_values() {
	_stagebench_help "$1" | grep -oE -- "$2 [a-z]+(\|[a-z]+)+" | head -n 1 | cut -d' ' -f2 | tr '|' ' '
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

_stagebench() {
	local cur prev cmd i
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
	case $prev in
	--pipeline)
		mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
		return ;;
	-o | --output | --out | --latents | --cache | --baseline)
		if [[ $cmd == latents && $prev == --baseline ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_stagebench_variants "$(_stagebench_pipeline_file)")" -- "$cur")
		elif [[ $cmd == record || $cmd == guard || ($cmd == learn && ($prev == -o || $prev == --output)) ]]; then
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		fi
		return ;;
	--supplement)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	--format | -f)
		mapfile -t COMPREPLY < <(compgen -W "$(_stagebench_values "$cmd" "$prev")" -- "$cur")
		return ;;
	--size)
		mapfile -t COMPREPLY < <(compgen -W "tiny small default large" -- "$cur")
		return ;;
	--mode | --seed | --reps | --set | --interval | --label | --stages | --ram | --title | --note | --max-growth | \
		--max-time-growth | --wait-free | --swap-budget | --swap-limit | --kill-free | --busy | \
		--quiet-for | --start-timeout | --poll | --max-footprint | --max-device | --grace)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_stagebench_options "$cmd")" -- "$cur")
		return
	fi
	case $cmd in
	compare | learn)
		mapfile -t COMPREPLY < <(compgen -W "$(_stagebench_variants "$(_stagebench_pipeline_file)")" -- "$cur") ;;
	check | latents)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	analyze | table | plot)
		mapfile -t COMPREPLY < <(compgen -f -X '!*.jsonl*' -- "$cur"; compgen -d -- "$cur") ;;
	esac
}
complete -F _stagebench -o filenames stagebench
