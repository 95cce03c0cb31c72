#!/bin/sh
# run.sh -- `make bench`: measure stagebench against its targets and write BENCHMARKS.md
#
# Usage: bench/run.sh [--quick] [ITEM...]     (items 1-8, default all; --quick: fewer repetitions)
# Needs SB_BIN (the stagebench binary) and SB_HELPERS (the built test helpers),
# which `make bench` sets; zstd, gnuplot and python3-mprof on PATH.
# Scratch files go under $BENCH_WORK (default /tmp/stagebench-bench; the demo
# checkpoint cache there is kept between runs); BENCH_KEEP=1 keeps the traces.
set -e
here=$(cd "$(dirname "$0")" && pwd)
case " $* " in *" -h "*|*" --help "*) exec /usr/bin/python3 "$here/bench.py" --help;; esac
: "${SB_BIN:?run through make bench (SB_BIN unset)}"
: "${SB_HELPERS:?run through make bench (SB_HELPERS unset)}"
export SB_BIN SB_HELPERS
exec /usr/bin/python3 "$here/bench.py" "$@"
