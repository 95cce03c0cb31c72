"""core.py -- the probe: events, the lazy stage-aware model registry, stage hooks, fingerprints."""
import functools
import importlib.abc
import importlib.util
import inspect
import os
import sys
import threading
import time

from . import devmem
from .defer import RECORDED, Interceptor, resolve
from .events import Emitter, fresh_lock_after_fork
from .latents import digest, safe_name, to_numpy
from .mainhook import is_path, watch_main
from .release import built_nbytes, flush_allocators, is_module, module_nbytes, release
from .rng import preserved_rng


# Hook registrations on a stand-in: recorded (replayed on every build, so a model rebuilt after
# its release has them again) and made at once on a resident model; they return a handle.
HOOKS = frozenset(("register_forward_hook", "register_forward_pre_hook",
                   "register_full_backward_hook", "register_full_backward_pre_hook",
                   "register_backward_hook"))


class _Entry:
    def __init__(self, name, builder, stages, backbone=None, cls=None):
        self.name = name
        self.cls = cls  # the model's class when known before it is built
        self.builder = builder
        self.stages = set(stages)
        self.backbone = backbone  # name of the shared backbone, or None
        self.module = None
        self.builds = 0
        self.pinned = False
        self.warned = set()
        self.recorded = None  # setup calls replayed on every build (deferred models)


