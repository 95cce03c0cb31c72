"""core.py -- the probe: events, the lazy stage-aware model registry, stage hooks, fingerprints."""
import functools
import importlib.abc
import importlib.util
import os
import sys
import threading
import time

from . import devmem
from .events import Emitter
from .latents import digest, safe_name, to_numpy
from .release import flush_allocators, module_nbytes, release
from .rng import preserved_rng


class _Entry:
    def __init__(self, name, builder, stages, backbone=None):
        self.name = name
        self.builder = builder
        self.stages = set(stages)
        self.backbone = backbone  # name of the shared backbone, or None
        self.module = None
        self.builds = 0
        self.pinned = False
        self.warned = set()


class LazyModel:
    """Stands in for a registered model: the first attribute access or call
    builds it (through the registry); after a release the next one rebuilds it.
    Methods that return the model itself (.to(), .eval()) return the proxy."""

    __slots__ = ("_sb_probe", "_sb_name")

    def __init__(self, probe, name):
        object.__setattr__(self, "_sb_probe", probe)
        object.__setattr__(self, "_sb_name", name)

    def _sb_module(self):
        return self._sb_probe.get(self._sb_name)

    def __call__(self, *args, **kwargs):
        return self._sb_module()(*args, **kwargs)

    def __getattr__(self, attr):
        module = self._sb_module()
        value = getattr(module, attr)
        if callable(value) and getattr(value, "__self__", None) is module:
            proxy = self

            @functools.wraps(value)
            def method(*args, **kwargs):
                out = value(*args, **kwargs)
                return proxy if out is module else out
            return method
        return value

    def __setattr__(self, attr, value):
        setattr(self._sb_module(), attr, value)

    def __repr__(self):
        return "<LazyModel %s>" % self._sb_name


