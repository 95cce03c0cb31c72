"""learn.py -- learn a staging plan from one eager run (STAGEBENCH_LEARN=FILE).

The run goes as written; the learner watches it:

- births: every torch.nn.Module constructed outside another module's constructor, with the
  call that made it: the call site (the first frame in the script's own code) and the call
  it made there (the factory: a function, a classmethod such as from_pretrained, a class);
- the factory's result (a sys.setprofile watch, on only while such a call runs): a module
  (that is the model), a diffusers pipeline (its components are the models), or anything
  else (its models cannot be staged: the plan says so);
- uses: every call into a model from outside it (global forward pre-hooks), with the
  model's method that was entered (__call__, decode, ...) and the functions on the stack.

At exit, plan.write() turns what was seen into FILE, a plan the user can read and edit.
"""
import atexit
import os
import sys
import threading
import weakref

from . import frames as fr
from .rng import fingerprint

_NAME_FRAMES = 8  # how far out from a model's call its name is looked for
_CALL_NAMES = {"_call_impl": "__call__", "_wrapped_call_impl": "__call__",
               "forward": "__call__", "__call__": "__call__"}


class Birth:
    """A module made outside another module's constructor."""

    def __init__(self, learner, module, site, factory, index):
        self.ref = weakref.ref(module)
        self.mid = id(module)
        self.site = site  # (file, line, function) in the script
        self.factory = factory  # {"by": "mod:qual", "kind": ..., "on": "mod:Class"} or None
        self.index = index  # order of birth
        self.call = None  # the FactoryCall it was made in
        self.part = None  # the attribute of a diffusers pipeline it is
        self.why_not = None  # why it cannot be staged
        self.result = False  # the factory returned it
        self.cls = class_id(type(module))
        self.nbytes = None
        self.device = self.dtype = None  # where its weights were at its first use
        self.names = []  # names seen for it: attributes, variables
        self.methods = []  # entry methods, in order of first use
        self.sub_ids = set()
        self.copies = []  # weakrefs to deep copies of it (a low-VRAM stage runs a copy)
        self.root_ids = {self.mid}
        # whether making it drew random numbers (None: not known): a staged run replays
        # the draws of a deferred model only where the learning run saw them
        self.draws = None
        self.rng_before = None


class FactoryCall:
    def __init__(self, frame, site, factory):
        self.frame = frame
        self.site = site
        self.factory = factory
        self.births = []
        self.rng_before = None  # the generators when its first model's constructor began


