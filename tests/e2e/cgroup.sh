#!/bin/sh
# cgroup.sh -- the run's own memory cgroup against what a command or a killed recorder does to
# it: a tree process that moves itself into another cgroup is still counted and guarded; a
# recorder that was pid 1 of its PID namespace and was killed leaves nothing that stops the
# next one (a container's recorder is pid 1 every time); a command that makes cgroups of its
# own below the run's leaves none behind; a window's kernel peak counts file pages already in
# the page cache (charged to another cgroup); a command that exits at once still ran in the
# run's cgroup. Each against the truth the test reads itself.
# Skips, naming the context, where no memory cgroup can be made (the trace has no cgroup
# mark) unless SB_EXPECT_CGROUP=1, where that fails. Needs SB_BIN; SB_CONTEXT names where it
# runs (make test-vm's context), else the user and its cgroup do.
. "$(dirname "$0")/common.inc"
. "$here/handshake.inc"
export STAGEBENCH_CGROUP=1

# own_cg PID: the directory of PID's memory cgroup (the v1 memory line, else the v2 one)
own_cg() {
	rel=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' "/proc/$1/cgroup")
	if [ -n "$rel" ]; then
		echo "/sys/fs/cgroup/memory$rel"
	else
		echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$1/cgroup")"
	fi
}
context="${SB_CONTEXT:+$SB_CONTEXT: }uid $(id -u) in $(sed -n 's/^0:://p' /proc/self/cgroup)"
# held PREFIX TRACE: a record (PREFIX before the binary: unshare...) of a command that lives
# until the trace has a sample (one that exits at once may end before the meter sees it)
held() {
	rm -f "$tmp/held.go"
	$1 "$SB" record -q -o "$2" -- sh -c "until [ -e '$tmp/held.go' ]; do sleep 0.02; done" &
	_held=$!
	wait_for trace_has "$2" '"type":"sample"'
	: >"$tmp/held.go"
	wait "$_held"
}
held "" "$tmp/probe.zst" 2>/dev/null
if ! zstdcat "$tmp/probe.zst" | grep -q '"note":"meter: cgroup-v'; then
	if [ "${SB_EXPECT_CGROUP:-0}" = 1 ]; then
		echo "FAIL cgroup: no memory cgroup of the run's own ($context), one was expected"
		exit 1
	fi
	echo "  SKIP cgroup.sh: no memory cgroup of the run's own can be made here ($context)"
	exit 0
fi
# hold TRACE READY GO: once the command made READY, four more samples, then GO for it to end
hold() {
	wait_for test -e "$2"
	_n0=$(trace_count "$1" '"type":"sample"')
	wait_for at_least $((_n0 + 4)) trace_count "$1" '"type":"sample"'
	: >"$3"
}
mark=$(zstdcat "$tmp/probe.zst" | grep -o '"note":"meter: [^"]*' | head -1)
echo "  reader: ${mark#*meter: } ($context)"

# 1. A tree process moves itself into another cgroup, then writes 400 MiB: the samples and the
# guard still see it. The other cgroup is one it makes beside the run's own.
cat >"$tmp/mover.py" <<'EOF'
import os, sys, time
go, ready, done = sys.argv[1], sys.argv[2], sys.argv[3]
def own():
    for l in open("/proc/self/cgroup"):
        n, c, p = l.rstrip("\n").split(":", 2)
        if "memory" in c.split(","):
            return "/sys/fs/cgroup/memory" + p, 1
    for l in open("/proc/self/cgroup"):
        if l.startswith("0::"):
            return "/sys/fs/cgroup" + l[3:].rstrip("\n"), 2