class _HookHandle:
    """What a hook registration on a stand-in returns: remove() takes it off the
    recorded calls and off the model it is on now."""

    def __init__(self, entry, record):
        self.entry = entry
        self.record = record

    def remove(self):
        if self.record in self.entry.recorded:
            self.entry.recorded.remove(self.record)
        live = self.record[3]
        if live is not None:
            live.remove()
            self.record[3] = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class LazyModel:
    """Stands in for a registered model: the first attribute access or call
    builds it (through the registry); after a release the next one rebuilds it.
    Methods that return the model itself (.to(), .eval()) return the proxy.
    It is an instance of the model's class for isinstance() once that class is
    known (given at registration, or after the first build); copy, deepcopy,
    pickle and torch.save build the model and act on it, as in eager."""

    __slots__ = ("_sb_probe", "_sb_name")

    def __init__(self, probe, name):
        object.__setattr__(self, "_sb_probe", probe)
        object.__setattr__(self, "_sb_name", name)

    def _sb_module(self):
        return self._sb_probe.get(self._sb_name)

    @property
    def __class__(self):
        e = self._sb_probe._entries.get(self._sb_name)
        if e is not None and e.module is not None:
            return type(e.module)
        if e is not None and e.cls is not None:
            return e.cls
        return type(self)

    def __copy__(self):
        import copy
        return copy.copy(self._sb_module())

    def __deepcopy__(self, memo):
        import copy
        return copy.deepcopy(self._sb_module(), memo)

    def __reduce_ex__(self, protocol):
        return self._sb_module().__reduce_ex__(protocol)

    def __call__(self, *args, **kwargs):
        return self._sb_module()(*args, **kwargs)

    def __getattr__(self, attr):
        entry = self._sb_probe._entries.get(self._sb_name)
        if entry is not None and entry.recorded is not None and (attr in RECORDED
                                                                 or attr in HOOKS):
            return self._sb_recorder(entry, attr)
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

    def _sb_recorder(self, entry, attr):
        """A setup call on a deferred model: recorded and replayed on every
        build; made now too when the model is resident."""
        proxy = self
        if attr in HOOKS:
            def hook(*args, **kwargs):
                record = [attr, args, kwargs, None]
                entry.recorded.append(record)
                if entry.module is not None:
                    record[3] = getattr(entry.module, attr)(*args, **kwargs)
                return _HookHandle(entry, record)
            hook.__name__ = attr
            return hook

        def method(*args, **kwargs):
            entry.recorded.append((attr, args, kwargs))
            if entry.module is not None:
                out = getattr(entry.module, attr)(*resolve(args), **resolve(kwargs))
                return proxy if out is entry.module else out
            if attr == "load_state_dict":
                return _no_key_mismatch()
            return proxy
        method.__name__ = attr
        return method

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
                 latents_dir=None, trace=None, emitter=None, rng_replay=False):
        self.events = emitter if emitter is not None else Emitter(fd)
        self.mode = mode
        self.staged = staged
        self.rng_restore = rng_restore
        self.latents_dir = latents_dir
        self.trace = trace
        self.rng_replay = rng_replay
        self.adapter = None  # the adapter's name once activate() installed one
        self.stage = None
        self._entries = {}
        self._latent_files = set()
        fresh_lock_after_fork(self, threading.RLock)
        self.hooks = {}  # label -> times the hook fired (None: optional)
        self._on_enter = {}  # stage -> [fn(probe)]
        self.interceptors = []
        self.learner = None  # learn.Learner when STAGEBENCH_LEARN names a plan to write
        self.plan = None  # plan.Plan once a plan file is installed

    @classmethod
    def from_env(cls, environ=None):
        env = os.environ if environ is None else environ
        return cls(emitter=Emitter.from_env(env),
                   mode=env.get("STAGEBENCH_MODE") or None,
                   staged=env.get("STAGEBENCH_STAGED", "") not in ("", "0"),
                   rng_restore=env.get("STAGEBENCH_RNG_RESTORE", "1") != "0",
                   rng_replay=env.get("STAGEBENCH_RNG_REPLAY", "") not in ("", "0"),
                   latents_dir=env.get("STAGEBENCH_LATENTS") or None,
                   trace=env.get("STAGEBENCH_TRACE") or None)

    # -- events ---------------------------------------------------------------
    def emit(self, kind, **fields):
        return self.events.emit(kind, **fields)

    def mark(self, note):
        return self.emit("mark", note=str(note))

    def gpu(self, stage=None):
        """One gpu event per device in use (none without a device); starts the
        device sampler (devmem.watch) once a device is in use."""
        stage = self.stage if stage is None else stage
        readings = devmem.read()
        devmem.watch(self.events, readings)  # sampled on the interval once in use
        for device, metric, nbytes, peak in readings:
            fields = {"stage": stage, "device": device, "metric": metric, "bytes": nbytes}
            if peak is not None:
                fields["max_bytes"] = peak
            self.emit("gpu", **fields)

    # -- registry -------------------------------------------------------------
    def register(self, name, builder, stages, record=False, cls=None):
        """Register a model built by builder() and used in `stages`. Nothing is
        built now. Returns a LazyModel proxy. record=True: setup calls on the
        proxy (.eval(), .to(), .load_state_dict(), see defer.RECORDED) are
        recorded and replayed on every build instead of building it."""
        with self._lock:
            if name in self._entries:
                raise ValueError("model '%s' is registered twice" % name)
            e = self._entries[name] = _Entry(name, builder, _stage_list(stages), cls=cls)
            if record:
                e.recorded = []
        return LazyModel(self, name)

    def unique_name(self, name):
        """name, or name-2, name-3 ... when it is registered already."""
        n, k = name, 1
        while n in self._entries:
            k += 1
            n = "%s-%d" % (name, k)
        return n

    def rename(self, model, name, stages=None):
        """Give a registered model (its name or its LazyModel) another name, and
        stages when given (an adapter that names models after the pipeline's own
        keys once its constructor has returned)."""
        old = model._sb_name if isinstance(model, LazyModel) else model
        with self._lock:
            e = self._entry(old)
            if name != old:
                if name in self._entries:
                    raise ValueError("model '%s' is registered twice" % name)
                self._entries = {(name if k == old else k): v
                                 for k, v in self._entries.items()}
                e.name = name
                for other in self._entries.values():
                    if other.backbone == old:
                        other.backbone = name
                if isinstance(model, LazyModel):
                    object.__setattr__(model, "_sb_name", name)
            if stages is not None:
                e.stages = set(_stage_list(stages))
        return LazyModel(self, name)

    def defer(self, target, name=None, stages=None, replay_rng=None, device=None,
              during=("setup",)):
        """Intercept the model-building call `target` ("torchvision.models.resnet50",
        "pkg.mod:Cls.from_pretrained") while the stage is one of `during` (or
        before any stage). Staged: each call returns a LazyModel registered as
        `name` (default the function's name; a callable gets the call's
        arguments) for `stages`, built on first use with the call's own
        arguments (on `device`, when given). replay_rng (default
        STAGEBENCH_RNG_REPLAY): run the call once where it was made and drop the
        result, so the random draws after it are eager's, and build the model
        later from that same generator state. Eager: the call runs as written
        and a load event reports it."""
        return self._intercept(Interceptor(self, target, "model", name=name, stages=stages,
                                           replay_rng=replay_rng, device=device,
                                           during=during))

    def defer_load(self, target, during=("setup",)):
        """Intercept a loader (torch.load): staged, during setup it returns a
        DeferredValue read when a deferred model that received it is built. A
        module that is not deferred reads it in its load_state_dict."""
        self.when_imported("torch", _resolving_load_state_dict, main=False)
        return self._intercept(Interceptor(self, target, "load", during=during))

    def memoize(self, target, during=("setup",)):
        """During setup, calls of `target` with equal arguments return the first
        call's result (one backbone behind several extractors). In every mode
        where the adapter asks for it; the result is the same object."""
        return self._intercept(Interceptor(self, target, "memo", during=during))

    def _intercept(self, icp):
        """Wrap the target when its module is imported (now, when it is already):
        a target that is not there fails the run then, naming it (exit 3)."""
        self.interceptors.append(icp)
        self.when_imported(icp.module_name, icp.install_or_fail, main=False)
        return icp

    def fail(self, text):
        """End the run now as a failure: a `probe: failed: TEXT` mark, TEXT on
        stderr, exit status 3 (what the adapter says cannot be done)."""
        self.mark("probe: failed: " + text)
        sys.stderr.write("stagebench_probe: %s\nstagebench_probe: the run is a failure "
                         "(exit 3)\n" % text)
        exit_now(3)

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
                for rec in e.recorded or ():
                    attr, args, kwargs = rec[0], rec[1], rec[2]
                    if attr in HOOKS:
                        rec[3] = getattr(module, attr)(*args, **kwargs)
                        continue
                    out = getattr(module, attr)(*resolve(args), **resolve(kwargs))
                    if attr != "load_state_dict" and is_module(out):
                        module = out
                seconds = time.perf_counter() - t0
            if module is None:
                raise TypeError("the builder of '%s' returned None" % name)
            nbytes = built_nbytes(module, base)
            fields = {"name": name, "stage": stage, "nbytes": nbytes,
                      "seconds": round(seconds, 6)}
            if outside:
                fields["outside"] = True
            self.emit("reload" if e.builds else "load", **fields)
            e.module = module
            e.cls = type(module)
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
        if is_module(e.module):
            nbytes = release(e.module, name=e.name, stage=stage,
                             exclude=[base] if is_module(base) and base is not e.module else ())
        else:
            nbytes = 0
            flush_allocators()
        e.module = None
        self.emit("release", name=e.name, stage=stage, nbytes=nbytes)

    def release_module(self, module, name, exclude=()):
        """Release a module the registry does not hold (an adapter-level release,
        e.g. a background remover the pipeline built itself): release event
        named `name` in the current stage. A list of modules counts as one."""
        mods = []
        for m in (module if isinstance(module, (list, tuple)) else [module]):
            # a plain object holding its modules (a background remover's .model)
            mods.extend([m] if is_module(m) or m is None else
                        [v for v in vars(m).values() if is_module(v)])
        nbytes = 0
        seen = set()
        for m in mods:
            if is_module(m) and id(m) not in seen:
                seen.add(id(m))
                nbytes += release(m, name=name, stage=self.stage, exclude=exclude,
                                  flush=False)
        flush_allocators()
        self.emit("release", name=name, stage=self.stage, nbytes=nbytes)
        return nbytes

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
            for fn in self._on_enter.get(stage, ()):
                fn(self)
            devmem.reset_peaks()
            self.gpu(stage)

    def on_enter(self, stage, fn):
        """Call fn(probe) each time `stage` is entered, after the registry's
        releases (an adapter-level release: probe.release_module)."""
        self._on_enter.setdefault(stage, []).append(fn)

    # -- hooks ----------------------------------------------------------------
    def on_call(self, target, method, stage, outputs=None, then=None, optional=False):
        """Wrap target.method (target: a class, an instance or a module) so a
        call enters `stage` first. `stage` may be a callable taking the call's
        arguments (self included for a class) and returning the name (None:
        stay in the current stage). `outputs` fingerprints the return value: a
        name ("{stage}" is replaced by the stage), a list of names for a tuple
        result, or a callable outputs(result) -> {name: tensor}. `then`: a stage
        entered when the call returns. A hook that never fires makes the run
        fail at exit (see check()) unless optional=True."""
        # a class: the attribute as defined (an inherited classmethod stays one)
        raw = inspect.getattr_static(target, method) if isinstance(target, type) else None
        if raw is None:
            raw = getattr(target, method)
        kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
        fn = raw.__func__ if kind else raw
        if getattr(fn, "__stagebench_wrapped__", False):
            return
        probe = self
        label = "%s.%s" % (_label(target), method)
        if not optional:
            self.hooks.setdefault(label, 0)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if label in probe.hooks:
                probe.hooks[label] += 1
            name = stage(*args, **kwargs) if callable(stage) else stage
            if name is not None:
                probe.enter(name)
            name = probe.stage
            result = fn(*args, **kwargs)
            if outputs is not None and probe.events.on:
                for key, value in _named_outputs(outputs, result, name).items():
                    probe.fingerprint(key, value, stage=name)
            probe.gpu(name)
            if then is not None:
                probe.enter(then)
            return result
        wrapper.__stagebench_wrapped__ = True
        setattr(target, method, kind(wrapper) if kind else wrapper)

    def when_imported(self, module_name, callback, main=True, needs=None, optional=False):
        """Call callback(module) once the module has been imported (now, if it
        already is). Installs an import hook: the module's file stays as it is.
        main=True: also when the module is the main one (`python3 app.py`,
        `python3 -m app`; module_name may be the script's path), just before its
        `if __name__ == "__main__":` line, or once the names in `needs` are
        defined. A callback that never runs makes the run fail at exit, unless
        optional=True."""
        label = "import of %s" % module_name
        if not optional:
            self.hooks.setdefault(label, 0)
        done = []

        def once(mod):
            if done:
                return
            done.append(mod)
            if label in self.hooks:
                self.hooks[label] += 1
            callback(mod)
        if main:
            main_mod = sys.modules.get("__main__")
            if main_mod is not None and getattr(main_mod, "__file__", None) is not None:
                from .mainhook import matches
                if matches(module_name, main_mod.__dict__) and needs is None:
                    once(main_mod)  # already running (an adapter loaded late)
                    return
            watch_main(module_name, once, needs)
            if is_path(module_name):
                return
        mod = sys.modules.get(module_name)
        if mod is not None:
            once(mod)
            return
        _finder().pending.setdefault(module_name, []).append(once)

    # -- did staged loading engage? ---------------------------------------------
    def problems(self):
        """What never happened in this run, one sentence each: hooks that never
        fired and, in a staged run, staged loading that never engaged."""
        out = []
        unresolved = [i for i in self.interceptors if not i.installed]
        waiting = {"import of " + i.module_name for i in unresolved}
        for label, n in self.hooks.items():
            if n or label in waiting:
                continue
            if label.startswith("import of "):
                out.append("the module %s was never imported nor run as the main "
                           "script, so the adapter never patched it" % label[10:])
            else:
                out.append("the hooked method %s was never called" % label)
        for i in unresolved:
            out.append("the %s never resolved: its module %s was never imported"
                       % (i.describe(), i.module_name))
        if self.plan is not None and not self.plan.made:
            return out  # a plan that does not match: the run went on as written (its report)
        if self.staged:
            if not self._entries and self.adapter is None:
                out.append("no adapter was given (STAGEBENCH_ADAPTER), so no model was "
                           "deferred ('stagebench learn' writes a plan to use as one; "
                           "compare learns one itself)")
            elif not self._entries:
                names = [i.target for i in self.interceptors if i.kind == "model"]
                out.append("no model was deferred%s" % (
                    ": the calls the adapter names (%s) were never made while the "
                    "pipeline set itself up" % ", ".join(names) if names else
                    " (the adapter registered none)"))
            if self.stage is None:
                out.append("no stage was ever entered")
        return out

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


