"""Stand-in for transformers: Qwen3VLForConditionalGeneration and AutoConfig."""
import json
import os

import torch
from torch import nn


def note(line):
    log = os.environ.get("QWEN_STANDIN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(line + "\n")


class PretrainedConfig:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class AutoConfig:
    @staticmethod
    def from_pretrained(path, subfolder=None):
        with open(os.path.join(path, subfolder or "", "config.json")) as f:
            return PretrainedConfig(**json.load(f))


class PreTrainedModel(nn.Module):
    @classmethod
    def from_pretrained(cls, path, subfolder=None, torch_dtype=None):
        note("build %s" % subfolder)
        config = AutoConfig.from_pretrained(path, subfolder)
        model = cls(config)
        model.load_state_dict(torch.load(os.path.join(path, subfolder, "weights.pt")))
        return model.to(torch_dtype) if torch_dtype is not None else model


class Qwen3VLForConditionalGeneration(PreTrainedModel):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x):
        return self.embed(x)