d, v = own()
other = os.path.join(os.path.dirname(d), "elsewhere-%d" % os.getpid())
os.mkdir(other)
open(os.path.join(os.path.dirname(ready), "elsewhere"), "a").write(other + "\n")
open(os.path.join(other, "cgroup.procs"), "w").write(str(os.getpid()))
b = bytearray(400 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
open(ready, "w").write(other)
while not os.path.exists(go):
    time.sleep(0.02)
del b
open(done, "w").close()
EOF
"$SB" record -q --interval 50ms -o "$tmp/move.zst" -- \
	"$PY" "$tmp/mover.py" "$tmp/move.go" "$tmp/move.ready" "$tmp/move.done" &
rec=$!
hold "$tmp/move.zst" "$tmp/move.ready" "$tmp/move.go"
wait "$rec"
best=$(zstdcat "$tmp/move.zst" | "$PY" -c '
import json, sys
print(max([json.loads(l).get("footprint", 0) for l in sys.stdin if "\"sample\"" in l] or [0]))')
check "a process that left the run's cgroup is counted: peak sample $best B of 400 MiB" \
	[ "$best" -ge $((380 << 20)) ]
rm -f "$tmp"/move.*
# the guard's run: it ends on its own (stopped) or, unguarded, once it held the 400 MiB for
# four samples
"$SB" record -q --interval 50ms --max-footprint 200M -o "$tmp/guard.zst" -- \
	"$PY" "$tmp/mover.py" "$tmp/move.go" "$tmp/move.ready" "$tmp/move.done" \
	>"$tmp/guard.out" 2>&1 &
rec=$!
held_long() {
	kill -0 "$rec" 2>/dev/null || return 0
	[ -s "$tmp/move.ready" ] || return 1
	[ -n "${n0:-}" ] || n0=$(trace_count "$tmp/guard.zst" '"type":"sample"')
	[ "$(trace_count "$tmp/guard.zst" '"type":"sample"')" -ge $((n0 + 4)) ]
}
n0=
wait_for held_long
: >"$tmp/move.go"
wait "$rec"
rc=$?
# the cgroups the mover made, once it is gone (a scope systemd made for the recorder went
# with them)
while read -r d; do [ ! -d "$d" ] || rmdir "$d"; done <"$tmp/elsewhere"
check "the guard stops a process that left the run's cgroup (exit $rc, $(tail -1 "$tmp/guard.out"))" \
	sh -c '[ "$1" -ne 0 ] && [ ! -e "$2" ]' _ "$rc" "$tmp/move.done"

# 2. A recorder that is pid 1 of its PID namespace, killed: the next pid-1 recorder reads its
# cgroup all the same, and the killed one's cgroup is gone after it.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
	unshare --pid --fork --mount-proc "$SB" record -q -o "$tmp/pid1a.zst" -- sleep 60 2>/dev/null &
	u=$!
	wait_for trace_has "$tmp/pid1a.zst" '"type":"sample"'
	# the killed recorder's cgroup: its command's (beside the recorder's own, or in a scope
	# systemd made for it)
	its=$(own_cg "$(pgrep -P "$(pgrep -P "$u")")" 2>/dev/null)
	case $its in */stagebench-1-*) ;; *) its= ;; esac
	pkill -KILL -P "$u" 2>/dev/null
	wait "$u" 2>/dev/null # unshare says its child was killed
	held "unshare --pid --fork --mount-proc" "$tmp/pid1b.zst"
	check "a pid-1 recorder after a killed one reads its own cgroup" \
		trace_has "$tmp/pid1b.zst" '"note":"meter: cgroup-v'
	check "the killed pid-1 recorder's cgroup is removed by the next (${its:-none found})" \
		sh -c '[ -n "$1" ] && ! ls -d $1 >/dev/null 2>&1' _ "$its"
else
	echo "  SKIP cgroup.sh case 2: unshare --pid cannot be run here ($context)"
fi

# 3. The command makes a cgroup below its own and moves into it: after the run, no cgroup of
# the run's is left.
cat >"$tmp/nest.sh" <<'EOF'
d=$(sed -n 's/^[0-9]*:memory:\(.*\)/\/sys\/fs\/cgroup\/memory\1/p' /proc/self/cgroup)
[ -n "$d" ] || d=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
echo "$d" >"$1"
mkdir "$d/inner" && echo $$ >"$d/inner/cgroup.procs" && mkdir "$d/inner/deeper"
EOF
"$SB" record -q -o "$tmp/nest.zst" -- sh "$tmp/nest.sh" "$tmp/nest.dir"
rundir=$(cat "$tmp/nest.dir")
check "the run's cgroup and the ones its command made are removed ($rundir)" \
	sh -c '[ -n "$1" ] && [ ! -e "$1" ]' _ "$rundir"

# 4. 512 MiB of a file already in the page cache (read by this script first: charged to its
# cgroup), mapped and read by the command for a few samples, then unmapped: the window's
# kernel peak counts them. On a disk's file system: a tmpfs file's pages (/tmp is one on
# Debian 13) are shared memory, charged to the cgroup that wrote them.
disk=$(mktemp -d "${SB_DISK_TMP:-/var/tmp}/stagebench-cgroup.XXXXXX" 2>/dev/null) || disk=$tmp
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp" "$disk"' EXIT
dd if=/dev/urandom of="$disk/cached.bin" bs=1M count=512 status=none
cat "$disk/cached.bin" >/dev/null
cat >"$tmp/mapper.py" <<'EOF'
import mmap, os, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
s = 0
for i in range(0, len(m), 4096):
    s += m[i]
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.02)
m.close()
EOF
"$SB" record -q --interval 50ms -o "$tmp/cached.zst" -- \
	"$PY" "$tmp/mapper.py" "$disk/cached.bin" "$tmp/cached.ready" "$tmp/cached.go" &
rec=$!
hold "$tmp/cached.zst" "$tmp/cached.ready" "$tmp/cached.go"
wait "$rec"
peak=$(zstdcat "$tmp/cached.zst" | grep '"kind":"peak"' | sed 's/.*"bytes":\([0-9]*\).*/\1/' |
	sort -n | tail -1)
check "the kernel peak counts 512 MiB of cached file pages mapped (${peak:-none} B)" \
	[ "${peak:-0}" -ge $((500 << 20)) ]
rm -f "$disk/cached.bin"

# 5. A command that exits before the meter first looks at it (its root is a zombie by then,
# whose /proc/PID/cgroup names the root cgroup) still ran in the run's cgroup: its trace
# names the cgroup reader, as the held probe's does.
"$SB" record -q -o "$tmp/true.zst" -- true
check "a command that exits at once is read from its cgroup" \
	sh -c "zstdcat '$tmp/true.zst' | grep -q '\"note\":\"meter: cgroup-v'"

[ "$fail" = 0 ] && echo "  ok   cgroup.sh ($context)"
exit "$fail"
