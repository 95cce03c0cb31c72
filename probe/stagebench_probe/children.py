"""children.py -- the pipeline's child processes and the events pipe (STAGEBENCH_FD).

The variable and the pipe stay set and open for the pipeline and its children, so a
child (a C/C++ program using stagebench_probe.h, a Python script writing its own
lines) writes its events into the same trace. subprocess.Popen closes every
descriptor but 0-2 by default (close_fds=True): in a probed process it passes the
pipe on (pass_fds) to a child whose environment names it, as exec'd children
through os.system or os.posix_spawn get it anyway.
"""
import functools
import os

from .events import _ident


def hand_on_pipe(fd):
    """Wrap subprocess.Popen so children whose environment has STAGEBENCH_FD=fd keep
    the descriptor, while it is still the pipe it is now."""
    import subprocess
    ident = _ident(fd)
    if ident is None:
        return
    orig = subprocess.Popen.__init__
    if getattr(orig, "__stagebench_wrapped__", False):
        return

    @functools.wraps(orig)
    def __init__(self, args, *more, **kwargs):
        # close_fds (more[6]) and env (more[9]) given by keyword or not at all
        if len(more) <= 6 and kwargs.get("close_fds", True):
            env = kwargs.get("env")
            env = os.environ if env is None else env
            try:
                named = env.get("STAGEBENCH_FD") == str(fd)
            except Exception:  # bytes keys, an odd mapping: leave the call alone
                named = False
            if named and _ident(fd) == ident:
                kwargs["pass_fds"] = tuple(kwargs.get("pass_fds") or ()) + (fd,)
        return orig(self, args, *more, **kwargs)
    __init__.__stagebench_wrapped__ = True
    subprocess.Popen.__init__ = __init__
