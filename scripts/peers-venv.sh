#!/bin/sh
# peers-venv.sh -- the other memory tools, measured beside stagebench (bench/peers.py): a
# virtual environment of Debian's python3 (with its site packages: the demo needs torch) with
# scripts/requirements-peers.txt installed (memray, scalene, memory_profiler's mprof; exact
# versions). Not in any test's path.
# Usage: scripts/peers-venv.sh          make it (once; again when the requirements change)
#        scripts/peers-venv.sh --path   print where it is (whether made or not)
# Where: $STAGEBENCH_PEERS_VENV, else $XDG_CACHE_HOME/stagebench/venv-peers, else
# ~/.cache/stagebench/venv-peers. Its .stamp holds the requirements' sha256: with the same
# requirements nothing is done. Built beside it and renamed into place.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
req=$here/requirements-peers.txt
if [ -n "${STAGEBENCH_PEERS_VENV:-}" ]; then
	dir=$STAGEBENCH_PEERS_VENV
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
	dir=$XDG_CACHE_HOME/stagebench/venv-peers
else
	dir=$HOME/.cache/stagebench/venv-peers
fi
if [ "${1:-}" = "--path" ]; then
	echo "$dir"
	exit 0
fi
stamp=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
mkdir -p "$(dirname "$dir")"
tmp=$dir.tmp-$$
trap 'rm -rf "$tmp"' EXIT INT TERM
rm -rf "$tmp"
/usr/bin/python3 -m venv --system-site-packages "$tmp"
"$tmp/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$stamp" >"$tmp/.stamp"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT INT TERM
echo "peers-venv: $dir" >&2
