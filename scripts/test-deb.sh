#!/bin/sh
# test-deb.sh -- the Debian package, built, checked, installed, run and removed.
#
# Usage: scripts/test-deb.sh [-v] [--release 12|13]   (default 12)
#
# 1. `dpkg-buildpackage -us -uc -b` in a clone of this repository's HEAD.
# 2. `lintian --fail-on error` on what it built.
# 3. In a fresh minimal Debian root (scripts/lib-root.sh): `apt-get install ./stagebench_*.deb`,
#    which brings only what the package declares (Depends, and Recommends as apt does by
#    default); then, from /usr/bin, `stagebench --version` (the package's version) and
#    `stagebench compare eager staged --size tiny --seed 7` in an empty directory, and `apt-get remove stagebench`, after which /usr/bin/stagebench is gone.
# Needs root, dpkg-dev, debhelper, lintian, mmdebstrap (scripts/deps.sh ci).
# Ends with "deb: N passed, N failed"; exit 0 when every step passed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib-root.sh
. "$here/lib-root.sh"
verbose=0 rel=12
while [ $# -gt 0 ]; do
	case $1 in
	-v) verbose=1 ;;
	--release) [ $# -ge 2 ] || exit 2; rel=$2; shift ;;
	*) echo "usage: $0 [-v] [--release 12|13]" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "test-deb: needs root" >&2; exit 2; }
for t in dpkg-buildpackage dh lintian mmdebstrap unshare git; do
	command -v "$t" >/dev/null || { echo "test-deb: $t not found: run 'scripts/deps.sh ci'" >&2; exit 2; }
done
work=$(mktemp -d /var/tmp/stagebench-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
passed=0 failed=0
now() { date +%s; }
# run NAME COMMAND...: one step, its output in $work/NAME.log (shown with -v, its tail on failure)
run() {
	name=$1
	shift
	t=$(now)
	if [ $verbose = 1 ]; then
		{ "$@" 2>&1; echo $? >"$work/rc"; } | tee "$work/$name.log"
	else
		{ "$@" >"$work/$name.log" 2>&1; echo $? >"$work/rc"; }
	fi
	if [ "$(cat "$work/rc")" = 0 ]; then
		echo "test-deb: ok   $name ($(($(now) - t)) s)"
		passed=$((passed + 1))
		return 0
	fi
	[ $verbose = 1 ] || tail -n 40 "$work/$name.log"
	echo "test-deb: FAIL $name ($(($(now) - t)) s)"
	failed=$((failed + 1))
	return 1
}
build() {
	git clone -q "$repo" "$work/src/stagebench" &&
		git -C "$work/src/stagebench" checkout -q --detach "$(git -C "$repo" rev-parse HEAD)" &&
		(cd "$work/src/stagebench" && dpkg-buildpackage -us -uc -b)
}
finish() {
	echo "deb: $passed passed, $failed failed"
	[ $failed = 0 ]
	exit
}

run build build || finish
for f in "$work"/src/stagebench_*.deb; do deb=$f; done
echo "test-deb: built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
run lintian lintian --fail-on error "$work"/src/stagebench_*.changes || true
grep -E '^[EW]: ' "$work/lintian.log" || true

root=$work/debian-$rel
prepare() { root_tarball "$rel" && root_unpack "$rel" "$root"; }
run root prepare || finish
cp "$deb" "$root/tmp/"
run install in_root "$root" "$rel" /tmp "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$(basename "$deb")" || finish
version=$(dpkg-deb -f "$deb" Version)
run compare in_root "$root" "$rel" /tmp "[ \"\$(command -v stagebench)\" = /usr/bin/stagebench ] &&
	stagebench --version | grep -F 'stagebench $version' && /usr/share/stagebench/bisect-run.sh --help >/dev/null &&
	mkdir -p work && cd work &&
	stagebench compare eager staged --size tiny --seed 7 && ls runs/*/table.md" || true
run remove in_root "$root" "$rel" /tmp "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q stagebench && [ ! -e /usr/bin/stagebench ] && [ ! -e /usr/share/stagebench ]" || true
finish
