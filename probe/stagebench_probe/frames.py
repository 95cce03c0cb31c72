"""frames.py -- what the learner and the plan read off the call stack.

The script's own code ("user code") is every Python file outside the standard library,
site-packages/dist-packages and this package. A call site is the first frame in user code
seen from a call outward; a function is named "module:qualname" ("app:detect" for the main
script's detect(), its module named by the script's file stem).
"""
import os
import sys
import sysconfig

_HERE = os.path.dirname(os.path.abspath(__file__))
_lib = None
_user_cache = {}


def _lib_dirs():
    global _lib
    if _lib is None:
        dirs = {_HERE, os.path.join(os.path.dirname(_HERE), "site")}
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                dirs.add(p)
        for p in sys.path:
            if p and os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages"):
                dirs.add(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix):
            dirs.add(os.path.join(p, "lib"))
        _lib = tuple(sorted({os.path.realpath(d) + os.sep for d in dirs}))
    return _lib


def is_user(filename):
    """True for a file of the script's own code."""
    hit = _user_cache.get(filename)
    if hit is None:
        if not filename or filename.startswith("<"):
            hit = False
        else:
            real = os.path.realpath(filename)
            hit = not any(real.startswith(d) for d in _lib_dirs())
        _user_cache[filename] = hit
    return hit


def qualname(code):
    return getattr(code, "co_qualname", code.co_name)


def module_of(frame):
    """The frame's module name; the main script's file stem for __main__."""
    name = frame.f_globals.get("__name__") or "?"
    if name == "__main__":
        f = frame.f_globals.get("__file__")
        if f:
            return os.path.splitext(os.path.basename(f))[0]
    return name


def func_id(frame):
    return "%s:%s" % (module_of(frame), qualname(frame.f_code))


def base_dir():
    """The directory paths in plans are relative to: the main script's."""
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None) or (sys.argv[0] if sys.argv and sys.argv[0] else "")
    return os.path.dirname(os.path.realpath(f)) if f else os.getcwd()


def rel(filename):
    real = os.path.realpath(filename)
    base = base_dir()
    if real.startswith(base + os.sep):
        return os.path.relpath(real, base)
    return real


def outward(frame):
    """frame, its caller, ... to the outermost."""
    while frame is not None:
        yield frame
        frame = frame.f_back


def site_of(frame):
    """(file relative to the script, line, function) of the first user frame from
    `frame` outward, with the frame just inside it (the call it made), or
    (None, None) when no user code is on the stack."""
    inner = None
    for f in outward(frame):
        if f.f_code.co_filename != __file__ and is_user(f.f_code.co_filename):
            return (rel(f.f_code.co_filename), f.f_lineno, qualname(f.f_code)), inner
        inner = f
    return None, None


def direct_site(frame):
    """(file, line, function) of the caller of the probe's frames from `frame` outward,
    when that caller is the script's own code; else None."""
    for f in outward(frame):
        if os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _HERE:
            continue
        if is_user(f.f_code.co_filename):
            return rel(f.f_code.co_filename), f.f_lineno, qualname(f.f_code)
        return None
    return None


def resolve(target):
    """The object 'module:qual.name' names, or None."""
    mod, _, path = target.partition(":")
    obj = sys.modules.get(mod)
    if obj is None:
        main = sys.modules.get("__main__")
        if main is not None and module_of_globals(main.__dict__) == mod:
            obj = main
    for part in path.split(".") if obj is not None else ():
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def module_of_globals(g):
    name = g.get("__name__") or "?"
    if name == "__main__" and g.get("__file__"):
        return os.path.splitext(os.path.basename(g["__file__"]))[0]
    return name


def codes_of(obj):
    """The code objects behind a function, a method, a classmethod, and the functions
    decorators wrapped (__wrapped__)."""
    out = []
    seen = set()
    while obj is not None and id(obj) not in seen:
        seen.add(id(obj))
        fn = getattr(obj, "__func__", obj)
        code = getattr(fn, "__code__", None)
        if code is not None:
            out.append(code)
        obj = getattr(fn, "__wrapped__", None)
    return out