class Learner:
    def __init__(self, probe, path):
        self.probe = probe
        self.path = path
        self.births = []
        self.open = {}  # id(frame) -> FactoryCall
        self.pending = []  # models made since the generators were last looked at
        self.calls = []
        self.uses = []  # [birth, method, callers (func ids), count]
        self.tl = threading.local()
        self.gen = 0
        self.mapped = -1
        self.root_map = {}
        self.misses = set()
        self.started = False
        self.torch = None
        self.results = []  # (site, factory, what): factory results that are not models

    # -- births ---------------------------------------------------------------
    def install(self, torch):
        self.torch = torch
        cls = torch.nn.Module
        orig = cls.__init__
        learner = self

        def __init__(module, *args, **kwargs):
            orig(module, *args, **kwargs)
            try:
                learner.born(module, sys._getframe(1))
            except Exception as e:  # the learner must never break the run
                learner.note("birth: %s: %s" % (type(e).__name__, e))
        __init__.__wrapped__ = orig
        cls.__init__ = __init__
        import copy
        orig_deepcopy = copy.deepcopy

        def deepcopy(x, memo=None, _nil=[]):  # noqa: B006 (copy.deepcopy's own signature)
            y = orig_deepcopy(x, memo)
            if isinstance(x, cls) and y is not x:
                learner.copied(x, y)
            return y
        deepcopy.__wrapped__ = orig_deepcopy
        copy.deepcopy = deepcopy
        mm = torch.nn.modules.module
        mm.register_module_forward_pre_hook(self.pre_hook)
        try:
            mm.register_module_forward_hook(self.post_hook, always_call=True)
        except TypeError:  # torch 1.x: no always_call
            mm.register_module_forward_hook(self.post_hook)

    def note(self, text):
        self.probe.mark("learn: " + text)

    def rng_now(self):
        """The generators' fingerprint (rng.fingerprint), or None when it cannot be read."""
        try:
            return fingerprint()
        except Exception as e:
            self.note("rng: %s: %s" % (type(e).__name__, e))
            return None

    def born(self, module, frame):
        """module is being made: nn.Module.__init__ returned to frame (its class's own
        constructor, which goes on to make its parts, or the caller)."""
        if getattr(self.tl, "active", None) is not None:
            return  # made while a model runs: part of its work, not a model
        f = frame
        while f is not None and f.f_code.co_name == "__init__" \
                and f.f_locals.get("self") is module:
            f = f.f_back  # the module's own constructors
        caller = f
        for g in fr.outward(caller):
            if g.f_code.co_name == "__init__" and isinstance(g.f_locals.get("self"),
                                                               self.torch.nn.Module):
                return  # inside another module's constructor: a part of it
        site, callee = fr.site_of(caller)
        if site is None:
            return
        factory, fframe = self._factory(module, caller, callee)
        b = Birth(self, module, site, factory, len(self.births))
        self.births.append(b)
        self.gen += 1
        self.drawn()  # the models before it are made
        b.rng_before = self.rng_now()
        self.pending.append(b)
        if fframe is not None:
            self._watch(b, fframe)

    def _factory(self, module, caller, callee):
        """(factory, its frame) for a module whose constructors were called from `caller`;
        `callee` is the frame just inside the first user frame (None: the user called
        the class)."""
        if callee is None:
            return {"by": class_id(type(module)), "kind": "class"}, None
        chain = []
        for g in fr.outward(caller):
            chain.append(g)
            if g is callee:
                break
        for g in reversed(chain):  # from the call the script made, inward
            qn = fr.qualname(g.f_code)
            if "<" in qn:
                continue
            target = fr.func_id(g)
            obj = fr.resolve(target)
            if obj is None or g.f_code not in fr.codes_of(obj):
                continue
            factory = {"by": target, "kind": "function"}
            cls = g.f_locals.get("cls")
            if isinstance(cls, type) and "." in qn:
                factory["kind"] = "classmethod"
                factory["on"] = class_id(cls)
            return factory, g
        return None, None

    def drawn(self):
        """The models made since the last look: whether the generators moved since each
        began (its constructor, and whatever the script did before this look: a draw
        there only makes a staged run replay a model it need not)."""
        if not self.pending:
            return
        now = self.rng_now()
        for b in self.pending:
            if b.rng_before is not None and now is not None:
                b.draws = bool(b.draws) or now != b.rng_before
        self.pending = []

    def _watch(self, birth, frame):
        call = self.open.get(id(frame))
        if call is None or call.frame is not frame:
            call = self.open[id(frame)] = FactoryCall(frame, birth.site, birth.factory)
            self.calls.append(call)
            if len(self.open) == 1:
                if sys.getprofile() is not None:
                    birth.why_not = "another profiler is on, so the call's result was not seen"
                else:
                    sys.setprofile(self._profile)
        call.births.append(birth)
        birth.call = call
        if call.rng_before is None:
            call.rng_before = getattr(birth, "rng_before", None)

    def _profile(self, frame, event, arg):
        if event != "return":
            return
        call = self.open.get(id(frame))
        if call is None or call.frame is not frame:
            return
        del self.open[id(frame)]
        call.frame = None
        if not self.open:
            sys.setprofile(None)
        try:
            self._result(call, arg)
        except Exception as e:
            self.note("result: %s: %s" % (type(e).__name__, e))

    def _result(self, call, value):
        self.drawn()
        if call.rng_before is not None:
            # the call drew from a generator after its first model's constructor began
            # (random init, or weights a checkpoint lacks initialised after loading)
            draws = self.rng_now() != call.rng_before
            for b in call.births:
                b.draws = b.draws or draws
        by_id = {b.mid: b for b in call.births if b.ref() is not None}
        if isinstance(value, self.torch.nn.Module):
            b = by_id.get(id(value))
            if b is not None:
                b.result = True
            return
        comps = getattr(value, "components", None)
        if isinstance(comps, dict) and _is_diffusers_pipeline(value):
            for name, comp in comps.items():
                b = by_id.get(id(comp))
                if b is not None:
                    b.part = name
            return
        what = type(value).__name__
        for b in call.births:
            b.why_not = ("made inside %s, which returns a %s: only a call that returns "
                         "the model, or a diffusers pipeline, can be staged"
                         % (call.factory["by"] if call.factory else "?", what))

    def copied(self, x, y):
        """y is a deep copy of x: when x is a model, a use of y is a use of it."""
        b = self._roots().get(id(x))
        if b is not None and id(x) in b.root_ids:
            b.copies.append(weakref.ref(y))
            self.gen += 1

    # -- uses -----------------------------------------------------------------
    def _roots(self):
        """id(module) -> Birth of the outermost model holding it."""
        if self.mapped == self.gen:
            return self.root_map
        live = [(b, b.ref()) for b in self.births]
        live = [(b, m) for b, m in live if m is not None]
        sized = []
        for b, m in live:
            b.sub_ids = {id(s) for s in m.modules()}
            b.root_ids = {b.mid}
            for ref in b.copies:
                c = ref()
                if c is not None:
                    b.root_ids.add(id(c))
                    b.sub_ids.update(id(s) for s in c.modules())
            sized.append((len(b.sub_ids), b))
        sized.sort(key=lambda t: (-t[0], t[1].index))
        root_map = {}
        for _, b in sized:
            if b.mid in root_map:
                continue
            for i in b.sub_ids:
                root_map.setdefault(i, b)
        self.root_map = root_map
        self.mapped = self.gen
        self.misses.clear()
        return root_map

    def pre_hook(self, module, inputs):
        if getattr(self.tl, "active", None) is not None:
            return
        mid = id(module)
        if mid in self.misses and self.mapped == self.gen:
            return
        b = self._roots().get(mid)
        if b is None:
            self.misses.add(mid)
            return
        self.tl.active = module
        try:
            self._use(b, sys._getframe(1))
        except Exception as e:
            self.note("use: %s: %s" % (type(e).__name__, e))

    def post_hook(self, module, inputs, output):
        if getattr(self.tl, "active", None) is module:
            self.tl.active = None

    def _use(self, b, frame):
        self.drawn()
        root = b.ref()
        if root is None:  # only a copy of it is alive
            root = next((c for c in (r() for r in b.copies) if c is not None), None)
        method = None
        f = frame
        last_inside = None
        while f is not None:
            s = f.f_locals.get("self")
            inside = s is not None and id(s) in b.sub_ids
            if not inside and f.f_code.co_filename != __file__ \
                    and not f.f_code.co_filename.endswith(os.path.join("nn", "modules",
                                                                       "module.py")):
                break
            if inside and id(s) in b.root_ids:
                name = f.f_code.co_name
                name = _CALL_NAMES.get(name, name)
                if name == "__call__" or (not name.startswith("_")
                                          and hasattr(type(root), name)):
                    method = name
            last_inside = f
            f = f.f_back
        method = method or "__call__"
        callers = []
        first = f
        for g in fr.outward(f):
            if g.f_code.co_name == "<module>":
                break
            callers.append(fr.func_id(g))
        if b.nbytes is None:
            from .release import module_nbytes
            b.nbytes = module_nbytes(root)
            b.device, b.dtype = _placement(root)
        if method not in b.methods:
            b.methods.append(method)
        # the first frame outside the model that names it: a wrapper's (torch.no_grad's
        # decorate_context around generate(), a functools.wraps decorator) names nothing
        for g, _ in zip(fr.outward(first), range(_NAME_FRAMES)):
            if self._names(b, g):
                break
        last = self.uses[-1] if self.uses else None
        if last is not None and last[0] is b and last[1] == method and last[2] == callers:
            last[3] += 1
        else:
            self.uses.append([b, method, callers, 1])
        del last_inside

    def _names(self, b, frame):
        """Names seen for the model where it is used: an attribute of the object that
        holds it (or a key of a dict attribute), a variable of the calling function."""
        if frame is None or len(b.names) >= 4:
            return True
        before = len(b.names)
        ids = b.root_ids | {b.mid}
        loc = frame.f_locals
        holder = loc.get("self")
        if holder is not None and not isinstance(holder, self.torch.nn.Module):
            for k, v in list(getattr(holder, "__dict__", {}).items()):
                if id(v) in ids and not k.startswith("_") and k not in b.names:
                    b.names.append(k)
                elif isinstance(v, dict):
                    for kk, vv in list(v.items()):
                        if id(vv) in ids and isinstance(kk, str) and kk not in b.names:
                            b.names.append(kk)
        for k, v in list(loc.items()):
            if id(v) in ids and k != "self" and not k.startswith("_") and k not in b.names:
                b.names.append(k)
        return len(b.names) > before or any(id(v) in ids for v in loc.values())

    # -- the end --------------------------------------------------------------
    def finish(self):
        if sys.getprofile() == self._profile:
            sys.setprofile(None)
        self.drawn()
        from . import plan
        if getattr(sys, "last_type", None) is not None:  # an uncaught exception ended it
            self.note("no plan written: the run failed")
            sys.stderr.write("stagebench_probe: learn: no plan written: the run failed\n")
            return
        try:
            text, summary = plan.write(self)
        except Exception as e:
            import traceback
            traceback.print_exc()
            sys.stderr.write("stagebench_probe: learn: cannot write the plan: %s\n" % e)
            return
        if summary[0].startswith("0 model(s)"):
            for line in ["no plan written: the run used no model that can be staged"] + summary[1:]:
                self.note(line)
                sys.stderr.write("stagebench_probe: learn: %s\n" % line)
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.path)
        for line in summary:
            self.note(line)
            sys.stderr.write("stagebench_probe: learn: %s\n" % line)


