#!/bin/sh
# deps.sh -- install the Debian packages stagebench needs to build, run and test.
# Usage: scripts/deps.sh [build|run|test|slurm|vm|ci|all]  install what GROUP needs (default: all)
#        scripts/deps.sh --list [GROUP]                 print GROUP's packages, one a line
# Installs only what is missing (`apt-get update` first); needs root, or sudo, when something is.
# test, ci and all also make the real-library test environment (scripts/venv-real.sh: torch 2.x,
# diffusers, transformers from PyPI, pinned with hashes in scripts/requirements-real.txt; once,
# kept in ~/.cache/stagebench/venv-real; STAGEBENCH_REAL=0 skips it). run never touches PyPI.
# A minimal Debian 12 or 13 root with only these packages passes the whole suite: that is what
# scripts/test-fresh.sh (make test-fresh, run by .ci/run) checks.
set -eu

# The table: one package a line, its group, and what for. Asking for a group installs:
#   build  build
#   run    build run                        (the README's first command)
#   test   build run test                   (the README's second command)
#   slurm  build run slurm                  (a local single-node cluster for make test-slurm)
#   vm     build vm                         (make test-vm: a Debian 13 guest under qemu)
#   ci     build run test slurm vm ci       (.ci/run: also the fresh-root and package checks)
#   all    every group
# To add a package, add a line.
table() {
	cat <<'EOF'
make                     build  the Makefile
gcc                      build  cc
libc6-dev                build  the C library headers (gcc only recommends it)
pkg-config               build  the Makefile finds jansson and libzstd with it
libjansson-dev           build  JSON
libzstd-dev              build  compressed traces
libssl-dev               build  SHA-256 of latents (libcrypto)
zstd                     build  zstdcat: reading traces by hand and in tests
git                      run    compare --by-commit reads the pipeline's commit; tests/unit/test_git.c
gnuplot-nox              run    the charts
python3                  run    the probe and the demo pipeline
python3-numpy            run    the demo pipeline
python3-torch            run    the demo pipeline
python3-torchvision      run    pipelines/torchvision (the example of an unmodified script; its e2e test)
libcriterion-dev         test   unit tests
clang                    test   make portability: the POSIX-only build of the portable sources; make fuzz-test: the libFuzzer harnesses
libclang-rt-dev          test   make fuzz-test: libFuzzer and the sanitizer runtimes for clang (a fresh root lacks them)
python3-venv             test   scripts/venv-real.sh: the real-library test environment (python3 -m venv)
python3-pytest           test   tests/python
python3-memory-profiler  test   tests/python: a peer measured against the recorder
man-db                   test   tests/e2e/man.sh: man -l renders each page
zsh                      test   tests/e2e/completion.sh: the zsh completion
ruby                     test   tests/e2e/formula.sh: ruby -c on the Homebrew formula
tmux                     test   tests/e2e/status.sh: the live status line in a real terminal
chromium                 test   tests/e2e/browser.sh: report.html rendered headless, offline
slurmctld                slurm  make test-slurm: the controller
slurmd                   slurm  make test-slurm: the node
slurm-client             slurm  make test-slurm: sbatch, squeue
munge                    slurm  make test-slurm: slurm's authentication
iproute2                 slurm  make test-slurm: ip, the network namespaces, veth pairs and bridge of the nodes
qemu-system-x86          vm     make test-vm: the Debian 13 guest (qemu-system-x86_64, TCG)
qemu-utils               vm     make test-vm: qemu-img, the guest's overlay on its image
openssh-client           vm     make test-vm: ssh into the guest, ssh-keygen for its key
e2fsprogs                vm     make test-vm: mke2fs -d, the guest's image from its root
mmdebstrap               vm     make test-vm's guest image; scripts/test-fresh.sh, test-deb.sh: minimal Debian roots
dpkg-dev                 ci     scripts/test-deb.sh: dpkg-buildpackage
debhelper                ci     scripts/test-deb.sh: debian/rules
dh-python                ci     scripts/test-deb.sh: debian/rules byte-compiles the probe
lintian                  ci     scripts/test-deb.sh
EOF
}

# packages GROUP: the packages GROUP needs, one a line
packages() {
	case $1 in
	build) levels="build" ;;
	run) levels="build run" ;;
	test) levels="build run test" ;;
	slurm) levels="build run slurm" ;;
	vm) levels="build vm" ;;
	ci | all) levels="build run test slurm vm ci" ;;
	*) echo "usage: $0 [build|run|test|slurm|vm|ci|all] | --list [GROUP]" >&2; exit 2 ;;
	esac
	table | while read -r pkg group _; do
		case " $levels " in *" $group "*) echo "$pkg" ;; esac
	done
}

if [ "${1:-}" = "--list" ]; then
	packages "${2:-all}"
	exit 0
fi
want=$(packages "${1:-all}")
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing" >&2
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q
	# shellcheck disable=SC2086
	$sudo apt-get install -y -q --no-install-recommends $missing
fi
case ${1:-all} in
test | ci | all) "$(dirname "$0")/venv-real.sh" ;;
esac
