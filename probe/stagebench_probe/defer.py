"""defer.py -- staged loading without copying the pipeline's code.

An adapter names the calls that build or load models (a constructor such as
torchvision.models.resnet50, a from_pretrained, torch.load). While the pipeline
sets itself up, the probe intercepts them:

- a model call returns a lazy stand-in (a LazyModel) that keeps the call and its
  own arguments; the setup calls made on it (.eval(), .to(device),
  .load_state_dict(...), .requires_grad_(False), ...) are recorded, and the real
  model is built, and those calls replayed, on first use in a stage;
- a loader call (torch.load) returns a DeferredValue that keeps the call: given
  to a stand-in's load_state_dict it is read only when that model is built (and
  read again when it is rebuilt); used in any other way it is read then.

Targets are "package.module:attr.path" or a dotted path whose module part is
everything before the last name (before the class, for Class.method, when the
class name is capitalised): "torch.load", "torchvision.models.resnet50",
"transformers.AutoModel.from_pretrained".
"""
import difflib
import functools
import inspect
import os
import sys
import time

from .release import built_nbytes, flush_allocators
from .rng import RngState, preserved_rng

# Methods of a stand-in that are recorded (and replayed on every build) rather
# than building the model; they return the stand-in (load_state_dict: no
# missing or unexpected keys, checked when the model is built).
RECORDED = frozenset(("eval", "train", "to", "cpu", "cuda", "half", "float", "double",
                      "bfloat16", "requires_grad_", "load_state_dict", "share_memory",
                      "zero_grad", "type"))


class AdapterError(Exception):
    """An adapter names something that is not there (a defer target's function)."""


# what the adapter called, by the interceptor's kind
CALLS = {"model": "defer", "load": "defer_load", "memo": "memoize"}


def adapter_line():
    """'FILE:LINE' of the first frame outside this package: the adapter's call."""
    here = os.path.dirname(os.path.abspath(__file__))
    f = sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f = f.f_back
    return None if f is None else "%s:%d" % (f.f_code.co_filename, f.f_lineno)


def _attr(owner, attr, where):
    """owner.attr, or AdapterError naming what is missing (and a close name)."""
    try:
        return getattr(owner, attr)
    except AttributeError:
        pass
    names = [n for n in dir(owner) if not n.startswith("__")]
    close = difflib.get_close_matches(attr, names, 1)
    raise AdapterError("%s has no attribute '%s'%s" % (
        where, attr, " (did you mean '%s'?)" % close[0] if close else ""))


def split_target(target):
    """'pkg.mod:Cls.meth' or 'pkg.mod.Cls.meth' -> ('pkg.mod', ['Cls', 'meth'])."""
    if ":" in target:
        mod, _, path = target.partition(":")
        return mod, path.split(".")
    parts = target.split(".")
    if len(parts) < 2:
        raise ValueError("defer: '%s' is not module.name or module:name" % target)
    if len(parts) >= 3 and parts[-2][:1].isupper():
        return ".".join(parts[:-2]), parts[-2:]
    return ".".join(parts[:-1]), parts[-1:]


def resolve(value):
    """value with every DeferredValue in it (lists, tuples, dicts) read."""
    if isinstance(value, DeferredValue):
        return value._sb_read()
    if isinstance(value, (list, tuple)):
        return type(value)(resolve(v) for v in value)
    if isinstance(value, dict):
        return {k: resolve(v) for k, v in value.items()}
    return value


class DeferredValue:
    """The result of an intercepted loader call, not read yet. Indexing gives
    another DeferredValue (ckpt["model"]); any other use reads it once and
    keeps the value."""

    __slots__ = ("_sb_fn", "_sb_args", "_sb_kwargs", "_sb_keys", "_sb_label", "_sb_value",
                 "_sb_have")

    def __init__(self, fn, args, kwargs, label, keys=()):
        for k, v in (("_sb_fn", fn), ("_sb_args", args), ("_sb_kwargs", kwargs),
                     ("_sb_keys", keys), ("_sb_label", label), ("_sb_value", None),
                     ("_sb_have", False)):
            object.__setattr__(self, k, v)

    def _sb_read(self):
        """Read it now (a fresh copy each time unless it was materialised)."""
        if self._sb_have:
            return self._sb_value
        value = self._sb_fn(*resolve(self._sb_args), **resolve(self._sb_kwargs))
        for k in self._sb_keys:
            value = value[k]
        return value

    def _sb_materialize(self):
        if not self._sb_have:
            object.__setattr__(self, "_sb_value", self._sb_read())
            object.__setattr__(self, "_sb_have", True)
        return self._sb_value

    def __getitem__(self, key):
        if self._sb_have:
            return self._sb_value[key]
        return DeferredValue(self._sb_fn, self._sb_args, self._sb_kwargs, self._sb_label,
                             self._sb_keys + (key,))

    def __getattr__(self, attr):
        if attr.startswith("_sb_"):
            raise AttributeError(attr)
        return getattr(self._sb_materialize(), attr)

    def __iter__(self):
        return iter(self._sb_materialize())

    def __len__(self):
        return len(self._sb_materialize())

    def __contains__(self, item):
        return item in self._sb_materialize()

    def __repr__(self):
        return "<DeferredValue %s%s>" % (self._sb_label,
                                         "".join("[%r]" % k for k in self._sb_keys))


