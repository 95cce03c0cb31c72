"""adapter.py -- stages Qwen-Image through diffusers (driven by run.py) for stagebench.

Both pipeline classes of the same shape are handled: QwenImage21Pipeline (Qwen3-VL text encoder,
QwenImage21Transformer2DModel) and QwenImagePipeline (Qwen2.5-VL, QwenImageTransformer2DModel).
The adapter hooks DiffusionPipeline.from_pretrained (stage setup) and, at the first call for one
of those classes, that class's stages: encode before encode_prompt, denoise before
prepare_latents, decode before _unpack_latents (its result is fingerprinted as `latents`, the
latents before the VAE decode); the VAE's decode output is fingerprinted as `image`. A
from_pretrained of any other class is left alone (a staged run then fails: nothing deferred).

Eager and offload load the diffusers way; the two big components' from_pretrained calls are
reported as load events.

Staged (STAGEBENCH_STAGED=1): from_pretrained is called with text_encoder=None and
transformer=None (the VAE, processor/tokenizer and scheduler load and stay resident); lazy
stand-ins take their place, set with object.__setattr__ (around the pipeline's own __setattr__,
which registers components). A stand-in answers .config from the component's config without
loading it (diffusers reads it early), refuses private attributes (hasattr(m, "_hf_hook") stays
cheap and false) and, for a model whose config names no quantization, the attributes diffusers'
bitsandbytes check reads in pipe.to() (is_loaded_in_4bit, is_loaded_in_8bit,
quantization_method), and builds the model with the component class's own from_pretrained (same
directory, subfolder, dtype keyword as the user's call) on the device pipe.to() was given, on any
other use. Plan: encode needs text_encoder, denoise transformer, decode nothing.
"""
import functools
import importlib
import inspect

from stagebench_probe import LazyModel
# what diffusers reads on every component in pipe.to(), and its config dict: the probe's own
# zero-adapter stand-ins answer them the same way
from stagebench_probe.components import QUANT_ATTRS, Config as _Config, quantized as _quantized

# pipeline class -> component -> (module, class, stages); and the class of its VAE
PIPELINES = {
    "QwenImage21Pipeline": {
        "text_encoder": ("transformers", "Qwen3VLForConditionalGeneration", ["encode"]),
        "transformer": ("diffusers", "QwenImage21Transformer2DModel", ["denoise"]),
    },
    "QwenImagePipeline": {
        "text_encoder": ("transformers", "Qwen2_5_VLForConditionalGeneration", ["encode"]),
        "transformer": ("diffusers", "QwenImageTransformer2DModel", ["denoise"]),
    },
}
VAES = {"QwenImage21Pipeline": "AutoencoderKLQwenImage21",
        "QwenImagePipeline": "AutoencoderKLQwenImage"}


class Component(LazyModel):
    """A lazy component: .config without loading, no private attributes, no quantization."""

    __slots__ = ("_sb_config", "_sb_config_fn")

    def __init__(self, probe, name, config_fn):
        LazyModel.__init__(self, probe, name)
        object.__setattr__(self, "_sb_config", None)
        object.__setattr__(self, "_sb_config_fn", config_fn)

    @property
    def __class__(self):
        # not a torch.nn.Module for diffusers (its device, dtype and offload checks would
        # load every component they look at)
        return type(self)

    def __getattr__(self, attr):
        if attr == "config":
            if self._sb_config is None:
                object.__setattr__(self, "_sb_config", self._sb_config_fn())
            return self._sb_config
        if attr.startswith("_"):
            raise AttributeError(attr)
        if attr in QUANT_ATTRS and not _quantized(self.config):
            raise AttributeError(attr)
        return LazyModel.__getattr__(self, attr)


def install(probe):
    probe.when_imported("diffusers", functools.partial(_patch, probe))


def _patch(probe, diffusers):
    base = diffusers.DiffusionPipeline
    probe.on_call(base, "from_pretrained", "setup")
    raw = inspect.getattr_static(base, "from_pretrained")
    orig = raw.__func__ if isinstance(raw, classmethod) else raw
    hooked = set()
    state = {"device": None}

    def from_pretrained(klass, path, *args, **kwargs):
        comps = PIPELINES.get(klass.__name__)
        if comps is None:
            return orig(klass, path, *args, **kwargs)
        if klass not in hooked:
            hooked.add(klass)
            _hook_stages(probe, diffusers, klass, state)
            if not probe.staged:  # eager, offload: the components' loads are reported
                for name, (module, cls, _) in comps.items():
                    probe.defer("%s:%s.from_pretrained" % (module, cls), name=name)
        if not probe.staged:
            return orig(klass, path, *args, **kwargs)
        return _staged_from_pretrained(probe, orig, klass, path, args, kwargs, comps, state)
    base.from_pretrained = classmethod(functools.wraps(orig)(from_pretrained))


def _hook_stages(probe, diffusers, cls, state):
    probe.on_call(cls, "encode_prompt", "encode")
    probe.on_call(cls, "prepare_latents", "denoise")
    probe.on_call(cls, "_unpack_latents", "decode", outputs="latents")
    probe.on_call(getattr(diffusers, VAES[cls.__name__]), "decode", "decode", outputs=_image)
    if probe.staged:
        orig_to = cls.to

        @functools.wraps(orig_to)
        def to(self, *args, **kwargs):
            device = kwargs.get("device", args[0] if args else None)
            if device is not None:
                state["device"] = device
            return orig_to(self, *args, **kwargs)
        cls.to = to


def _image(result):
    """The VAE decode's output tensor (a DecoderOutput, or a tuple with return_dict=False)."""
    return {"image": result[0] if isinstance(result, (tuple, list)) else result.sample}


def _staged_from_pretrained(probe, orig, klass, path, args, kwargs, comps, state):
    for name in comps:
        kwargs[name] = None
    pipe = orig(klass, path, *args, **kwargs)
    dtype = {k: kwargs[k] for k in ("torch_dtype", "dtype") if k in kwargs}
    for name, (module, clsname, stages) in comps.items():
        probe.register(name, functools.partial(_build, module, clsname, path, name, dtype,
                                               state), stages)
        object.__setattr__(pipe, name, Component(probe, name,
                                                 _config_fn(module, clsname, path, name)))
    return pipe


def _config_fn(module, clsname, path, name):
    def read():
        comp = getattr(importlib.import_module(module), clsname)
        if module == "transformers":
            return importlib.import_module("transformers").AutoConfig.from_pretrained(
                path, subfolder=name)
        return _Config(comp.load_config(path, subfolder=name))
    return read


def _build(module, clsname, path, name, dtype, state):
    comp = getattr(importlib.import_module(module), clsname)
    model = comp.from_pretrained(path, subfolder=name, **dtype)
    return model.to(state["device"]) if state["device"] is not None else model
