#!/bin/sh
# deps.sh -- install the Debian packages stagebench needs to build, test and run.
# Usage: scripts/deps.sh [build|run|test|slurm|all]   (default: all; slurm: a local
# single-node cluster for make test-slurm)
# Installs only what is missing; needs root (or sudo) when something is.
set -eu
build="make gcc pkg-config libjansson-dev libzstd-dev zstd"
run="gnuplot-nox python3 python3-numpy python3-torch"
slurm="slurmctld slurmd slurm-client munge"
test="libcriterion-dev python3-pytest python3-memory-profiler clang"
case "${1:-all}" in
build) want="$build" ;;
run) want="$build $run" ;;
test) want="$build $run $test" ;;
slurm) want="$build $run $slurm" ;;
all) want="$build $run $test $slurm" ;;
*) echo "usage: $0 [build|run|test|slurm|all]" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $missing
