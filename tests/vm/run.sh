#!/bin/sh
# run.sh -- make test-vm: the cases of tests/vm/cases.sh on a real Debian 13 machine (systemd
# as init, cgroup v2 only) under qemu, in each context of the table below. Builds stagebench
# here (plain make: the host's Debian 12 binary runs on Debian 13), makes the guest's image
# when it is missing or stale (scripts/vm/image.sh, cached), boots it on a fresh overlay
# (scripts/vm/boot.sh), copies the binary, the helpers, the probe, the demo and the tests to
# /opt/sb in it, runs every context, and always shuts it down (scripts/vm/down.sh).
# Ends with a table: each context's expected and actual reader and each case's result; exit 1
# when a case failed. Needs root (the image), qemu-system-x86, qemu-utils, mmdebstrap
# (scripts/deps.sh vm). SB_VM_CONTEXTS="NAME..." runs only those; SB_VM_SIZE the demo's
# size (default small); logs in $SB_VM_LOGS (default a fresh directory under /tmp).
# --ci (make test-vm-ci, what .ci/run runs): the contexts whose CI column is not "-", each
# with that many runs of the main job, and sharers.sh where the table says, on the
# context's own reader only (SB_VM_ONE_READER=1; skip: not run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/vm/lib.sh
. "$root/scripts/vm/lib.sh"

# The contexts: the reader each should get (flip a row to change what it expects), and how
# many runs of each variant its main job (compare eager staged --seed 7 --size small) makes,
# in a whole run and under --ci ("-": the context is not run under --ci), and whether --ci
# runs sharers.sh there ("-": not; the reader, spike and cgroup cases still run: the cgroup
# reader's figures are the kernel's wherever the run's cgroup was had)
# (0: none; fewer than compare's default 2 where the first context has run it in full, to
# keep the run short: each run of the demo takes about 40 s under TCG):
#   cgroup       the whole-tree reader: a memory cgroup of the run's own can be had there
#   per-process  no cgroup can be had there: the per-process reader, and the cgroup cases skip
contexts() {
	cat <<'TABLE'
user-session    cgroup       2  1  sharers  user dev in its ssh login session (session-N.scope, owned by root)
user-scope      cgroup       1  0  -        dev in systemd-run --user --scope (a scope of its own manager)
root-session    cgroup       1  0  -        root in its ssh login session
root-container  per-process  1  1  sharers  root in unshare --cgroup --mount, /sys/fs/cgroup mounted read-only
root-top        cgroup       0  -  -        root moved into the root cgroup, whose children get memory
TABLE
}
# in_context NAME COMMAND: COMMAND in the guest in context NAME
in_context() {
	case $1 in
	user-session) vm_ssh "$vm_user" "$2" ;;
	user-scope) vm_ssh "$vm_user" "systemd-run --user --scope --quiet $2" ;;
	root-session) vm_ssh root "$2" ;;
	root-top) vm_ssh root "echo \$\$ >/sys/fs/cgroup/cgroup.procs && exec $2" ;;
	root-container) vm_ssh root "unshare --cgroup --mount --propagation private sh -c \
		'umount -l /sys/fs/cgroup && mount -t cgroup2 -o ro,nosuid,nodev,noexec cgroup2 /sys/fs/cgroup && exec $2'" ;;
	*) echo "run.sh: no context '$1'" >&2; return 2 ;;
	esac
}

ci=0
case ${1:-} in
--ci) ci=1; export SB_VM_ONE_READER=1 ;;
'') ;;
*) echo "usage: tests/vm/run.sh [--ci]" >&2; exit 2 ;;
esac
logs=${SB_VM_LOGS:-$(mktemp -d /tmp/stagebench-vm-logs.XXXXXX)}
mkdir -p "$logs"
t_all=$(date +%s)
t=$t_all
# lap NAME: how long NAME took (since the last lap)
lap() { echo "  TIME    test-vm: $1 $(($(date +%s) - t)) s"; t=$(date +%s); }

make -C "$root" --no-print-directory -j"$vm_cpus" stagebench helpers >"$logs/build.log" 2>&1 ||
	{ tail -20 "$logs/build.log"; echo "test-vm: FAIL building stagebench here"; exit 1; }
lap "build (here)"
"$root/scripts/vm/image.sh" || { echo "test-vm: FAIL making the guest's image"; exit 1; }
lap image
trap '"$root/scripts/vm/down.sh"' EXIT
trap 'exit 130' INT TERM
"$root/scripts/vm/boot.sh" || { echo "test-vm: FAIL booting the guest"; exit 1; }
lap boot
(cd "$root" && tar -cf - --exclude=__pycache__ build/stagebench build/helpers/eatmem probe demo \
	tests/e2e/sharers.sh tests/e2e/sharers.py tests/e2e/flushed.py tests/e2e/handshake.inc \
	tests/e2e/record.sh tests/e2e/cgroup.sh tests/e2e/common.inc tests/vm/cases.sh) |
	vm_ssh root 'rm -rf /opt/sb && mkdir /opt/sb && tar -C /opt/sb -xf - && chmod -R a+rX /opt/sb' ||
	{ echo "test-vm: FAIL copying the build into the guest"; exit 1; }
lap "copy in"

contexts | while read -r name expect reps ci_reps ci_sharers _; do
	case " ${SB_VM_CONTEXTS:-$name} " in *" $name "*) ;; *) continue ;; esac
	if [ $ci = 1 ]; then
		[ "$ci_reps" = - ] && continue
		reps=$ci_reps
		[ "$ci_sharers" = - ] && export SB_VM_ONE_READER=skip
		[ "$ci_sharers" = - ] || export SB_VM_ONE_READER=1
	fi
	echo "test-vm: context $name (expects the $expect reader)"
	in_context "$name" "env SB_VM_ONE_READER=${SB_VM_ONE_READER:-0} sh /opt/sb/tests/vm/cases.sh $name $expect $reps" </dev/null >"$logs/$name.log" 2>&1
	echo "vm-exit $name $?" >>"$logs/$name.log"
	cat "$logs/$name.log"
	lap "context $name"
done
"$here/summary.sh" "$logs" "$(contexts)"
rc=$?
echo "  TIME    test-vm $(($(date +%s) - t_all)) s (logs: $logs)"
exit $rc
