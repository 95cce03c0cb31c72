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
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, environ=None):
        environ = os.environ if environ is None else environ
        text = environ.get("STAGEBENCH_FD")
        if text is None or text == "":
            return cls(None)
        try:
            fd = int(text, 10)
            if fd < 0:
                raise ValueError
            os.fstat(fd)
        except (ValueError, OSError):
            sys.stderr.write("stagebench_probe: STAGEBENCH_FD=%r is not an open file "
                             "descriptor; events are off\n" % text)
            return cls(None)
        try:
            # The pipe is for this process; child interpreters must not write to it.
            os.set_inheritable(fd, False)
        except OSError:
            pass
        return cls(fd)

    @property
    def on(self):
        return self.fd is not None

    def emit(self, kind, **fields):
        """Write one event; returns the dict written (None when off)."""
        if self.fd is None:
            return None
        event = {"type": "event", "kind": kind}
        event.update(fields)
        event["mono"] = mono()
        line = (json.dumps(_clean(event), separators=(",", ":"), allow_nan=False)
                + "\n").encode("utf-8")
        with self._lock:
            if self.fd is None:
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
