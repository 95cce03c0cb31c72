"""plan_model.py -- the stand-in of a staged model of a plan, the base of a diffusers
component's stand-in (components.py); plan.py makes them for the models a plan stages.

Queries are not uses: what a library asks of a model without running it is answered without
building it while it is not built (queries()): its device and dtype (the last .to() /
.cuda() / .half() ... recorded on it in this run, else the dtype its loading call was given,
else what the learning run saw at its first use), modules() (the stand-in alone: a walk for
offload hooks finds none) and the offload hooks' private attributes (absent). Anything else,
parameters() included, is a use and builds it.
"""
from .core import LazyModel

_UNKNOWN = object()
HOOK_ATTRS = frozenset(("_hf_hook", "_diffusers_hook"))
_DTYPE_METHODS = {"half": "float16", "float": "float32", "double": "float64",
                  "bfloat16": "bfloat16"}


class PlanModel(LazyModel):
    """A staged model of a plan: a call of it, or of one of its "uses" methods, enters
    its stage first."""

    __slots__ = ("_sb_plan",)

    def __init__(self, probe, name, plan):
        LazyModel.__init__(self, probe, name)
        object.__setattr__(self, "_sb_plan", plan)

    def __call__(self, *args, **kwargs):
        self._sb_plan.use(self._sb_name)
        return LazyModel.__call__(self, *args, **kwargs)

    def _sb_module(self):
        # any use that builds it once the stages have begun (a method other than those
        # the learning run saw called, .dtype ...) starts its stage first; one while the
        # script sets itself up may change it in ways no rebuild would repeat (its own
        # checkpoint reader writing into it): it is kept resident, never rebuilt
        plan = self._sb_plan
        e = self._sb_probe._entries.get(self._sb_name)
        if e is not None and e.module is None and not e.pinned:
            if plan.probe.stage in (None, "setup"):
                plan.keep(self._sb_name, plan.state.pop("asked", None))
            else:
                plan.use(self._sb_name)
        return LazyModel._sb_module(self)

    def __getattr__(self, attr):
        e = self._sb_probe._entries.get(self._sb_name)
        if e is not None and e.module is None:
            known = queries(self, e, attr)
            if known is not _UNKNOWN:
                return known
        if attr in self._sb_plan.models[self._sb_name].get("uses", ()):
            self._sb_plan.use(self._sb_name)
        self._sb_plan.state["asked"] = attr
        try:
            return LazyModel.__getattr__(self, attr)
        finally:
            self._sb_plan.state.pop("asked", None)


def queries(stand_in, entry, attr):
    """The answer to a query on a model not built (see the module's docstring), or
    _UNKNOWN."""
    if attr in HOOK_ATTRS:
        raise AttributeError(attr)
    if attr == "modules":
        return lambda: iter((stand_in,))
    if attr == "named_modules":
        return lambda memo=None, prefix="", remove_duplicate=True: iter(((prefix, stand_in),))
    if attr not in ("device", "dtype") or not hasattr(_real_class(stand_in, entry), attr):
        return _UNKNOWN  # a class without it: eager's AttributeError, once built
    import torch
    plan, name = stand_in._sb_plan, stand_in._sb_name
    device, dtype = _recorded(torch, entry.recorded or ())
    if attr == "device":
        device = device or plan.models[name].get("device")
        return _UNKNOWN if device is None else torch.device(device)
    dtype = dtype or plan.known.get(name, {}).get("dtype") or plan.models[name].get("dtype")
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype.replace("torch.", ""), None)
    return dtype if isinstance(dtype, torch.dtype) else _UNKNOWN


def _real_class(stand_in, entry):
    real = getattr(type(stand_in), "_sb_real", None)  # a diffusers component's
    return real or entry.cls or object


def _recorded(torch, recorded):
    """(device, dtype) the recorded setup calls leave the model on (None: not said)."""
    device = dtype = None
    for rec in recorded:
        attr, args, kwargs = rec[0], rec[1], rec[2]
        if attr in _DTYPE_METHODS:
            dtype = getattr(torch, _DTYPE_METHODS[attr])
        elif attr in ("cuda", "cpu"):
            dev = args[0] if args else kwargs.get("device")
            device = attr if dev is None else (
                "%s:%d" % (attr, dev) if isinstance(dev, int) else str(dev))
        elif attr == "to":
            for v in list(args) + [kwargs.get("device"), kwargs.get("dtype")]:
                if isinstance(v, torch.dtype):
                    dtype = v
                elif isinstance(v, (str, torch.device)):
                    device = str(v)
                elif isinstance(v, torch.Tensor):
                    device, dtype = str(v.device), v.dtype
    return device, dtype
