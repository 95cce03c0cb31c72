#!/bin/sh
# pin-real.sh -- write scripts/requirements-real.txt: the real-library test environment
# (torch, diffusers, transformers, accelerate, safetensors and everything they pull in) pinned to
# exact versions with the sha256 of every wheel pip may pick on Linux x86_64 for CPython 3.11
# (Debian 12) and 3.13 (Debian 13).
# Usage: scripts/pin-real.sh [PYTHON]   PYTHON (default python3) has pip; needs the network.
# Edit TOP to move a version, run this, commit the result; scripts/venv-real.sh installs it.
set -eu
cd "$(dirname "$0")/.."
py=${1:-python3}
TOP="torch==2.15.0 torchvision==0.29.2 diffusers==0.42.1 transformers==5.24.0 accelerate==1.15.0 safetensors==0.8.0"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the full set, resolved once for this interpreter
"$py" -m pip download -q -d "$tmp/resolve" $TOP
ls "$tmp/resolve" | sed -n 's/^\([^-]*\)-\([^-]*\)-.*/\1==\2/p; s/^\([^-]*\)-\([^-]*\)\.tar\.gz$/\1==\2/p' |
	sort -u >"$tmp/pins"
plat=""
for g in $(seq 5 28); do plat="$plat --platform manylinux_2_${g}_x86_64"; done
for t in manylinux2014 manylinux2010 manylinux1 linux; do plat="$plat --platform ${t}_x86_64"; done
for v in 3.11 3.13; do
	# shellcheck disable=SC2086
	"$py" -m pip download -q --no-deps --only-binary=:all: --python-version "$v" $plat \
		-d "$tmp/$v" -r "$tmp/pins"
done
{
	echo "# requirements-real.txt -- written by scripts/pin-real.sh; installed by scripts/venv-real.sh"
	echo "# (pip install --require-hashes). CPython 3.11 and 3.13 on Linux x86_64."
	while read -r pin; do
		name=${pin%%==*}
		printf '%s' "$pin"
		for f in "$tmp"/3.11/* "$tmp"/3.13/*; do
			b=$(basename "$f")
			n=$(echo "${b%%-*}" | tr 'A-Z-' 'a-z_')
			[ "$n" = "$(echo "$name" | tr 'A-Z-' 'a-z_')" ] || continue
			sha256sum "$f" | cut -d' ' -f1
		done | sort -u | while read -r h; do printf ' \\\n    --hash=sha256:%s' "$h"; done
		echo
	done <"$tmp/pins"
} >scripts/requirements-real.txt
echo "wrote scripts/requirements-real.txt ($(wc -l <"$tmp/pins") packages)"
