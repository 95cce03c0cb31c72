"""plan.py -- staging plans: written from what the learner saw, installed from a plan file.

A plan file is an adapter (STAGEBENCH_ADAPTER names it; its install(probe) calls
install_plan) holding two tables the user can read and edit:

MODELS  name -> where the script makes it ("at": FILE:LINE in FUNCTION, the "call"-th
        call there), with what ("by": the function, classmethod or class it calls; "part":
        the component, for a diffusers pipeline's from_pretrained), its class, its size in
        the learning run, the methods the pipeline calls on it ("uses") and its stage;
STAGES  in the order the run entered them: name, models, and "enter", the function whose
        call starts the stage (None: it starts when one of its models is first used);
LEFT    the call sites that made models the plan does not stage (their calls run as written).

Installed, in every mode: "setup" is entered at the first call that makes a planned model;
a stage is entered when its "enter" function is called or one of its models is used, if it
comes after the current one; every model's output is fingerprinted (latent events, up to
FINGERPRINTS calls of each of its methods per stage). Staged (STAGEBENCH_STAGED=1) a planned
call returns a lazy stand-in built at its first use (RNG replay as configured), and a stage
releases the models it does not list. Eager: the calls run as written and load events
report them. A call site the plan names that the run never reaches, or a stage function
that is not there, is said at exit (the script changed since the plan was learned).
"""
import datetime
import functools
import os
import pprint
import sys
import time

from . import components as cp
from . import frames as fr
from . import plan_match as pm
from .core import LazyModel
from .release import built_nbytes
from .defer import Interceptor, replay_builder, resolve
from .plan_model import PlanModel
from .rng import RngState, preserved_rng

FINGERPRINTS = 16
LOADERS = ("torch:load", "safetensors.torch:load_file")
_CALL = "__call__"


# -- writing -----------------------------------------------------------------------------
def _model_name(b, taken):
    if b.part:
        name = b.part
    elif b.names:
        name = b.names[0]
    elif b.factory and b.factory["kind"] == "classmethod":
        name = b.factory["on"].rsplit(".", 1)[-1].rsplit(":", 1)[-1].lower()
    elif b.factory:
        name = b.factory["by"].rsplit(".", 1)[-1].rsplit(":", 1)[-1]
        name = name.lower() if b.factory["kind"] == "class" else name
    else:
        name = b.cls.rsplit(":", 1)[-1].lower()
    base, k = name, 1
    while name in taken or name == "setup":
        k += 1
        name = "%s-%d" % (base, k)
    taken.add(name)
    return name


def _stageable(b, births):
    if b.why_not:
        return b.why_not
    made_apart = [x for x in births if x is not b and x.mid in b.sub_ids
                  and (b.call is None or x.call is not b.call)]
    if made_apart:
        x = made_apart[0]
        return ("%d of its parts (%s, made at %s:%d) are made by the script before it: "
                "staging it would not free them" % (len(made_apart), x.cls, *x.site[:2]))
    if b.factory is None:
        return ("made by a call stagebench cannot intercept (a local function or a lambda "
                "between the script and the model)")
    if b.factory["kind"] == "class" or b.result or b.part:
        return None
    return "the call that makes it did not return it"


def _stages(uses, models):
    """Group the uses of staged models into stages: overlapping spans of use are one."""
    seq = [u for u in uses if u[0] in models]
    span = {}
    for i, u in enumerate(seq):
        first, _ = span.get(u[0], (i, i))
        span[u[0]] = (first, i)
    groups = []
    for b, (first, last) in sorted(span.items(), key=lambda kv: kv[1][0]):
        if groups and first <= groups[-1]["last"]:
            groups[-1]["models"].append(b)
            groups[-1]["last"] = max(groups[-1]["last"], last)
        else:
            groups.append({"models": [b], "first": first, "last": last})
    for g in groups:
        g["uses"] = seq[g["first"]:g["last"] + 1]
    return groups


def _name_stage(g, groups, models, taken):
    others = set()
    for h in groups:
        if h is not g:
            for u in h["uses"]:
                others.update(u[2])
    enter = None
    for fid in g["uses"][0][2]:
        last = fid.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        if fid in others or last.startswith("_") or "<" in fid:
            continue
        if callable(fr.resolve(fid)):
            enter = fid
            break
    if enter:
        name = enter.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
    else:
        parts = []
        for b in g["models"]:
            m = models[b]["name"]
            meths = [x for x in b.methods if x != _CALL]
            parts.append(m + ("." + meths[0] if meths and _CALL not in b.methods else ""))
        name = "+".join(parts[:3])
    base, k = name, 1
    while name in taken or name == "setup":
        k += 1
        name = "%s-%d" % (base, k)
    taken.add(name)
    return name, enter


