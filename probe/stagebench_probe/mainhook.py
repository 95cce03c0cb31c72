"""mainhook.py -- patch the main module of `python3 app.py` or `python3 -m app` while it runs.

A script run as a file (or with -m) is never imported: its code runs in
__main__'s namespace, so an import hook never sees it. The watch installed here
is a trace function (sys.settrace) that waits for the main module's code to
start, checks that it is the target (by its file or its module name), then
follows that frame's lines and calls the callbacks just before the line of the
`if __name__ == "__main__":` test (every def above it has run, nothing below it
has), or as soon as the names a callback needs are all defined. The trace
function is removed as soon as the main module is known not to be a target or
every callback has run, so the pipeline itself runs untraced.
"""
import dis
import os
import sys


def is_path(target):
    return target.endswith(".py") or "/" in target or os.sep in target


def _main_names(g):
    """The names the running main module answers to: its file's real path, its
    module name under -m (and the package for pkg.__main__), its file's stem."""
    names = set()
    f = g.get("__file__")
    if f:
        names.add(os.path.realpath(f))
        names.add(os.path.splitext(os.path.basename(f))[0])
    spec = g.get("__spec__")
    sname = getattr(spec, "name", None)
    if sname:
        names.add(sname)
        if sname.endswith(".__main__"):
            names.add(sname[: -len(".__main__")])
    return names


def matches(target, g):
    names = _main_names(g)
    if is_path(target):
        return os.path.realpath(target) in names
    return target in names


def guard_line(code):
    """Line of the first `__name__ == "__main__"` test in module code, or None."""
    ins = list(dis.get_instructions(code))
    starts = list(dis.findlinestarts(code))
    for i, a in enumerate(ins):
        if a.opname not in ("LOAD_NAME", "LOAD_GLOBAL") or a.argval != "__name__":
            continue
        for b in ins[i + 1:i + 3]:
            if b.opname == "LOAD_CONST" and b.argval == "__main__":
                line = None
                for off, ln in starts:
                    if off <= a.offset and ln is not None:
                        line = ln
                return line
    return None


_CO_OPTIMIZED = 0x1


class MainWatch:
    """Callbacks waiting for the main module: (target, callback, needs)."""

    def __init__(self):
        self.waiting = []
        self.armed = False
        self._frame = None
        self._guard = None
        self._active = []

    def add(self, target, callback, needs=None):
        self.waiting.append((target, callback, tuple(needs or ())))
        if not self.armed:
            self.armed = True
            sys.settrace(self._global)

    def _disarm(self):
        self.armed = False
        sys.settrace(None)
        if self._frame is not None:
            self._frame.f_trace = None
            self._frame = None

    def _global(self, frame, event, arg):
        if event != "call":
            return None
        if self._frame is not None:
            # No guard line: the module's first call of a function of its own
            # (main() at the bottom of a script) is the last moment to patch.
            code = frame.f_code
            if (self._guard is None and frame.f_back is self._frame
                    and frame.f_globals is self._frame.f_globals
                    and code.co_flags & _CO_OPTIMIZED and not code.co_name.startswith("<")):
                self._fire(lambda needs: True)
                if not self._active:
                    self._disarm()
            return None
        if frame.f_code.co_name != "<module>":
            return None
        main = sys.modules.get("__main__")
        if main is None or frame.f_globals is not main.__dict__:
            return None
        self._active = [w for w in self.waiting if matches(w[0], frame.f_globals)]
        self.waiting = [w for w in self.waiting if w not in self._active]
        if not self._active:
            self._disarm()
            return None
        self._frame = frame
        self._guard = guard_line(frame.f_code)
        return self._local

    def _local(self, frame, event, arg):
        if frame is not self._frame:
            return None
        if event == "line":
            g = frame.f_globals
            at_guard = self._guard is not None and frame.f_lineno == self._guard
            self._fire(lambda needs: at_guard or (needs and all(n in g for n in needs)))
        elif event == "return":
            self._fire(lambda needs: True)  # no guard line: the module's code is done
        if not self._active:
            self._disarm()
            return None
        return self._local

    def _fire(self, ready):
        main = sys.modules["__main__"]
        for w in list(self._active):
            if ready(w[2]):
                self._active.remove(w)
                w[1](main)


_watch = None


def watch_main(target, callback, needs=None):
    """Call callback(main module) when the main module is `target` (a script path
    or a module name), just before its `if __name__ == "__main__":` line."""
    global _watch
    if _watch is None:
        _watch = MainWatch()
    _watch.add(target, callback, needs)
