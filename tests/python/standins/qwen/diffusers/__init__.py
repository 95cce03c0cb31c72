"""Stand-in for diffusers' QwenImage21Pipeline and its two models.

Modeled on the real library (diffusers 0.42): from_pretrained is DiffusionPipeline's classmethod
(the subclass inherits it); pipe.to() reads hasattr(module, "is_loaded_in_4bit") and
"is_loaded_in_8bit" on every component before it moves the nn.Modules (its bitsandbytes check),
so a stand-in that loads on any attribute would load there, at setup."""
import json
import os

import torch
from torch import nn

from transformers import Qwen3VLForConditionalGeneration, note


class FrozenDict(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class ModelMixin(nn.Module):
    @classmethod
    def load_config(cls, path, subfolder=None):
        with open(os.path.join(path, subfolder or "", "config.json")) as f:
            return json.load(f)

    @classmethod
    def from_pretrained(cls, path, subfolder=None, torch_dtype=None):
        note("build %s" % subfolder)
        model = cls(**cls.load_config(path, subfolder))
        model.load_state_dict(torch.load(os.path.join(path, subfolder, "weights.pt")))
        return model.to(torch_dtype) if torch_dtype is not None else model


class QwenImage21Transformer2DModel(ModelMixin):
    def __init__(self, in_channels):
        super().__init__()
        self.config = FrozenDict(in_channels=in_channels)
        self.proj = nn.Linear(in_channels, in_channels)

    def forward(self, x):
        return self.proj(x)


class DecoderOutput:
    def __init__(self, sample):
        self.sample = sample


class AutoencoderKLQwenImage21(ModelMixin):
    def __init__(self, latent_channels):
        super().__init__()
        self.config = FrozenDict(latent_channels=latent_channels)
        self.up = nn.Linear(latent_channels, 3)

    def decode(self, z):
        return DecoderOutput(self.up(z))


LIBRARIES = {"text_encoder": Qwen3VLForConditionalGeneration,
             "transformer": QwenImage21Transformer2DModel, "vae": AutoencoderKLQwenImage21}


class DiffusionPipeline:
    def register_modules(self, **modules):
        for name, module in modules.items():
            self._names = getattr(self, "_names", []) + [name]
            setattr(self, name, module)

    def __setattr__(self, name, value):
        # diffusers records each component's library and class in its config here
        if name in LIBRARIES and value is not None and not isinstance(value, nn.Module):
            raise TypeError("cannot register %r as %s: not a module" % (value, name))
        object.__setattr__(self, name, value)

    @property
    def components(self):
        return {n: getattr(self, n) for n in self._names}

    @classmethod
    def from_pretrained(cls, path, torch_dtype=None, **kwargs):
        with open(os.path.join(path, "model_index.json")) as f:
            index = json.load(f)
        parts = {}
        for name in index:
            if name in kwargs:
                parts[name] = kwargs[name]  # passed in (None: not loaded)
            else:
                parts[name] = LIBRARIES[name].from_pretrained(path, subfolder=name,
                                                             torch_dtype=torch_dtype)
        return cls(**parts)

    def to(self, device):
        for m in self.components.values():  # diffusers' _check_bnb_status, on every component
            if hasattr(m, "is_loaded_in_4bit") or hasattr(m, "is_loaded_in_8bit"):
                raise TypeError("a bitsandbytes model cannot be moved")
        for m in self.components.values():
            if isinstance(m, nn.Module):
                m.to(device)
        return self

    def enable_model_cpu_offload(self, device="cuda"):
        note("offload %s" % device)
        for m in self.components.values():
            if isinstance(m, nn.Module):
                m._hf_hook = device

    @property
    def _execution_device(self):
        for m in self.components.values():
            if not isinstance(m, nn.Module):
                continue
            if hasattr(m, "_hf_hook"):
                return torch.device("cpu")
            return next(m.parameters()).device
        return torch.device("cpu")


class PipelineOutput:
    def __init__(self, images):
        self.images = images


class QwenImage21Pipeline(DiffusionPipeline):
    def __init__(self, text_encoder, transformer, vae):
        self.register_modules(text_encoder=text_encoder, transformer=transformer, vae=vae)

    def encode_prompt(self, prompt, device=None):
        codes = torch.tensor([[(ord(c) % 7) / 7.0 for c in (prompt * 8)[:8]]])
        return self.text_encoder(codes)

    def prepare_latents(self, shape, generator):
        return torch.randn(*shape, generator=generator)

    @staticmethod
    def _unpack_latents(latents, height, width, vae_scale_factor):
        return latents.reshape(-1, latents.shape[-1])

    def __call__(self, prompt, width=1024, height=1024, num_inference_steps=20, generator=None):
        channels = self.transformer.config.in_channels  # read before anything is encoded
        device = self._execution_device
        emb = self.encode_prompt(prompt, device)
        latents = self.prepare_latents((1, height // 64, width // 64, channels), generator)
        for _ in range(num_inference_steps):
            latents = latents - 0.1 * self.transformer(latents + emb.mean())
        latents = self._unpack_latents(latents, height, width, 8)
        return PipelineOutput([self.vae.decode(latents).sample])