def _mb(n):
    """Bytes in the tables' MB (2^20 bytes), one decimal."""
    return None if n is None else round(n / (1 << 20), 1)


def write(learner):
    """(plan file text, summary lines) from a Learner that has seen a run."""
    taken = set()
    used = [b for b in learner.births if b.methods]
    calls = {}
    models, skipped = {}, []
    for b in sorted(used, key=lambda b: b.index):
        why = _stageable(b, learner.births)
        if why:
            skipped.append((b, why))
            continue
        key = (b.site, b.factory["by"])
        ident = id(b.call) if b.call is not None else b.index
        seen = calls.setdefault(key, [])
        if ident not in seen:
            seen.append(ident)
        m = {"name": _model_name(b, taken),
             "at": "%s:%d in %s" % b.site, "call": seen.index(ident) + 1,
             "by": b.factory["by"], "class": b.cls, "mb": _mb(b.nbytes),
             "uses": list(b.methods)}
        for k in ("device", "dtype"):
            if getattr(b, k, None):
                m[k] = getattr(b, k)
        if b.draws is not None:
            m["draws"] = b.draws
        if b.part:
            m["part"] = b.part
        models[b] = m
    groups = _stages(learner.uses, models)
    stages, stage_taken = [], set()
    for g in groups:
        name, enter = _name_stage(g, groups, models, stage_taken)
        for b in g["models"]:
            models[b]["stage"] = name
        stages.append({"name": name, "models": [models[b]["name"] for b in g["models"]],
                       "enter": enter})
    summary = ["%d model(s), %d stage(s): %s" % (len(models), len(stages),
                                                 ", ".join(s["name"] for s in stages))]
    for b, why in skipped:
        summary.append("not staged: %s (%s, made at %s:%d): %s"
                       % (b.names[0] if b.names else b.cls, b.cls, *b.site[:2], why))
    return _render(learner, list(models.values()), stages, skipped), summary


HEADER = '''"""Staging plan for %(script)s, learned by stagebench from one eager run (%(when)s).

Review it, edit it, keep it: name this file as the pipeline file's "adapter" and runs use it
instead of learning a plan again. MODELS: each model the script makes, where (FILE:LINE in
FUNCTION, the "call"-th call there) and with what ("by"; "part": the component of a diffusers
pipeline), its class, its size in the learning run (MB: 2^20 bytes), its dtype as the model
reports it, whether making it drew random numbers ("draws": only then does a staged run with
RNG replay make it where the script does too, and drop it), the methods the pipeline calls on
it, and the stage that uses it. STAGES: in the order the run went; a stage starts when its
"enter" function is called or one of its models is first used (enter None). A staged run
builds each model at the start of its stage and releases it when a stage that does not list
it starts; a model used elsewhere is built again there, with a warning.
%(skipped)s"""
from stagebench_probe.plan import install_plan

'''


def _render(learner, models, stages, skipped):
    script = pm.running_script()
    notes = ""
    if skipped:
        notes = "\nNot staged (left as the script makes them):\n" + "".join(
            "- %s (%s, made at %s:%d): %s\n" % (b.names[0] if b.names else "a model", b.cls,
                                                b.site[0], b.site[1], why)
            for b, why in skipped)
    when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    out = [HEADER % {"script": script or "the script", "when": when, "skipped": notes}]
    out.append("SCRIPT = %r\n\nMODELS = {\n" % script)
    for m in models:
        body = {k: v for k, v in m.items() if k != "name"}
        out.append("    %r: %s,\n" % (m["name"], pprint.pformat(body, width=88, sort_dicts=False)
                                       .replace("\n", "\n" + " " * (len(repr(m["name"])) + 6))))
    out.append("}\n\nSTAGES = [\n")
    for s in stages:
        out.append("    %s,\n" % pprint.pformat(s, width=92, sort_dicts=False)
                   .replace("\n", "\n    "))
    out.append("]\n\n# Calls seen making models that are not staged (above): left as they are\n")
    out.append("LEFT = [\n")
    seen = {(m["by"], m["at"]) for m in models}
    for b in learner.births:  # every call that made a module, but the planned ones
        if b.factory is None or b.factory["by"].startswith("importlib."):
            continue  # (an import statement is not a call that makes a model)
        key = (b.factory["by"], "%s:%d in %s" % b.site)
        if key not in seen:
            seen.add(key)
            out.append("    {'by': %r, 'at': %r},\n" % key)
    out.append("]\n\n# Models the script uses that the plan cannot stage, and why (said in the report)\n")
    out.append("NOT_STAGED = [\n")
    for b, why in skipped:
        out.append("    %s,\n" % pprint.pformat(
            {"name": b.names[0] if b.names else _model_name(b, set()), "class": b.cls,
             "mb": _mb(b.nbytes), "why": why}, width=92, sort_dicts=False)
            .replace("\n", "\n    "))
    out.append("]\n\n\ndef install(probe):\n    install_plan(probe, MODELS, STAGES, LEFT, "
               "script=SCRIPT, not_staged=NOT_STAGED)\n")
    return "".join(out)


