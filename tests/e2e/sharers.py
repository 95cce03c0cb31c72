"""sharers.py -- workloads of tests/e2e/sharers.sh: process trees that share pages, each
computing the truth it is compared with (the sum of smaps_rollup Pss_Anon + Pss_Shmem over
its live processes) at the points the test checks.

Usage: python3 sharers.py MODE DIR [ARGS]
  shm KIND      a 256 MiB region shared through KIND (anon: MAP_SHARED anonymous memory,
                devshm: a /dev/shm file, memfd: a memfd), left untouched; 4 forked workers;
                stage "forked"; once DIR/write exists every worker writes all of the region;
                then DIR/truth, mark "written"; held until DIR/end exists
  idle N        a 1 GiB parent, stage "forked", N forked workers that write nothing; DIR/truth,
                mark "held"; held until DIR/end exists
  churn N       a 1 GiB parent, stage "churn": N forked workers, 4 alive at a time, each
                living 20 ms and writing nothing; stage "after"; DIR/truth holds the least
                and the largest true total in the churn: the parent's truth alone (read
                before, no worker alive) and the larger of that and the one read after,
                plus 4 times the most private memory (Private_Clean + Private_Dirty) a
                worker reported at its end (a reading can find fewer: an exited worker's
                pages stay mapped while a reader of its /proc files holds its mm)
  exec N        a 1 GiB parent, stage "exec": N fork + exec of /bin/true, one at a time
                (each reports its private memory before its exec); DIR/truth as for churn
Events go to the recorder through the probe (PYTHONPATH holds probe/). DIR/truth: "LOW HIGH"
in bytes, written atomically.
"""
import mmap
import os
import sys
import time

from stagebench_probe.events import Emitter

MiB = 1 << 20
EM = Emitter.from_env()


def pss(pid):
    """Pss_Anon + Pss_Shmem of pid in bytes; 0 once it has no memory left."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            text = f.read()
    except OSError:
        return 0
    total = 0
    for line in text.splitlines():
        if line.startswith(("Pss_Anon:", "Pss_Shmem:")):
            total += int(line.split()[1]) * 1024
    return total


def truth(pids):
    return sum(pss(p) for p in [os.getpid()] + list(pids))


def put_truth(d, low, high):
    with open(os.path.join(d, "truth.tmp"), "w") as f:
        f.write("%d %d\n" % (low, high))
    os.rename(os.path.join(d, "truth.tmp"), os.path.join(d, "truth"))


def wait_file(path):
    while not os.path.exists(path):
        time.sleep(0.002)


def held(size):
    buf = bytearray(size)
    for i in range(0, size, 4096):
        buf[i] = 1
    return buf


def region(kind, size):
    if kind == "anon":
        return mmap.mmap(-1, size, flags=mmap.MAP_SHARED)
    if kind == "devshm":
        path = "/dev/shm/sharers-%d" % os.getpid()
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)  # the mapping keeps it
    elif kind == "memfd":
        fd = os.memfd_create("sharers")
    else:
        sys.exit("sharers.py: unknown kind %r (anon, devshm, memfd)" % kind)
    os.ftruncate(fd, size)
    m = mmap.mmap(fd, size, flags=mmap.MAP_SHARED)
    os.close(fd)
    return m


def fork(child):
    pid = os.fork()
    if pid == 0:
        try:
            child()
        finally:
            os._exit(0)
    return pid


def shm(d, kind):
    size = 256 * MiB
    m = region(kind, size)
    r, w = os.pipe()

    def worker():
        wait_file(os.path.join(d, "write"))
        for i in range(0, size, 4096):
            m[i] = 1
        os.write(w, b"x")
        wait_file(os.path.join(d, "end"))

    pids = [fork(worker) for _ in range(4)]
    EM.emit("stage", stage="forked")
    for _ in pids:
        os.read(r, 1)
    t = truth(pids)
    put_truth(d, t, t)
    EM.emit("mark", note="written")
    for p in pids:
        os.waitpid(p, 0)


def idle(d, n):
    buf = held(1024 * MiB)
    EM.emit("stage", stage="forked")
    pids = [fork(lambda: wait_file(os.path.join(d, "end"))) for _ in range(n)]
    t = truth(pids)
    put_truth(d, t, t)
    EM.emit("mark", note="held")
    for p in pids:
        os.waitpid(p, 0)
    return buf


def private(pid):
    """Private_Clean + Private_Dirty of pid in bytes (what it holds that no other maps)."""
    with open("/proc/%d/smaps_rollup" % pid) as f:
        return sum(int(l.split()[1]) * 1024 for l in f
                   if l.startswith(("Private_Clean:", "Private_Dirty:")))


def churn(d, n, spawn):
    """Truths read while workers come and go would race their exits: the parent's alone
    is read with none alive, and each worker reports its own private memory (a pipe
    write of 8 bytes or less is atomic)."""
    buf = held(1024 * MiB)
    before = truth([])
    r, w = os.pipe()
    EM.emit("stage", stage=spawn.__name__)
    live = []
    for _ in range(n):
        if len(live) >= spawn.alive:
            os.waitpid(live.pop(0), 0)
        live.append(spawn(w))
    for p in live:
        os.waitpid(p, 0)
    os.close(w)
    most = 0
    while True:
        b = os.read(r, 8)
        if not b:
            break
        most = max(most, int(b) * 1024)
    after = truth([])
    put_truth(d, before, max(before, after) + spawn.alive * most)
    EM.emit("stage", stage="after")
    return buf


def main():
    mode, d = sys.argv[1], sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else ""
    if mode == "shm":
        shm(d, arg)
    elif mode == "idle":
        idle(d, int(arg))
    elif mode in ("churn", "exec"):
        def report(w):
            os.write(w, b"%7d\n" % (private(os.getpid()) >> 10))

        def churn_one(w):
            def work():
                time.sleep(0.02)
                report(w)
            return fork(work)
        churn_one.__name__, churn_one.alive = "churn", 4

        def exec_one(w):
            pid = os.fork()
            if pid == 0:
                report(w)
                os.execv("/bin/true", ["true"])
            return pid
        exec_one.__name__, exec_one.alive = "exec", 1
        churn(d, int(arg), churn_one if mode == "churn" else exec_one)
    else:
        sys.exit("sharers.py: unknown mode %r (shm, idle, churn, exec)" % mode)


if __name__ == "__main__":
    main()