def _placement(module):
    """(device, dtype) of a module as text ("cpu", "bfloat16"), or (None, None): its own
    .device and .dtype where its class has them (a diffusers or transformers model: its
    dtype skips the parameters kept in float32), else its first parameter's or buffer's."""
    for t in module.parameters():
        break
    else:
        t = next(module.buffers(), None)
    if t is None:
        return None, None
    device, dtype = t.device, t.dtype
    for attr in ("device", "dtype"):
        if isinstance(getattr(type(module), attr, None), property):
            try:
                v = getattr(module, attr)
            except Exception:
                continue
            if attr == "dtype" and v.__class__.__name__ == "dtype":
                dtype = v
            elif attr == "device" and v.__class__.__name__ == "device":
                device = v
    return str(device), str(dtype).replace("torch.", "")


def class_id(cls):
    """'module:Qual.Name' of a class; a class of the main script by the script's stem."""
    mod = cls.__module__
    if mod == "__main__":
        main = sys.modules.get("__main__")
        mod = fr.module_of_globals(getattr(main, "__dict__", {}))
    return "%s:%s" % (mod, cls.__qualname__)


def _is_diffusers_pipeline(obj):
    return any(c.__name__ == "DiffusionPipeline" and c.__module__.startswith("diffusers")
               for c in type(obj).__mro__)


def install(probe, path):
    """Learn from this run; the plan is written to `path` at exit."""
    learner = Learner(probe, os.path.abspath(path))
    probe.when_imported("torch", learner.install, main=False)
    atexit.register(learner.finish)
    probe.learner = learner
    return learner