# -- installing ----------------------------------------------------------------------------
class Plan:
    def __init__(self, probe, models, stages, left=(), script=None):
        self.probe = probe
        self.script = script
        self.models = models
        self.stages = stages
        self.order = {s["name"]: i for i, s in enumerate(stages)}
        self.stage_of = {}
        for s in stages:
            for m in s["models"]:
                self.stage_of[m] = s["name"]
        self.sites = {}  # (by, file, line) -> [model names]; "call" k is index k-1
        for name, m in models.items():
            key = (m["by"],) + _site_key(m["at"])
            self.sites.setdefault(key, {}).setdefault(m.get("call", 1), []).append(name)
        self.left = {(x["by"],) + _site_key(x["at"]) for x in left}
        self.site_calls = {}
        self.made = set()
        self.printed = {}  # (model, method, stage) -> fingerprints taken
        self.state = {"spoofing": False}
        self.known = {}  # name -> {"dtype": ...}: what this run's loading call says

    def replays(self, name):
        """Whether a staged run replays the random draws of model `name` where the script
        makes it (its call runs then and its result is dropped, so the model is built
        twice): only with RNG replay on and when the learning run saw its making draw
        from a generator ("draws"; a plan without it: assumed to)."""
        return bool(self.probe.rng_replay) and self.models[name].get("draws", True) is not False

    # -- stages -------------------------------------------------------------------------
    def setup(self):
        if self.probe.stage is None:
            self.probe.enter("setup")

    def enter(self, stage):
        cur = self.probe.stage
        if cur == stage:
            return
        if cur in self.order and self.order[stage] <= self.order[cur]:
            return  # an earlier stage's model used again: built where it is (get())
        self.probe.enter(stage)

    def keep(self, name, asked=None):
        """A model the script uses while it sets itself up: built now and kept (a
        "not staged" note for the report, naming the call that forced it)."""
        text = ("%s%s (%s MB): used while the script sets itself up (%s), so built then and "
                "kept resident; forced by %s" % (
                    pm.NOTE_NOT_STAGED, name, self.models.get(name, {}).get("mb"),
                    ".%s" % asked if asked else "a call", pm.forced_by(sys._getframe(1))))
        self.probe.mark(text)
        sys.stderr.write("stagebench_probe: %s\n" % text)
        self.probe.pin(name)

    def use(self, name):
        stage = self.stage_of.get(name)
        if stage is not None:
            self.enter(stage)

    # -- made models --------------------------------------------------------------------
    def match(self, by, frame):
        """The model names a call of `by` from here makes, or None."""
        site = fr.direct_site(frame)
        if site is None:
            return None  # not called by the script itself (a library's own call)
        key = (by, site[0], site[1])
        if key in self.left:
            return None
        calls = self.sites.get(key)
        if calls is None:  # moved: the same call from the same function, another place
            near = pm.moved(self, by, site)
            if near is None:
                return None
            self.probe.mark("plan: %s is called at %s:%d now, not %s:%d"
                            % (by, site[0], site[1], near[1], near[2]))
            key = near
            self.sites[(by, site[0], site[1])] = calls = self.sites[key]
        n = self.site_calls[key] = self.site_calls.get(key, 0) + 1
        names = calls.get(n)
        if names and any(x in self.made for x in names):
            self.probe.mark("plan: %s at %s:%d: call %d makes %s again; made as written"
                            % (by, site[0], site[1], n, ", ".join(names)))
            return None
        if names:
            self.made.update(names)
        return names

    def _fn(self, key):
        for calls in self.sites[key].values():
            for name in calls:
                return self.models[name]["at"].rsplit(" in ", 1)[-1]

    def attach(self, name, module):
        """Hooks on a built model: its stage entered on use, its outputs fingerprinted."""
        uses = self.models[name].get("uses") or [_CALL]
        plan = self
        if _CALL in uses and hasattr(module, "register_forward_pre_hook"):
            module.register_forward_pre_hook(lambda mod, inp: plan.use(name))
            module.register_forward_hook(
                lambda mod, inp, out: plan.fingerprint(name, _CALL, out))
        for meth in uses:
            if meth == _CALL:
                continue
            orig = getattr(module, meth, None)
            if not callable(orig):
                continue

            def wrapper(*args, _orig=orig, _meth=meth, **kwargs):
                plan.use(name)
                out = _orig(*args, **kwargs)
                plan.fingerprint(name, _meth, out)
                return out
            functools.update_wrapper(wrapper, orig)
            object.__setattr__(module, meth, wrapper)
        return module

    def fingerprint(self, name, method, out):
        probe = self.probe
        if not probe.events.on:
            return
        key = (name, method, probe.stage)
        k = self.printed[key] = self.printed.get(key, 0) + 1
        if k > FINGERPRINTS:
            if k == FINGERPRINTS + 1:
                probe.mark("plan: %s: calls after the %dth in stage %s are not fingerprinted"
                           % (name, FINGERPRINTS, probe.stage))
            return
        label = name if method == _CALL else "%s.%s" % (name, method)
        label += "" if k == 1 else "#%d" % k
        for sub, t in _tensors(out, label):
            probe.fingerprint(sub, t)

    def loaded(self, name, module, seconds):
        self.probe.emit("load", name=name, stage=self.probe.stage, nbytes=built_nbytes(module),
                        seconds=round(seconds, 6))
        return self.attach(name, module)

    # -- the end ------------------------------------------------------------------------
    def report(self):
        why = pm.mismatch(self)
        if why:
            text = ("%s%s: the run went on as written, nothing staged; learn the plan again "
                    "(stagebench learn)" % (pm.NOTE_MISMATCH, why))
            self.probe.mark(text)
            sys.stderr.write("stagebench_probe: %s\n" % text)
            return
        missing = [n for n in self.models if n not in self.made]
        for n in missing:
            m = self.models[n]
            text = ("plan: model '%s' (made at %s by %s) was not made there in this run: "
                    "the script changed since the plan was learned; learn it again "
                    "(stagebench learn)" % (n, m["at"], m["by"]))
            self.probe.mark(text)
            sys.stderr.write("stagebench_probe: %s\n" % text)


