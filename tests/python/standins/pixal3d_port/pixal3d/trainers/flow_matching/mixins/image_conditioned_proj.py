"""The image-conditioning extractor: a DINOv3 backbone (from_pretrained, a classmethod it
inherits) and, for some, a NAF upsampler from _load_naf()."""
import torch
from torch import nn

from pixal3d.models import note

BACKBONES = []  # every DINOv3 built
NAFS = []


def _from_weights(module, seed):
    """Fixed weights, as read from a file (no draw from the global generator)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module


class PreTrainedModel(nn.Module):
    @classmethod
    def from_pretrained(cls, name):
        BACKBONES.append(name)
        note("backbone " + name)
        return _from_weights(cls(), 99)


class DINOv3ViTModel(PreTrainedModel):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        return self.proj(x)


class ImageCondProj(nn.Module):
    def __init__(self, config, device):
        super().__init__()
        self.backbone = DINOv3ViTModel.from_pretrained(config["backbone"])
        self.head = _from_weights(nn.Linear(16, 8), 7)
        if config.get("naf"):
            self.naf_model = self._load_naf()

    def _load_naf(self):
        NAFS.append(1)
        note("naf")
        return _from_weights(nn.Linear(8, 8), 8)

    def forward(self, image):
        out = self.head(self.backbone(image))
        if getattr(self, "naf_model", None) is not None:
            out = self.naf_model(out)
        return out
