"""The image-conditioning extractor: a DINOv3 backbone (DINOv3ViTModel.from_pretrained, a
classmethod it inherits) and, where the config sets `use_naf_upsample`, a NAF upsampler that
the port's init_pipeline loads by calling `_load_naf()`, which stores it on its own extractor as
`.naf_model` (its return value is ignored, and here it is None). Using an extractor that has
`use_naf_upsample` and no `.naf_model` raises the port's RuntimeError. An extractor is built
once from its config: the port's constructor cannot build a model again."""
import torch
from torch import nn

from pixal3d.models import note

BACKBONES = []  # every DINOv3 built
NAFS = []  # every NAF built
_BUILT_CONFIGS = set()  # id() of each config an extractor was built from

NAF_MISSING = ("use_naf_upsample is set but the NAF upsampler is not loaded; "
               "call _load_naf()")


def _from_weights(module, seed):
    """Fixed weights, as read from a file (no draw from the global generators)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module


class PreTrainedModel(nn.Module):
    @classmethod
    def from_pretrained(cls, name, **kwargs):
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
        if id(config) in _BUILT_CONFIGS:
            raise RuntimeError("an image-conditioning model was already built from this "
                               "config; the port's constructor cannot build it again")
        super().__init__()
        _BUILT_CONFIGS.add(id(config))
        self.use_naf_upsample = bool(config.get("use_naf_upsample"))
        self.backbone = DINOv3ViTModel.from_pretrained(config["backbone"])
        self.head = _from_weights(nn.Linear(16, 8), 7)
        self.to(device)

    def _load_naf(self):
        NAFS.append(self)
        note("naf")
        self.naf_model = _from_weights(nn.Linear(8, 8), 8).to(self.head.weight.device)

    def forward(self, image):
        out = self.head(self.backbone(image))
        if self.use_naf_upsample:
            naf = getattr(self, "naf_model", None)
            if naf is None:
                raise RuntimeError(NAF_MISSING)
            out = naf(out)
        return out