def _site_key(at):
    where = at.split(" in ", 1)[0]
    f, _, line = where.rpartition(":")
    return f, int(line)


def _tensors(out, label, depth=0):
    """(name, tensor) for the tensors in a model's output: a tensor, a tuple or list, a
    dict or ModelOutput, an object with a .sample (at most 16, 3 levels deep)."""
    found = []

    def walk(v, name, d):
        if len(found) >= 16 or d > 3:
            return
        if hasattr(v, "detach") and hasattr(v, "dtype"):
            found.append((name, v))
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, "%s.%s" % (name, k), d + 1)
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, "%s[%d]" % (name, i), d + 1)
        elif hasattr(v, "sample") and hasattr(v.sample, "detach"):
            walk(v.sample, name + ".sample", d + 1)
    walk(out, label, depth)
    return found


class PlanFactory(Interceptor):
    """A call the plan says makes models ("by"): matched by its call site."""

    def __init__(self, plan, target):
        Interceptor.__init__(self, plan.probe, target, "model", during=None)
        self.plan = plan
        self.where = "the plan"

    def active(self):
        return True

    def call(self, fn, args, kwargs):
        names = self.plan.match(self.target, sys._getframe(1))
        if not names:
            return fn(*resolve(args), **resolve(kwargs))
        self.calls += 1
        self.plan.setup()
        parts = {n: self.plan.models[n]["part"] for n in names if self.plan.models[n].get("part")}
        if parts:
            return self._pipeline(fn, args, kwargs, parts)
        name = names[0]
        if not self.probe.staged:
            t0 = time.perf_counter()
            module = fn(*resolve(args), **resolve(kwargs))
            return self.plan.loaded(name, module, time.perf_counter() - t0)
        return self._stand_in(name, fn, args, kwargs)

    def _stand_in(self, name, fn, args, kwargs):
        probe, plan = self.probe, self.plan
        builder, _ = replay_builder(fn, args, kwargs, plan.replays(name),
                                    then=functools.partial(plan.attach, name))
        stage = plan.stage_of.get(name)
        probe.register(name, builder, [stage] if stage else (), record=True,
                       cls=_known_class(plan.models[name].get("class")))
        return PlanModel(probe, name, plan)

    def _pipeline(self, fn, args, kwargs, parts):
        """A diffusers pipeline's from_pretrained: eager, its components get hooks;
        staged, the planned ones are given to it as stand-ins."""
        plan, probe = self.plan, self.probe
        if not probe.staged:
            t0 = time.perf_counter()
            pipe = fn(*resolve(args), **resolve(kwargs))
            seconds = time.perf_counter() - t0
            for name, part in parts.items():
                comp = getattr(pipe, part, None)
                if comp is not None:
                    plan.loaded(name, comp, seconds / len(parts))
            return pipe
        path = args[0] if args else kwargs.get("pretrained_model_name_or_path")
        for name, part in parts.items():
            real = cp.component_class(self.plan.models[name]["class"])
            load = cp.load_kwargs(part, kwargs)
            plan.known[name] = {"dtype": load.get("dtype", load.get("torch_dtype"))}
            stage = plan.stage_of.get(name)

            def build(real=real, part=part, load=load, name=name):
                return plan.attach(name, real.from_pretrained(path, subfolder=part, **load))
            probe.register(name, build, [stage] if stage else (), record=True)
            klass = cp.stand_in_class(real)
            kwargs[part] = klass(probe, name, plan, cp.config_reader(real, path, part),
                                 not real.__module__.startswith("transformers"))
        plan.state["spoofing"] = True
        try:
            pipe = fn(*resolve(args), **resolve(kwargs))
        finally:
            plan.state["spoofing"] = False
        _record_to(pipe, [kwargs[p] for p in parts.values()])
        return pipe


