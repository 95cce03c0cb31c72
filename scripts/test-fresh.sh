#!/bin/sh
# test-fresh.sh -- the README's two commands on fresh Debian machines.
#
# Usage: scripts/test-fresh.sh [-v] [--keep] [--release 12|13]... [--step NAME]...
#
# For each release (default: 12 and 13) it unpacks a minimal Debian root (mmdebstrap
# --variant=minbase: only Essential packages and apt; built once, cached as a tarball under
# ${XDG_CACHE_HOME:-~/.cache}/stagebench/roots), clones this repository's HEAD into
# /root/stagebench with the host's git (the root has no git until deps.sh installs it), and
# runs inside it, as root, with a bare environment:
#   run    the README's first command, exactly as the README writes it
#   test   the README's second command, exactly as the README writes it
#   small  ./stagebench compare eager staged --seed 7 --size small   (Debian 13 only: torch 2.6)
# Any package the build, the main job or the suite needs and deps.sh does not install fails
# here. Downloaded .deb files are kept in the cache (roots/apt-REL) so reruns do not fetch them
# again; nothing installed is kept. Needs root, mmdebstrap, unshare, and the Debian mirror
# ($SB_MIRROR, default http://deb.debian.org/debian). Each step's output goes to a log in
# $SB_FRESH_LOGS (default: a fresh directory under /tmp); -v streams it as well.
# Ends with "fresh: N passed, N failed"; exit 0 when every step passed, 1 otherwise, 2 usage.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib-root.sh
. "$here/lib-root.sh"
verbose=0 keep=0 releases="" steps=""
usage() { echo "usage: $0 [-v] [--keep] [--release 12|13]... [--step run|test|small]..." >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	-v) verbose=1 ;;
	--keep) keep=1 ;;
	--release) [ $# -ge 2 ] || usage; releases="$releases $2"; shift ;;
	--step) [ $# -ge 2 ] || usage; steps="$steps $2"; shift ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
	shift
done
releases=${releases:-12 13}
steps=${steps:-run test small}
for r in $releases; do case $r in 12 | 13) ;; *) usage ;; esac; done
for s in $steps; do case $s in run | test | small) ;; *) usage ;; esac; done
[ "$(id -u)" = 0 ] || { echo "test-fresh: needs root (it builds and enters chroots)" >&2; exit 2; }
for t in mmdebstrap unshare git; do
	command -v "$t" >/dev/null || { echo "test-fresh: $t not found: run 'scripts/deps.sh ci'" >&2; exit 2; }
done

# The README's commands: the non-comment lines of the sh block under "## The two commands".
readme_cmd() { # readme_cmd N: the Nth command
	awk '/^## The two commands/ { s = 1; next } s && /^## / { exit }
	     s && /^```sh/ { b = 1; next } b && /^```/ { b = 0; next }
	     b && !/^#/ && NF { print }' "$repo/README.md" | sed -n "${1}p"
}
cmd_run=$(readme_cmd 1)
cmd_test=$(readme_cmd 2)
if [ -z "$cmd_run" ] || [ -z "$cmd_test" ]; then
	echo "test-fresh: README.md has no two commands under '## The two commands'" >&2
	exit 2
fi
cmd_small="./stagebench compare eager staged --seed 7 --size small"

head=$(git -C "$repo" rev-parse HEAD)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
	echo "test-fresh: note: uncommitted changes are not tested (the roots get commit ${head%"${head#???????????}"})"
logs=${SB_FRESH_LOGS:-$(mktemp -d /tmp/stagebench-fresh-logs.XXXXXX)}
mkdir -p "$logs"
work=$(mktemp -d /var/tmp/stagebench-fresh.XXXXXX)
cleanup() { if [ $keep = 1 ]; then say "roots kept in $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
passed=0 failed=0

say() { echo "test-fresh: $*"; }
now() { date +%s; }

# step LOG COMMAND...: run it, its output to LOG (and the terminal with -v), the tail on failure
step() {
	log=$1
	shift
	if [ $verbose = 1 ]; then
		{ "$@" 2>&1; echo $? >"$log.rc"; } | tee "$log"
	else
		{ "$@" >"$log" 2>&1; echo $? >"$log.rc"; }
	fi
	rc=$(cat "$log.rc")
	rm -f "$log.rc"
	[ "$rc" = 0 ] && return 0
	[ $verbose = 1 ] || { echo "---- last lines of $log"; tail -n 40 "$log"; echo "----"; }
	return "$rc"
}

# fresh REL: one release, every step
fresh() {
	rel=$1
	t0=$(now)
	if ! step "$logs/debian-$rel-root.log" root_tarball "$rel"; then
		say "debian $rel: FAIL building the root (mmdebstrap)"
		failed=$((failed + 1))
		return
	fi
	root=$work/debian-$rel
	root_unpack "$rel" "$root"
	git clone -q "$repo" "$root/root/stagebench"
	git -C "$root/root/stagebench" checkout -q --detach "$head"
	say "debian $rel: root ready in $(($(now) - t0)) s ($(grep -h ^VERSION= "$root/etc/os-release" | cut -d'"' -f2))"
	for s in $steps; do
		case $s in
		run) c=$cmd_run ;;
		test) c=$cmd_test ;;
		small) [ "$rel" = 13 ] || continue; c=$cmd_small ;;
		esac
		t=$(now)
		if step "$logs/debian-$rel-$s.log" in_root "$root" "$rel" /root/stagebench "$c"; then
			say "debian $rel: ok   $s ($(($(now) - t)) s): $c"
			passed=$((passed + 1))
		else
			say "debian $rel: FAIL $s ($(($(now) - t)) s): $c   (log: $logs/debian-$rel-$s.log)"
			failed=$((failed + 1))
		fi
	done
	# shellcheck disable=SC2016 # a dpkg-query format
	torch=$(chroot "$root" /usr/bin/dpkg-query -W -f='${Version}' python3-torch 2>/dev/null || echo none)
	say "debian $rel: done in $(($(now) - t0)) s (python3-torch $torch)"
	[ $keep = 1 ] || rm -rf "$root"
}

for rel in $releases; do
	fresh "$rel"
done
say "logs in $logs"
echo "fresh: $passed passed, $failed failed"
[ $failed = 0 ]
