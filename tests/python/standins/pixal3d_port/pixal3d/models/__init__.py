"""pixal3d.models: from_pretrained(path) reads one checkpoint (here: a tiny module).

Adversarial on purpose: the path is positional only (keyword arguments raise TypeError), the
module is built with a random init that draws from every global generator (torch CPU, Python
`random`, NumPy) before the checkpoint overwrites its weights, so a build in the middle of a run
shifts every later draw unless all three are saved and restored around it."""
import json
import os
import random

import numpy as np
import torch
from torch import nn

BUILT = []  # paths read, in order


class TinyModel(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Linear(width, width)  # random init: the torch CPU generator
        self.jitter = float(random.random() + np.random.rand())  # ... and the other two

    def forward(self, x):
        return self.net(x)

    def upsample(self, x):
        return torch.cat([self.net(x), x], dim=-1)


def note(line):
    """A line in $PIXAL3D_STANDIN_LOG: what the stand-in built, for the tests."""
    log = os.environ.get("PIXAL3D_STANDIN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(line + "\n")


def from_pretrained(path, /):
    BUILT.append(path)
    note("ckpt " + os.path.basename(path))
    with open(path + ".json") as f:
        width = json.load(f)["width"]
    model = TinyModel(width)
    model.load_state_dict(torch.load(path + ".pt"))
    return model


def write_checkpoint(path, width, seed):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.manual_seed(seed)
    torch.save(TinyModel(width).state_dict(), path + ".pt")
    with open(path + ".json", "w") as f:
        json.dump({"width": width}, f)
