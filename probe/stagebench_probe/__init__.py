"""stagebench_probe -- the in-process side of stagebench: staged loading and events.

Activated by sitecustomize (probe/site) when STAGEBENCH_FD or STAGEBENCH_ADAPTER
is set (STAGEBENCH_LEARN=FILE without an adapter: learn a staging plan, learn.py), in the process the recorder started (not in its children: STAGEBENCH_PROBE_PID);
see probe/README.md for the protocol. Public names:
  Probe, LazyModel            the registry, stage hooks, fingerprints and events
  release(), module_nbytes()  free a module's weights (meta device)
  StageReleasedError          raised when a released module is called
  preserved_rng               save/restore every generator around a block
  get_probe(), activate()     the process's probe (from the environment)
"""
import importlib
import importlib.util
import os
import sys

from .core import LazyModel, Probe
from .children import hand_on_pipe
from .events import Emitter, mono, pipe_fd
from .release import StageReleasedError, flush_allocators, is_released, module_nbytes, release
from .defer import DeferredValue
from .rng import RngState, preserved_rng
from . import versions as _versions
from .core import _finder, exit_now

__all__ = ["Probe", "LazyModel", "Emitter", "mono", "StageReleasedError", "release",
           "module_nbytes", "flush_allocators", "is_released", "RngState", "preserved_rng",
           "get_probe", "activate", "load_adapter", "DeferredValue"]

_probe = None


def get_probe():
    """The process's probe, made from the environment on first use."""
    global _probe
    if _probe is None:
        _probe = Probe.from_env()
    return _probe


def load_adapter(spec):
    """Import an adapter: a module name ("adapter", as the demo's) or a .py file path."""
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        path = os.path.abspath(spec)
        name = "stagebench_adapter_" + os.path.splitext(os.path.basename(path))[0]
        ispec = importlib.util.spec_from_file_location(name, path)
        if ispec is None:
            raise ImportError("cannot load adapter file %s" % path)
        mod = importlib.util.module_from_spec(ispec)
        sys.modules[name] = mod
        ispec.loader.exec_module(mod)
        return mod
    return importlib.import_module(spec)


def activate(environ=None):
    """Make the process's probe, install the adapter named by STAGEBENCH_ADAPTER
    (its install(probe) is called) and check at exit that it engaged.
    STAGEBENCH_ADAPTER is removed from os.environ and STAGEBENCH_PROBE_PID set,
    so child interpreters do not activate a probe of their own; STAGEBENCH_FD and
    its pipe stay for children that write events themselves (children.py)."""
    import atexit
    env = os.environ if environ is None else environ
    probe = get_probe()
    adapter = env.pop("STAGEBENCH_ADAPTER", None)
    env["STAGEBENCH_PROBE_PID"] = str(os.getpid())
    fd = pipe_fd(env.get("STAGEBENCH_FD") or "")
    if fd is not None:
        hand_on_pipe(fd)
    probe.mark("probe: mode=%s staged=%s rng_restore=%s adapter=%s rng_replay=%s"
               % (probe.mode or "-", "on" if probe.staged else "off",
                  "on" if probe.rng_restore else "off", adapter or "-",
                  "on" if probe.rng_replay else "off"))
    if probe.events.on:
        _versions.watch(probe, _finder())
    learn = env.get("STAGEBENCH_LEARN")
    if learn and not adapter:
        from . import learn as _learn
        _learn.install(probe, learn)
    if adapter:
        mod = load_adapter(adapter)
        install = getattr(mod, "install", None)
        if not callable(install):
            raise ImportError("adapter %s has no install(probe) function" % adapter)
        probe.adapter = adapter
        install(probe)
    atexit.register(_at_exit, probe)
    sys.excepthook = _excepthook(sys.excepthook)
    return probe


_failed = []  # an uncaught exception ended the pipeline


def _excepthook(orig):
    def hook(*exc):
        _failed.append(exc)
        return orig(*exc)
    return hook


def _at_exit(probe):
    if probe.events.pid != os.getpid():
        return  # a forked child (os.fork, multiprocessing): its parent checks the run
    if probe.stage is not None:
        probe.gpu(probe.stage)
    if probe.events.lost and not _failed:
        sys.stderr.write("stagebench_probe: the run is a failure (exit 3): %s\n"
                         % probe.events.lost)
        exit_now(3)
    if _failed:
        # the pipeline's own failure first; hooks it never reached are not news then
        etype, evalue = _failed[0][0], _failed[0][1]
        text = "the pipeline failed in stage %s: %s: %s" % (
            probe.stage or "-", getattr(etype, "__name__", etype), evalue)
        probe.mark("probe: " + text)
        sys.stderr.write("stagebench_probe: %s\n" % text)
        if probe.stage is not None and (probe._entries or not probe.staged):
            return  # staged loading (or the adapter's stages) engaged before it failed
    problems = probe.problems()
    if not problems:
        return
    what = "staged loading never engaged" if probe.staged else "the adapter's hooks never fired"
    text = "%s (mode %s): %s" % (what, probe.mode or "-", "; ".join(problems))
    probe.mark("probe: failed: " + text)
    sys.stderr.write("stagebench_probe: %s%s\n" % ("before that, " if _failed else "", text))
    if _failed:
        return  # the pipeline failed on its own: its exit status stands
    sys.stderr.write("stagebench_probe: the run is a failure (exit 3): it would be measured "
                     "as the wrong variant\n")
    exit_now(3)