def _resolving_load_state_dict(torch):
    cls = torch.nn.Module
    orig = cls.load_state_dict
    if getattr(orig, "__stagebench_wrapped__", False):
        return

    @functools.wraps(orig)
    def load_state_dict(self, *args, **kwargs):
        return orig(self, *resolve(args), **resolve(kwargs))
    load_state_dict.__stagebench_wrapped__ = True
    cls.load_state_dict = load_state_dict


def exit_now(status):
    """Flush stdout and stderr, then leave at once with STATUS (no atexit
    handlers, no cleanup that could fail after the verdict)."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(status)


def _label(target):
    if isinstance(target, type):
        return target.__qualname__
    if isinstance(target, type(sys)):
        if target.__name__ == "__main__" and getattr(target, "__file__", None):
            return os.path.splitext(os.path.basename(target.__file__))[0]
        return target.__name__
    return type(target).__qualname__ + " instance"


def _no_key_mismatch():
    try:
        from torch.nn.modules.module import _IncompatibleKeys
        return _IncompatibleKeys([], [])
    except ImportError:
        return None


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


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, callbacks):
        self._loader = loader
        self._callbacks = callbacks

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        # a package that puts another object in sys.modules while it runs (diffusers' and
        # transformers' lazy modules) is that object for everyone importing it after
        module = sys.modules.get(module.__name__, module)
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
