# shellcheck shell=sh
# lib-root.sh -- minimal Debian roots for the checks that need a fresh machine
# (scripts/test-fresh.sh, scripts/test-deb.sh). Sourced; needs root, mmdebstrap and unshare.
#
#   root_tarball REL          the cached minbase tarball of Debian REL (12 or 13): built with
#                             mmdebstrap when missing or older than 30 days
#   root_unpack REL DIR       a fresh root from it in DIR
#   in_root DIR REL CWD CMD   CMD (sh -c) in the root, in CWD, as root with a bare environment,
#                             in a private mount namespace (its mounts end with it); the pid
#                             namespace stays the machine's, so orphans go to the real init,
#                             which reaps them (a shell as pid 1 would leave them zombies, and
#                             the suite checks that killed processes are gone); downloaded .debs
#                             are kept in the cache (apt-REL), and pip's wheels (pip, shared by
#                             both releases: the real-library environment of scripts/venv-real.sh)
# Cache: ${XDG_CACHE_HOME:-~/.cache}/stagebench/roots. Mirror: $SB_MIRROR (default
# http://deb.debian.org/debian).
sb_mirror=${SB_MIRROR:-http://deb.debian.org/debian}
sb_roots=${XDG_CACHE_HOME:-$HOME/.cache}/stagebench/roots

root_tarball() {
	case $1 in
	12) suite=bookworm ;;
	13) suite=trixie ;;
	*) echo "lib-root: unknown Debian release '$1'" >&2; return 2 ;;
	esac
	mkdir -p "$sb_roots"
	tb=$sb_roots/debian-$1.tar
	if [ -z "$(find "$tb" -mtime -30 2>/dev/null)" ]; then
		new=$sb_roots/debian-$1.new.tar # mmdebstrap picks the format by the extension
		rm -f "$new"
		mmdebstrap --variant=minbase --mode=root "$suite" "$new" "$sb_mirror" || return 1
		mv "$new" "$tb"
	fi
}

root_unpack() {
	mkdir -p "$2" "$sb_roots/apt-$1/partial" "$sb_roots/pip"
	tar --numeric-owner -C "$2" -xf "$sb_roots/debian-$1.tar" || return 1
	cp -L /etc/resolv.conf "$2/etc/resolv.conf" 2>/dev/null || true
	# the host's trusted certificates, for pip in the root (a host behind a TLS-inspecting proxy
	# trusts its CA; the root's own ca-certificates would not): PIP_CERT in in_root
	cp -L /etc/ssl/certs/ca-certificates.crt "$2/etc/stagebench-host-ca.crt" 2>/dev/null || true
}

in_root() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --fork --propagation private /bin/sh -eu -c '
		r=$1 apt=$2 cwd=$3 cmd=$4 pip=$5
		mount -t proc proc "$r/proc"
		mount -t sysfs sysfs "$r/sys"
		mount --rbind /dev "$r/dev"
		mount --bind "$apt" "$r/var/cache/apt/archives"
		mkdir -p "$r/root/.cache/pip"
		mount --bind "$pip" "$r/root/.cache/pip"
		ca=""
		[ -s "$r/etc/stagebench-host-ca.crt" ] && ca=PIP_CERT=/etc/stagebench-host-ca.crt
		exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb $ca \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			/bin/sh -c "cd \"\$0\" && $cmd" "$cwd"' in_root "$1" "$sb_roots/apt-$2" "$3" "$4" "$sb_roots/pip" </dev/null
}
