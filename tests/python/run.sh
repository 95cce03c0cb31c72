#!/bin/sh
# run.sh -- pytest of the probe, the adapters and the pipelines (this directory) against a
# plain build of stagebench: PY_SB_BIN (default: ./stagebench at the repository's root), with
# PYTHON (default /usr/bin/python3). make py-test runs it; make test runs it beside the
# end-to-end scripts (tests/e2e/run.sh).
set -eu
cd "$(dirname "$0")"
SB_BIN=${PY_SB_BIN:-$(cd ../.. && pwd)/stagebench} exec "${PYTHON:-/usr/bin/python3}" -m pytest -q -p no:cacheprovider .
