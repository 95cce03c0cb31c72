"""plan_model.py -- the stand-in of a staged model of a plan, the base of a diffusers
component's stand-in (components.py); plan.py makes them for the models a plan stages.
"""
from .core import LazyModel


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
                plan.keep(self._sb_name)
            else:
                plan.use(self._sb_name)
        return LazyModel._sb_module(self)

    def __getattr__(self, attr):
        if attr in self._sb_plan.models[self._sb_name].get("uses", ()):
            self._sb_plan.use(self._sb_name)
        return LazyModel.__getattr__(self, attr)
