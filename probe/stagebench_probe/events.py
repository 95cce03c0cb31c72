"""events.py -- write probe events to the recorder's pipe, one JSON line per os.write."""
import json
import math
import os
import sys
import threading
import time


def mono():
    """Seconds on CLOCK_MONOTONIC, the clock the recorder converts to trace time."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def pipe_fd(text):
    """The descriptor STAGEBENCH_FD names when it is a pipe open for writing, else
    None (not a number, closed, a file, a read end)."""
    import fcntl
    import stat
    try:
        fd = int(text, 10)
        if fd < 0:
            return None
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            return None
    except (ValueError, OSError):
        return None
    return fd


# The probe writes through a copy of the pipe at or above this number, where a
# pipeline that closes the descriptors it inherited (3, 4, ...) and opens its own
# files will not put one of them by accident.
HIGH_FD = 1000


def dup_high(fd):
    """A close-on-exec copy of fd at HIGH_FD or above (below it when the limit on
    open files is lower)."""
    import fcntl
    import resource
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    low = HIGH_FD if soft == resource.RLIM_INFINITY or soft > HIGH_FD + 64 else max(3, soft // 2)
    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
    except OSError:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def _ident(fd):
    """(device, inode) of the open descriptor, or None when it is closed."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


_fork_reset = None  # objects whose _lock a forked child gets fresh (a WeakSet)


def fresh_lock_after_fork(obj, factory):
    """Give obj a new lock (factory()) in obj._lock, and a new one again in every
    child forked later: a thread of the parent that held the lock at the fork does
    not exist in the child, which would wait for it forever."""
    global _fork_reset
    import weakref
    if _fork_reset is None:
        _fork_reset = weakref.WeakSet()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_reset_locks)
    obj._lock = factory()
    obj._lock_factory = factory
    _fork_reset.add(obj)


def _reset_locks():
    for obj in list(_fork_reset):
        obj._lock = obj._lock_factory()


def _clean(value):
    # json.dumps would write NaN/Infinity, which is not JSON.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


class Emitter:
    """Writes {"type":"event","kind":K,"mono":...} lines to a file descriptor.

    fd None means off: every call is a no-op. A write error (the recorder went
    away, the descriptor was closed) turns the emitter off with one warning on
    stderr instead of failing the pipeline.
    """

    def __init__(self, fd=None):
        self.fd = fd
        self.ident = None if fd is None else _ident(fd)  # the pipe it must still be
        self.lost = None  # why the pipe went away under the pipeline (it closed or reused it)
        self.pid = os.getpid()  # a forked child's copy writes nothing (see `on`)
        fresh_lock_after_fork(self, threading.Lock)

    @classmethod
    def from_env(cls, environ=None):
        """The emitter of STAGEBENCH_FD: a pipe open for writing, written through a
        close-on-exec duplicate of it at a high number (the pipeline may close or
        hand on the number itself; the variable and the descriptor stay as they
        are), checked to be the same pipe before each write."""
        environ = os.environ if environ is None else environ
        text = environ.get("STAGEBENCH_FD")
        if text is None or text == "":
            return cls(None)
        fd = pipe_fd(text)
        if fd is None:
            # a child interpreter of a probed process that was not handed the pipe
            # (multiprocessing's spawn, close_fds) runs quietly without events
            if not environ.get("STAGEBENCH_PROBE_PID"):
                sys.stderr.write("stagebench_probe: STAGEBENCH_FD=%r is not a pipe open "
                                 "for writing; events are off\n" % text)
            return cls(None)
        return cls(dup_high(fd))

    @property
    def on(self):
        """Events are written: a descriptor, in the process that made the emitter
        (a forked child's inherited probe is off: its parent writes the events)."""
        return self.fd is not None and os.getpid() == self.pid

    def emit(self, kind, **fields):
        """Write one event; returns the dict written (None when off)."""
        if not self.on:
            return None
        event = {"type": "event", "kind": kind}
        event.update(fields)
        event["mono"] = mono()
        line = (json.dumps(_clean(event), separators=(",", ":"), allow_nan=False)
                + "\n").encode("utf-8")
        with self._lock:
            if self.fd is None:
                return None
            if self.ident is not None and _ident(self.fd) != self.ident:
                self._gone()
                return None
            try:
                n = os.write(self.fd, line)
                # A blocking pipe takes the whole line; finish a short write anyway
                # rather than leave half a line behind.
                while n < len(line):
                    line = line[n:]
                    n = os.write(self.fd, line)
            except OSError as e:
                sys.stderr.write("stagebench_probe: cannot write events to fd %d (%s); "
                                 "events are off\n" % (self.fd, e.strerror))
                self.fd = None
                return None
        return event

    def _gone(self):
        """The pipeline closed the probe's copy of the pipe (or put a file of its own
        there): say so loudly; the run fails at exit (events are missing)."""
        self.lost = ("the events pipe (fd %d) was closed or replaced by the pipeline "
                     "(it closed descriptors it did not open?): every later event is "
                     "missing from the trace" % self.fd)
        sys.stderr.write("stagebench_probe: %s\n" % self.lost)
        self.fd = None
