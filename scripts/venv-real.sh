#!/bin/sh
# venv-real.sh -- the real-library test environment: a virtual environment of Debian's python3
# with scripts/requirements-real.txt installed (torch 2.x from PyPI, diffusers, transformers,
# accelerate, safetensors; exact versions, every wheel's sha256 checked).
# Usage: scripts/venv-real.sh          make it (once; again when the requirements change)
#        scripts/venv-real.sh --path   print where it is (whether made or not)
# Where: $STAGEBENCH_REAL_VENV, else $XDG_CACHE_HOME/stagebench/venv-real, else
# ~/.cache/stagebench/venv-real. It holds the requirements' sha256 in .stamp: with the same
# requirements nothing is done. Built beside it and renamed into place, so an interrupted
# install leaves no half environment. pip's own cache (~/.cache/pip) keeps the wheels (about
# 3 GB, most of it the CUDA libraries torch's Linux wheels depend on; the environment is about
# 6 GB). STAGEBENCH_REAL=0: do nothing (the tests that need it then fail, naming this).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
req=$here/requirements-real.txt
if [ -n "${STAGEBENCH_REAL_VENV:-}" ]; then
	dir=$STAGEBENCH_REAL_VENV
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
	dir=$XDG_CACHE_HOME/stagebench/venv-real
else
	dir=$HOME/.cache/stagebench/venv-real
fi
if [ "${1:-}" = "--path" ]; then
	echo "$dir"
	exit 0
fi
[ "${STAGEBENCH_REAL:-1}" = 0 ] && exit 0
stamp=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
t0=$(date +%s)
echo "venv-real: installing the real-library test environment into $dir (about 3 GB to" \
	"download the first time, 6 GB on disk)" >&2
mkdir -p "$(dirname "$dir")"
tmp=$dir.tmp-$$
trap 'rm -rf "$tmp"' EXIT INT TERM
rm -rf "$tmp"
"$py" -m venv "$tmp"
"$tmp/bin/python" -m pip install -q --disable-pip-version-check --no-input \
	--require-hashes --only-binary=:all: -r "$req"
echo "$stamp" >"$tmp/.stamp"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT INT TERM
echo "venv-real: ready in $(($(date +%s) - t0)) s: $("$dir/bin/python" -c 'import torch, diffusers, transformers; print("torch", torch.__version__, "diffusers", diffusers.__version__, "transformers", transformers.__version__)')" >&2