def _record_to(pipe, stand_ins):
    """pipe.to(device) skips the stand-ins (not modules for it): record it on them."""
    cls = type(pipe)
    orig = cls.to
    if getattr(orig, "__stagebench_wrapped__", False):
        return

    @functools.wraps(orig)
    def to(self, *args, **kwargs):
        device = kwargs.get("device", args[0] if args and not _is_dtype(args[0]) else None)
        if device is not None:
            for name, comp in list(getattr(self, "components", {}).items()):
                if isinstance(comp, LazyModel):
                    comp.to(device)
        return orig(self, *args, **kwargs)
    to.__stagebench_wrapped__ = True
    cls.to = to


def _is_dtype(x):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.dtype)


class PlanLoader(Interceptor):
    """A checkpoint reader (torch.load ...) the script calls while it sets itself up: its
    result is read when the model that receives it is built. A library's own call (diffusers
    reading its weights) runs as written: nothing deferred reaches library code."""

    def __init__(self, probe, target):
        Interceptor.__init__(self, probe, target, "load", during=("setup",))
        self.where = "the plan"

    def call(self, fn, args, kwargs):
        if fr.direct_site(sys._getframe(1)) is None:
            return fn(*resolve(args), **resolve(kwargs))
        return Interceptor.call(self, fn, args, kwargs)


class ClassFactory:
    """A planned model the script makes by calling its class: the class's __new__
    returns the stand-in (its __init__ is then skipped); built later by a real call."""

    def __init__(self, plan, target):
        self.plan = plan
        self.target = target
        self.building = False

    def install(self, module):
        cls = fr.resolve(self.target)
        if not isinstance(cls, type):
            self.plan.probe.mark("plan: %s is not a class any more" % self.target)
            return
        factory = self
        orig_new = cls.__dict__.get("__new__")

        def __new__(klass, *args, **kwargs):
            if factory.building or klass is not cls:
                return _plain_new(orig_new, klass, args, kwargs)
            names = factory.plan.match(factory.target, sys._getframe(1))
            if not names or not factory.plan.probe.staged:
                obj = _plain_new(orig_new, klass, args, kwargs)
                if names:
                    factory.plan.setup()
                    factory.pending = names[0]
                return obj
            factory.plan.setup()
            return factory.stand_in(klass, names[0], args, kwargs)
        cls.__new__ = staticmethod(__new__)
        orig_init = cls.__init__

        @functools.wraps(orig_init)
        def __init__(obj, *args, **kwargs):
            t0 = time.perf_counter()
            orig_init(obj, *args, **kwargs)
            name = getattr(factory, "pending", None)
            if name is not None and type(obj) is cls and not factory.building:
                factory.pending = None
                factory.plan.loaded(name, obj, time.perf_counter() - t0)
        cls.__init__ = __init__

    def stand_in(self, klass, name, args, kwargs):
        plan, probe = self.plan, self.plan.probe
        factory = self
        state0 = RngState() if plan.replays(name) else None
        if state0 is not None:
            self.building = True
            try:
                klass(*resolve(args), **resolve(kwargs))
            finally:
                self.building = False
            from .release import flush_allocators
            flush_allocators()

        def builder():
            factory.building = True
            try:
                with preserved_rng(state0 is not None):
                    if state0 is not None:
                        state0.restore()
                    return plan.attach(name, klass(*resolve(args), **resolve(kwargs)))
            finally:
                factory.building = False
        stage = plan.stage_of.get(name)
        probe.register(name, builder, [stage] if stage else (), record=True, cls=klass)
        return PlanModel(probe, name, plan)


