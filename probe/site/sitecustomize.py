"""sitecustomize.py -- activates stagebench_probe in a pipeline without editing it.

The runner puts probe/site and probe/ on PYTHONPATH. When STAGEBENCH_FD or
STAGEBENCH_ADAPTER is set, the probe is imported and the adapter installed;
otherwise, and in a child interpreter of a probed process (STAGEBENCH_PROBE_PID
set, no adapter of its own), nothing of stagebench is imported. The sitecustomize this file
shadows (Debian's, a virtualenv's) still runs first.
"""
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    paths = [p for p in sys.path
             if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None or spec.origin == os.path.abspath(__file__):
        return
    import importlib.util
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # as site.py does: report and go on
        sys.stderr.write("Error in sitecustomize %s: %s: %s\n"
                         % (spec.origin, type(e).__name__, e))


def _activate():
    if not (os.environ.get("STAGEBENCH_FD") or os.environ.get("STAGEBENCH_ADAPTER")):
        return
    if os.environ.get("STAGEBENCH_PROBE_PID") and not os.environ.get("STAGEBENCH_ADAPTER"):
        return  # a child of a probed process: the probe there checks the run
    adapter = os.environ.get("STAGEBENCH_ADAPTER", "-")
    try:
        import stagebench_probe
        stagebench_probe.activate()
    except Exception:
        # A run whose staged loading silently failed would be measured as the
        # wrong variant: stop it with the tool's runtime-failure code.
        import traceback
        traceback.print_exc()
        sys.stderr.write("stagebench_probe: cannot activate the probe (adapter %s); "
                         "stopping\n" % adapter)
        sys.stderr.flush()
        os._exit(3)


_chain()
_activate()
