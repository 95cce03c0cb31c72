"""versions.py -- `versions` events: the versions of Python and of the libraries the run imported.

One event at activation names Python (platform.python_version() and its implementation) and
each watched library already imported; a watched library imported later is named in an event
of its own as soon as its import finished (diffusers, say, imported by the pipeline mid-run);
at exit one more event names any watched library imported where the import hook did not see
it. A library the run never imported is never named, nor one without a `__version__`.

    {"type":"event","kind":"versions","versions":{"python":"3.11.2","implementation":"CPython"},"mono":...}
    {"type":"event","kind":"versions","versions":{"torch":"2.6.0"},"mono":...}
"""
import atexit
import platform
import sys

LIBRARIES = ("torch", "diffusers", "transformers", "accelerate")


def module_version(mod):
    """The module's `__version__` as a string, or None."""
    v = getattr(mod, "__version__", None)
    if v is None:
        return None
    v = str(v)  # torch's is a str subclass (TorchVersion)
    return v or None


class VersionWatch:
    """Names each version once, in `versions` events of the probe."""

    def __init__(self, probe):
        self.probe = probe
        self.named = {}

    def emit(self, versions):
        new = {k: v for k, v in versions.items() if v and k not in self.named}
        if new:
            self.named.update(new)
            self.probe.emit("versions", versions=new)
        return new

    def imported(self, name):
        def named(mod):
            try:
                self.emit({name: module_version(mod)})
            except Exception:  # never fail the pipeline's import
                pass
        return named

    def sweep(self):
        """Name the watched libraries in sys.modules not named yet."""
        return self.emit(loaded())


def loaded():
    """{name: version} of the watched libraries in sys.modules."""
    return {name: module_version(sys.modules[name]) for name in LIBRARIES
            if sys.modules.get(name) is not None}


def watch(probe, finder, at_exit=True):
    """Write the first event now and name each watched library when it is imported.
    `finder` is the probe's import hook (core._finder()): its `pending` callbacks run
    once the module's import finished."""
    w = VersionWatch(probe)
    first = {"python": platform.python_version(),
             "implementation": platform.python_implementation()}
    first.update(loaded())
    w.emit(first)
    for name in LIBRARIES:
        if name not in sys.modules:
            finder.pending.setdefault(name, []).append(w.imported(name))
    if at_exit:
        atexit.register(w.sweep)
    return w