class Probe:
    """Staged loading plus the events stagebench records.

    Probe.from_env() reads STAGEBENCH_FD, STAGEBENCH_MODE, STAGEBENCH_STAGED,
    STAGEBENCH_RNG_RESTORE, STAGEBENCH_LATENTS and STAGEBENCH_TRACE. Without a
    descriptor every event (and every .npy copy) is skipped; the registry and
    hooks still work, so a pipeline behaves the same with or without stagebench.
    """

    def __init__(self, fd=None, mode=None, staged=False, rng_restore=True,
                 latents_dir=None, trace=None, emitter=None):
        self.events = emitter if emitter is not None else Emitter(fd)
        self.mode = mode
        self.staged = staged
        self.rng_restore = rng_restore
        self.latents_dir = latents_dir
        self.trace = trace
        self.stage = None
        self._entries = {}
        self._latent_files = set()
        self._lock = threading.RLock()

    @classmethod
    def from_env(cls, environ=None):
        env = os.environ if environ is None else environ
        return cls(emitter=Emitter.from_env(env),
                   mode=env.get("STAGEBENCH_MODE") or None,
                   staged=env.get("STAGEBENCH_STAGED", "") not in ("", "0"),
                   rng_restore=env.get("STAGEBENCH_RNG_RESTORE", "1") != "0",
                   latents_dir=env.get("STAGEBENCH_LATENTS") or None,
                   trace=env.get("STAGEBENCH_TRACE") or None)

    # -- events ---------------------------------------------------------------
    def emit(self, kind, **fields):
        return self.events.emit(kind, **fields)

    def mark(self, note):
        return self.emit("mark", note=str(note))

    def gpu(self, stage=None):
        """One gpu event per device in use (none without a device)."""
        stage = self.stage if stage is None else stage
        for device, metric, nbytes, peak in devmem.read():
            fields = {"stage": stage, "device": device, "metric": metric, "bytes": nbytes}
            if peak is not None:
                fields["max_bytes"] = peak
            self.emit("gpu", **fields)

    # -- registry -------------------------------------------------------------
    def register(self, name, builder, stages):
        """Register a model built by builder() and used in `stages`. Nothing is
        built now. Returns a LazyModel proxy."""
        with self._lock:
            if name in self._entries:
                raise ValueError("model '%s' is registered twice" % name)
            self._entries[name] = _Entry(name, builder, _stage_list(stages))
        return LazyModel(self, name)

    def share(self, name, backbone, build=None, stages=None):
        """Register `name` as a model that uses the registered model `backbone`
        (built once for every sharer). build(backbone_module) makes the sharer
        (default: the backbone itself). Its stages default to the backbone's;
        the backbone's stages grow to cover them. Returns a LazyModel."""
        with self._lock:
            if backbone not in self._entries:
                raise KeyError("share: backbone '%s' is not registered" % backbone)
            if name in self._entries:
                raise ValueError("model '%s' is registered twice" % name)
            base = self._entries[backbone]
            st = base.stages if stages is None else _stage_list(stages)
            base.stages |= set(st)
            self._entries[name] = _Entry(name, build or (lambda m: m), st, backbone=backbone)
        return LazyModel(self, name)

    def pin(self, name, pinned=True):
        """Keep a model resident in every stage once built (pinned=False undoes it)."""
        with self._lock:
            e = self._entry(name)
            e.pinned = pinned
            if e.backbone and pinned:
                self._entries[e.backbone].pinned = True

    def proxy(self, name):
        self._entry(name)
        return LazyModel(self, name)

    def resident(self):
        """Names of the models built and not released."""
        return [n for n, e in self._entries.items() if e.module is not None]

    def _entry(self, name):
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError("model '%s' is not registered" % name) from None

    def _listed(self, e, stage):
        return stage is None or e.pinned or stage in e.stages

    def get(self, name):
        """The model, built now when it is not resident (load event, or reload
        when it was built before). A model used in a stage that does not list it
        is built anyway, flagged "outside": true, with a warning on stderr."""
        with self._lock:
            e = self._entry(name)
            stage = self.stage
            outside = not self._listed(e, stage)
            if outside and stage not in e.warned:
                e.warned.add(stage)
                sys.stderr.write("stagebench_probe: %s used in stage '%s', which does not "
                                 "list it (listed: %s)\n"
                                 % (name, stage, ", ".join(sorted(e.stages)) or "none"))
            if e.module is not None:
                return e.module
            base = self.get(e.backbone) if e.backbone else None
            with preserved_rng(self.rng_restore):
                t0 = time.perf_counter()
                module = e.builder(base) if e.backbone else e.builder()
                seconds = time.perf_counter() - t0
            if module is None:
                raise TypeError("the builder of '%s' returned None" % name)
            nbytes = _nbytes(module, base)
            fields = {"name": name, "stage": stage, "nbytes": nbytes,
                      "seconds": round(seconds, 6)}
            if outside:
                fields["outside"] = True
            self.emit("reload" if e.builds else "load", **fields)
            e.module = module
            e.builds += 1
            return module

    def release(self, name):
        """Release one registered model now (release event, stage = current)."""
        with self._lock:
            self._release(self._entry(name), self.stage)

    def _release(self, e, stage):
        if e.module is None:
            return
        base = self._entries[e.backbone].module if e.backbone else None
        if _is_module(e.module):
            nbytes = release(e.module, name=e.name, stage=stage,
                             exclude=[base] if _is_module(base) and base is not e.module else ())
        else:
            nbytes = 0
            flush_allocators()
        e.module = None
        self.emit("release", name=e.name, stage=stage, nbytes=nbytes)

    def enter(self, stage):
        """Enter a stage: gpu event closing the previous stage, stage event, then
        release every resident model the stage does not list (sharers with their
        backbone), reset the device peak, gpu event opening the stage. Entering
        the current stage again does nothing."""
        with self._lock:
            if stage == self.stage:
                return
            prev = self.stage
            if prev is not None:
                self.gpu(prev)
            self.stage = stage
            self.emit("stage", stage=stage)
            going = {n for n, e in self._entries.items()
                     if e.module is not None and not self._listed(e, stage)}
            going |= {n for n, e in self._entries.items()
                      if e.module is not None and e.backbone in going}
            # in registration order, sharers first: they exclude the backbone,
            # which goes after them
            order = [n for n in self._entries if n in going]
            for n in sorted(order, key=lambda n: self._entries[n].backbone is None):
                self._release(self._entries[n], stage)
            devmem.reset_peaks()
            self.gpu(stage)

    # -- hooks ----------------------------------------------------------------
    def on_call(self, target, method, stage, outputs=None):
        """Wrap target.method (target: a class, an instance or a module) so a
        call enters `stage` first. `stage` may be a callable taking the call's
        arguments (self included for a class) and returning the name.
        `outputs` fingerprints the return value: a name ("{stage}" is replaced
        by the stage), a list of names for a tuple result, or a callable
        outputs(result) -> {name: tensor}."""
        raw = target.__dict__.get(method) if isinstance(target, type) else None
        if raw is None:
            raw = getattr(target, method)
        kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
        fn = raw.__func__ if kind else raw
        if getattr(fn, "__stagebench_wrapped__", False):
            return
        probe = self

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            name = stage(*args, **kwargs) if callable(stage) else stage
            probe.enter(name)
            result = fn(*args, **kwargs)
            if outputs is not None and probe.events.on:
                for key, value in _named_outputs(outputs, result, name).items():
                    probe.fingerprint(key, value, stage=name)
            probe.gpu(name)
            return result
        wrapper.__stagebench_wrapped__ = True
        setattr(target, method, kind(wrapper) if kind else wrapper)

    def when_imported(self, module_name, callback):
        """Call callback(module) once the module has been imported (now, if it
        already is). Installs an import hook: the module's file stays as it is."""
        mod = sys.modules.get(module_name)
        if mod is not None:
            callback(mod)
            return
        _finder().pending.setdefault(module_name, []).append(callback)

    # -- fingerprints ---------------------------------------------------------
    def fingerprint(self, name, value, stage=None):
        """sha256 of the array's raw bytes, a .npy copy in STAGEBENCH_LATENTS and
        a latent event. Does nothing (returns None) when events are off."""
        if not self.events.on:
            return None
        arr, dtype = to_numpy(value)
        fields = {"name": name, "stage": self.stage if stage is None else stage,
                  "sha256": digest(arr), "dtype": dtype, "shape": list(arr.shape)}
        if self.latents_dir:
            import numpy
            base = safe_name(name)
            fname = base + ".npy"
            n = 1
            while fname in self._latent_files:
                n += 1
                fname = "%s-%d.npy" % (base, n)
            self._latent_files.add(fname)
            os.makedirs(self.latents_dir, exist_ok=True)
            numpy.save(os.path.join(self.latents_dir, fname), arr)
            fields["file"] = os.path.join(
                os.path.basename(os.path.normpath(self.latents_dir)), fname)
        return self.emit("latent", **fields)


def _named_outputs(outputs, result, stage):
    if callable(outputs):
        return outputs(result) or {}
    if isinstance(outputs, str):
        return {outputs.replace("{stage}", str(stage)): result}
    return {n.replace("{stage}", str(stage)): v for n, v in zip(outputs, result)}


def _stage_list(stages):
    if isinstance(stages, str):
        return [stages]
    return list(stages)


def _is_module(obj):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def _nbytes(module, base):
    if not _is_module(module):
        return 0
    if _is_module(base) and base is not module:
        return module_nbytes(module, exclude=[base])
    return module_nbytes(module)


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, callbacks):
        self._loader = loader
        self._callbacks = callbacks

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        for cb in self._callbacks:
            cb(module)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.pending = {}
        self._busy = set()

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.pending or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, self.pending.pop(fullname))
        return spec


_the_finder = None


def _finder():
    global _the_finder
    if _the_finder is None:
        _the_finder = _Finder()
        sys.meta_path.insert(0, _the_finder)
    return _the_finder
