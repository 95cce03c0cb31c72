"""plan_match.py -- a plan matched to the script by what it does, not by its path.

A plan names the script it was learned from (SCRIPT, its file relative to its directory) and
the script's own modules and functions by that file's stem ("app:main"). Run under another
name or from another directory, the script is the same when it makes the same models with
the same calls from the same functions: renamed() rewrites the plan's tables to the running
script's name before they are installed, and Plan.match() finds a call site that moved (the
same call from the same function, on another line or in another file) when it is the only
one. A call that makes a planned model nowhere the plan says is made as written; a plan none
of whose models is made is reported (mismatch()) and the run goes on as written, eagerly.
"""
import os
import sys

from . import frames as fr

NOTE_MISMATCH = "plan does not match: "
NOTE_NOT_STAGED = "not staged: "


def running_script():
    """The running script's file, relative to its directory ("app.py"), or None."""
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None) or (sys.argv[0] if sys.argv and sys.argv[0] else "")
    if not f or f.startswith("-") or not f.endswith(".py"):
        return None
    return os.path.basename(f)


def _stem(script):
    return os.path.splitext(script)[0]


def renamed(models, stages, left, script):
    """(models, stages, left) with the names of `script` (the plan's) replaced by the
    running script's, when it runs under another name; the same tables otherwise."""
    now = running_script()
    if not script or not now or now == script:
        return models, stages, left
    old, new = _stem(script), _stem(now)

    def target(t):
        if isinstance(t, str) and t.split(":", 1)[0] == old and ":" in t:
            return new + ":" + t.split(":", 1)[1]
        return t

    def at(a):
        where, sep, fn = a.partition(" in ")
        f, _, line = where.rpartition(":")
        return "%s:%s%s%s" % (now if f == script else f, line, sep, fn)

    models = {n: dict(m, at=at(m["at"]), by=target(m["by"]), **(
        {"class": target(m["class"])} if m.get("class") else {}))
        for n, m in models.items()}
    stages = [dict(s, enter=target(s.get("enter"))) for s in stages]
    left = [dict(x, at=at(x["at"]), by=target(x["by"])) for x in left]
    return models, stages, left


def moved(plan, by, site):
    """The plan's call site (by, file, line) that a call of `by` from `site` (file, line,
    function) stands for when it moved: the only one of `by` from the same function, in
    the same file if there is one, else in any file; None when there is none or several."""
    same_fn = [k for k in plan.sites if k[0] == by and plan._fn(k) == site[2]]
    near = [k for k in same_fn if k[1] == site[0]] or same_fn
    return near[0] if len(near) == 1 else None


def mismatch(plan):
    """A plan none of whose models was made: the reason, or None."""
    if not plan.models or plan.made:
        return None
    m = next(iter(plan.models.values()))
    return ("none of its %d model(s) was made where it says (the first: %s by %s); the "
            "script is not the one it was learned from (%s)"
            % (len(plan.models), m["at"], m["by"].rsplit(":", 1)[-1],
               plan.script or "its script"))


def forced_by(frame):
    """'FUNCTION at FILE:LINE' of the first frame outside the probe from `frame` outward,
    with the script's own call that led there when it is another frame."""
    lib = None
    for f in fr.outward(frame):
        if os.path.dirname(os.path.abspath(f.f_code.co_filename)) == fr._HERE:
            continue
        if lib is None:
            lib = "%s at %s:%d" % (fr.func_id(f), os.path.basename(f.f_code.co_filename),
                                   f.f_lineno)
            if fr.is_user(f.f_code.co_filename):
                return lib
        elif fr.is_user(f.f_code.co_filename):
            return "%s, called from %s:%d in %s" % (lib, fr.rel(f.f_code.co_filename),
                                                    f.f_lineno, fr.qualname(f.f_code))
    return lib or "?"