def _build_on(device, fn, args, kwargs):
    """fn(*args, **kwargs), built directly on `device` when torch can (2.x:
    torch.device as a context manager), else built and moved there."""
    if device is None:
        return fn(*args, **kwargs)
    import torch
    dev = torch.device(device)
    if hasattr(dev, "__enter__"):
        with dev:
            return fn(*args, **kwargs)
    module = fn(*args, **kwargs)
    return module.to(dev) if hasattr(module, "to") else module


class Interceptor:
    """One intercepted call (see Probe.defer / Probe.defer_load / Probe.memoize)."""

    def __init__(self, probe, target, kind, name=None, stages=None, replay_rng=None,
                 device=None, during=("setup",)):
        self.probe = probe
        self.target = target
        self.kind = kind  # "model", "load" or "memo"
        self.name = name
        self.stages = stages
        self.replay_rng = replay_rng
        self.device = device
        self.during = set(during or ()) | {None}
        self.calls = 0  # intercepted calls
        self.memo = []  # (args, kwargs, result) for kind "memo"
        self.module_name, self.path = split_target(target)
        self.where = adapter_line()  # the adapter's call, for messages
        self.installed = False  # the target was found and wrapped

    def active(self):
        return self.probe.stage in self.during

    def describe(self):
        """'defer target 'T' (adapter FILE:LINE)', for messages."""
        return "%s target '%s' (adapter %s)" % (CALLS[self.kind], self.target,
                                                self.where or self.probe.adapter or "-")

    def install_or_fail(self, module):
        """install(), or the run fails at once (exit 3) naming the target and what
        is missing: a typo must not surface later as some other error."""
        try:
            self.install(module)
        except AdapterError as e:
            self.probe.fail("%s: %s" % (self.describe(), e))

    def install(self, module):
        owner, where = module, self.module_name
        for attr in self.path[:-1]:
            owner = _attr(owner, attr, where)
            where += "." + attr
        attr = self.path[-1]
        _attr(owner, attr, where)
        self.installed = True
        raw = inspect.getattr_static(owner, attr, None)
        if isinstance(raw, classmethod):
            orig = raw.__func__

            def cm(cls, *args, **kwargs):
                return self.call(functools.partial(orig, cls), args, kwargs)
            functools.update_wrapper(cm, orig)
            setattr(owner, attr, classmethod(cm))
            return
        orig = getattr(owner, attr)
        wrapper = self._wrap(orig)
        setattr(owner, attr, staticmethod(wrapper) if isinstance(owner, type) else wrapper)
        # the same function re-exported from its defining module
        home = sys.modules.get(getattr(orig, "__module__", None) or "")
        if home is not None and home is not owner and getattr(home, attr, None) is orig:
            setattr(home, attr, wrapper)

    def _wrap(self, orig):
        @functools.wraps(orig)
        def wrapper(*args, **kwargs):
            return self.call(orig, args, kwargs)
        wrapper.__stagebench_wrapped__ = True
        return wrapper

    def call(self, fn, args, kwargs):
        if not self.active():
            return fn(*resolve(args), **resolve(kwargs))
        if self.kind == "memo":
            return self._memo(fn, args, kwargs)
        if not self.probe.staged:
            if self.kind == "model":
                return self._eager_load(fn, args, kwargs)
            return fn(*args, **kwargs)
        self.calls += 1
        if self.kind == "load":
            return DeferredValue(fn, args, kwargs, self.target)
        return self._stand_in(fn, args, kwargs)

    def _memo(self, fn, args, kwargs):
        for a, k, result in self.memo:
            if _same(a, args) and _same(k, kwargs):
                self.probe.mark("shared: %s reused" % self.target)
                return result
        self.calls += 1
        result = fn(*args, **kwargs)
        self.memo.append((args, kwargs, result))
        return result

    def _name(self, fn, args, kwargs):
        if callable(self.name):
            name = self.name(*args, **kwargs)
        else:
            name = self.name or getattr(fn, "__name__", None) or self.path[-1]
        return self.probe.unique_name(name)

    def _eager_load(self, fn, args, kwargs):
        """Eager: the call runs as written; a load event reports it."""
        t0 = time.perf_counter()
        module = fn(*args, **kwargs)
        seconds = time.perf_counter() - t0
        self.calls += 1
        self.probe.emit("load", name=self._name(fn, args, kwargs), stage=self.probe.stage,
                        nbytes=built_nbytes(module), seconds=round(seconds, 6))
        return module

    def _stand_in(self, fn, args, kwargs):
        probe = self.probe
        replay = probe.rng_replay if self.replay_rng is None else self.replay_rng
        builder, cls = replay_builder(fn, args, kwargs, replay, self.device)
        with probe._lock:  # the name stays free until it is registered (threads)
            name = self._name(fn, args, kwargs)
            stages = self.stages(name) if callable(self.stages) else self.stages
            return probe.register(name, builder, stages or (), record=True, cls=cls)


def replay_builder(fn, args, kwargs, replay, device=None, then=None):
    """(builder, class or None) for a deferred call fn(*args, **kwargs). replay:
    eager's random init happens now (the call runs, one model at a time, and its
    result is dropped) and the builder builds from that same generator state.
    then(module) is applied to every module built (a plan's hooks)."""
    state0 = cls = None
    if replay:
        state0 = RngState()
        module = fn(*resolve(args), **resolve(kwargs))
        cls = type(module)
        del module
        flush_allocators()

    def builder():
        with preserved_rng(state0 is not None):
            if state0 is not None:
                state0.restore()
            module = _build_on(device, fn, resolve(args), resolve(kwargs))
        return then(module) if then is not None else module
    return builder, cls


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:
        return a is b
