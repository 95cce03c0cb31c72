"""components.py -- lazy stand-ins for the components of a diffusers pipeline.

A staged run gives DiffusionPipeline.from_pretrained a stand-in for each component the plan
defers (text_encoder=..., transformer=..., vae=...), so the pipeline's constructor runs with
every component in place. A stand-in answers, without loading the model:

- its class: while from_pretrained runs (`spoofing`), __class__ is the component's class, so
  diffusers' type check and its config registration see the real class and module; after
  it, the stand-in is not a torch.nn.Module for the pipeline (its device and dtype
  properties, its offload checks and pipe.to() then leave it alone: pipe.to(device) is
  recorded on it and replayed when it is built);
- .config, read from the component's own config file (diffusers: a dict read with
  attribute access; transformers: AutoConfig); for a diffusers model, an attribute named
  like a config key (ModelMixin answers those from its config too);
- private attributes (hasattr(m, "_hf_hook") stays false) and, when the config names no
  quantization, the attributes of diffusers' bitsandbytes check (is_loaded_in_4bit, ...).
Anything else builds the model: cls.from_pretrained(path, subfolder=NAME, dtype as given).
"""
import importlib

from .plan_model import PlanModel

QUANT_ATTRS = frozenset(("is_loaded_in_4bit", "is_loaded_in_8bit", "quantization_method"))


class Config(dict):
    """A diffusers config dict read with attribute access (as its FrozenDict)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def component_class(spec):
    """The class named 'module:Qual.Name'."""
    mod, _, qual = spec.partition(":")
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


class Component(PlanModel):
    """Base of the per-class stand-ins made by stand_in_class()."""

    __slots__ = ("_sb_config", "_sb_config_fn", "_sb_diffusers", "_sb_state")
    _sb_real = None  # the component's class (set on each subclass)

    def __init__(self, probe, name, plan, config_fn, diffusers_model):
        PlanModel.__init__(self, probe, name, plan)
        object.__setattr__(self, "_sb_config", None)
        object.__setattr__(self, "_sb_config_fn", config_fn)
        object.__setattr__(self, "_sb_diffusers", diffusers_model)
        object.__setattr__(self, "_sb_state", plan.state)

    @property
    def __class__(self):
        if self._sb_state.get("spoofing"):
            return type(self)._sb_real
        return type(self)

    def _sb_conf(self):
        if self._sb_config is None:
            object.__setattr__(self, "_sb_config", self._sb_config_fn())
        return self._sb_config

    def __getattr__(self, attr):
        if attr == "config":
            return self._sb_conf()
        if attr.startswith("_"):
            raise AttributeError(attr)
        if attr in QUANT_ATTRS and not quantized(self._sb_conf()):
            raise AttributeError(attr)
        if self._sb_diffusers and self._sb_probe._entries[self._sb_name].module is None:
            conf = self._sb_conf()
            if isinstance(conf, dict) and attr in conf:
                return conf[attr]
        return PlanModel.__getattr__(self, attr)


def stand_in_class(real):
    """A Component subclass that carries the real class's names (diffusers reads
    module.__module__ and __class__.__name__ when it registers a component)."""
    return type(real.__name__, (Component,), {"__module__": real.__module__, "__slots__": (),
                                              "__qualname__": real.__qualname__,
                                              "_sb_real": real})


def quantized(config):
    q = config.get("quantization_config") if isinstance(config, dict) else getattr(
        config, "quantization_config", None)
    return q is not None


def config_reader(real, path, part):
    def read():
        if real.__module__.startswith("transformers"):
            auto = importlib.import_module("transformers").AutoConfig
            return auto.from_pretrained(path, subfolder=part)
        return Config(real.load_config(path, subfolder=part))
    return read


LOAD_KWARGS = ("torch_dtype", "dtype", "variant", "revision", "cache_dir", "local_files_only",
               "use_safetensors", "token")


def load_kwargs(part, kwargs):
    """The keywords of the pipeline's from_pretrained that its component's takes too
    (a per-component torch_dtype dict gives the component's, or its "default")."""
    out = {}
    for k in LOAD_KWARGS:
        if k not in kwargs:
            continue
        v = kwargs[k]
        if k in ("torch_dtype", "dtype") and isinstance(v, dict):
            v = v.get(part, v.get("default"))
            if v is None:
                continue
        out[k] = v
    return out
