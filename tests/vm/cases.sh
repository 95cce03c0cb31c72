#!/bin/sh
# cases.sh -- the cases of make test-vm in one context of the guest: tests/vm/run.sh copies
# the host's build and the tests to /opt/sb (the tree's own layout) and runs this once in
# each context. The cases:
#   reader   which reader the trace of a plain 'stagebench record -- true' says ran: its
#            "meter: TOKEN:" mark (cgroup-v1 or cgroup-v2: cgroup; else per-process);
#            it fails when that is not EXPECT
#   sharers  tests/e2e/sharers.sh (SB_EXPECT_CGROUP=1 where EXPECT is cgroup: no cgroup fails),
#            on both readers, or on EXPECT's reader only with SB_VM_ONE_READER=1 (skip:
#            not at all)
#   spikes   tests/e2e/record.sh's first case and its spikes on both readers (SB_RECORD_ONLY)
#   cgroup   tests/e2e/cgroup.sh: the run's cgroup against what a command or a killed
#            recorder does to it (SB_EXPECT_CGROUP as for sharers)
#   compare  stagebench compare eager staged --seed 7 --size $SB_VM_SIZE (default small)
#            --reps REPS (none when REPS is 0); every one of its traces must say EXPECT too
# Usage: cases.sh CONTEXT EXPECT [REPS]   (EXPECT: cgroup or per-process; REPS default 2)
# Each case's output is printed indented, then "vm-result CONTEXT CASE ok|FAIL|SKIP SECONDS
# WORDS"; exit 1 when a case failed.
set -u
ctx=${1:?usage: cases.sh CONTEXT cgroup|per-process}
expect=${2:?usage: cases.sh CONTEXT cgroup|per-process}
sb=/opt/sb
export SB_BIN=$sb/build/stagebench SB_HELPERS=$sb/build/helpers STAGEBENCH_HOME=$sb SB_CONTEXT=$ctx
case $expect in
cgroup) export SB_EXPECT_CGROUP=1 ;;
per-process) export SB_EXPECT_CGROUP=0 ;;
*) echo "cases.sh: EXPECT is cgroup or per-process, not '$expect'" >&2; exit 2 ;;
esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
echo "vm-where $ctx: uid $(id -u), $(cat /proc/self/cgroup), /sys/fs/cgroup $(awk '$2 == "/sys/fs/cgroup" { split($4, o, ","); m = o[1] } END { print m }' /proc/mounts)"

# reader TRACE...: the reader the traces' "meter:" marks name (cgroup, per-process, or mixed)
reader() {
	for t in "$@"; do
		if zstdcat "$t" | grep -q '"kind":"mark".*"note":"meter: cgroup-v'; then
			echo cgroup
		else
			echo per-process
		fi
	done | sort -u | awk '{ r = NR == 1 ? $0 : "mixed" } END { print r }'
}
# result CASE RC SECONDS WORDS: one line of the summary
result() {
	case $2 in
	0) st=ok ;;
	skip) st=SKIP ;;
	*) st=FAIL; fail=1 ;;
	esac
	echo "vm-result $ctx $1 $st $3 $4"
}
# run CASE COMMAND...: COMMAND's output indented; ok by its exit status, SKIP when it says so
run() {
	c=$1
	shift
	t0=$(date +%s)
	{ "$@" >"$T/$c.log" 2>&1; echo $? >"$T/$c.rc"; }
	sed 's/^/    /' "$T/$c.log"
	rc=$(cat "$T/$c.rc")
	w=$(grep -m1 -o 'SKIP.*' "$T/$c.log")
	[ "$rc" = 0 ] && [ -n "$w" ] && rc=skip
	[ "$rc" = 0 ] || [ "$rc" = skip ] || w=$(grep -m1 -o 'FAIL.*' "$T/$c.log")
	result "$c" "$rc" $(($(date +%s) - t0)) "${w:-}"
}

t0=$(date +%s)
"$SB_BIN" record -q -o "$T/reader.zst" -- true 2>"$T/reader.err"
r=$(reader "$T/reader.zst")
sed 's/^/    /' "$T/reader.err"
echo "vm-reader $ctx $r"
rc=0
[ "$r" = "$expect" ] || rc=1
result reader $rc $(($(date +%s) - t0)) "the trace says the $r reader ran; expected: $expect"

if [ "${SB_VM_ONE_READER:-0}" = skip ]; then
	result sharers skip 0 "not run here under --ci (tests/vm/run.sh's table)"
elif [ "${SB_VM_ONE_READER:-0}" = 1 ]; then
	one=1
	[ "$expect" = cgroup ] || one=0
	run sharers env STAGEBENCH_CGROUP=$one sh $sb/tests/e2e/sharers.sh
else
	run sharers sh $sb/tests/e2e/sharers.sh
fi
run spikes env SB_RECORD_ONLY=spikes sh $sb/tests/e2e/record.sh
run cgroup sh $sb/tests/e2e/cgroup.sh

reps=${3:-2}
[ "$reps" = 0 ] && exit $fail
size=${SB_VM_SIZE:-small}
t0=$(date +%s)
"$SB_BIN" compare eager staged --seed 7 --size "$size" --reps "$reps" --out "$T/compare" >"$T/compare.log" 2>&1
e=$?
sed 's/^/    /' "$T/compare.log"
r=$(reader "$T"/compare/*.trace.jsonl.zst)
rc=$e
[ "$r" = "$expect" ] || rc=1
result compare $rc $(($(date +%s) - t0)) "--size $size --reps $reps, exit $e, its traces' reader: $r"
exit $fail