def _known_class(spec):
    """The class a plan names, when its module is imported already (else None: a stand-in
    is an instance of it once it is built)."""
    if not spec:
        return None
    cls = fr.resolve(spec)
    return cls if isinstance(cls, type) else None


def _plain_new(orig_new, klass, args, kwargs):
    if orig_new is not None:
        return orig_new(klass, *args, **kwargs)
    return object.__new__(klass)


def install_plan(probe, models, stages, left=(), script=None, not_staged=()):
    """Install a plan (see the module's docstring); `left`: call sites that make
    models the plan leaves as they are ({"by", "at"}); `script`: the file it was learned
    from (plan_match.renamed); `not_staged`: the models the learning run could not stage
    ({"name", "class", "mb", "why"}), said in the report."""
    models, stages, left = pm.renamed(dict(models), list(stages), list(left), script)
    plan = Plan(probe, models, stages, left, script)
    for x in not_staged if probe.staged else ():
        probe.mark("%s%s (%s MB): %s" % (pm.NOTE_NOT_STAGED, x["name"], x.get("mb"), x["why"]))
    done = set()
    for name, m in plan.models.items():
        by = m["by"]
        if by in done:
            continue
        done.add(by)
        module = by.split(":", 1)[0]
        if _is_class_target(m):
            cf = ClassFactory(plan, by)
            probe.when_imported(module, cf.install, main=True,
                                needs=[by.split(":", 1)[1].split(".")[0]], optional=True)
        else:
            icp = PlanFactory(plan, by)
            probe.when_imported(module, functools.partial(_install_soft, plan, icp),
                                main=False, optional=True)
    if probe.staged:
        # a checkpoint read while the script sets itself up is read again when the
        # model that receives it (load_state_dict) is built, not kept for it
        from .core import _resolving_load_state_dict
        probe.when_imported("torch", _resolving_load_state_dict, main=False, optional=True)
        for target in LOADERS:
            icp = PlanLoader(probe, target)
            probe.when_imported(icp.module_name, functools.partial(_install_soft, plan, icp),
                                main=False, optional=True)
    for s in plan.stages:
        if s.get("enter"):
            mod, _, qual = s["enter"].partition(":")
            owner_path, _, meth = qual.rpartition(".")
            probe.when_imported(mod, functools.partial(_hook_stage, plan, s, owner_path, meth),
                                main=True, needs=[qual.split(".")[0]], optional=True)
    import atexit
    atexit.register(plan.report)
    probe.plan = plan
    return plan


def _is_class_target(m):
    return m["by"] == m.get("class") and "part" not in m


def _install_soft(plan, icp, module):
    try:
        icp.install(module)
    except Exception as e:
        text = "plan: %s is not there any more (%s): its models are made as written" % (
            icp.target, e)
        plan.probe.mark(text)
        sys.stderr.write("stagebench_probe: %s\n" % text)


def _hook_stage(plan, s, owner_path, meth, module):
    owner = module
    for part in owner_path.split(".") if owner_path else ():
        owner = getattr(owner, part, None)
    if owner is None or not callable(getattr(owner, meth, None)):
        text = "plan: stage %s: %s is not there any more; the stage starts at its models' " \
               "first use" % (s["name"], s["enter"])
        plan.probe.mark(text)
        sys.stderr.write("stagebench_probe: %s\n" % text)
        return
    plan.probe.on_call(owner, meth, lambda *a, **k: plan.enter(s["name"]) or None,
                       optional=True)
