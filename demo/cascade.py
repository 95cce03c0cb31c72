"""cascade.py -- a stand-in image-to-3D pipeline shaped like Pixal3D's 1024_cascade.

Written like a third-party pipeline: it knows nothing of stagebench. It builds
every model up front (random init, then the checkpoint), seeds once when it
runs and draws every stage's noise from the torch CPU generator. With
low_vram=True each stage works on a copy of its model, as a port that moves
the active model "to the device" does on unified memory.
"""
import contextlib
import copy
import math
import os
import time
import zlib

import numpy as np
import torch
from torch import nn

SIZES = {"tiny": 0.0005, "small": 0.02, "default": 1.0, "large": 4.0}

# Megabytes of float32 weights at size 1.0 (the default).
MODEL_MB = {
    "rembg_model": 75,
    "image_cond_backbone": 225,
    "image_cond_head": 6,
    "camera_estimator": 75,
    "sparse_structure_flow_model": 190,
    "sparse_structure_decoder": 45,
    "shape_slat_flow_model_512": 300,
    "shape_slat_decoder": 110,
    "shape_slat_flow_model_1024": 300,
    "tex_slat_flow_model_1024": 300,
    "tex_slat_decoder": 110,
}
PIPELINE_MODELS = [
    "rembg_model", "camera_estimator",
    "sparse_structure_flow_model", "sparse_structure_decoder",
    "shape_slat_flow_model_512", "shape_slat_decoder",
    "shape_slat_flow_model_1024", "tex_slat_flow_model_1024", "tex_slat_decoder",
]
IMAGE_COND_MODELS = ["image_cond_dinov2", "image_cond_dinov2_reg",
                     "image_cond_depth", "image_cond_normal"]

CHANNELS = 64   # width of every latent token
TOKENS = 16     # tokens per latent
HIDDEN = 4      # hidden layers per model
STEPS = 4       # sampler steps per flow model


def parse_size(text):
    if text in SIZES:
        return SIZES[text]
    try:
        scale = float(text)
    except ValueError:
        raise ValueError("size must be one of %s or a positive number, not %r"
                         % ("|".join(SIZES), text)) from None
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError("size must be a positive number, not %r" % text)
    return scale


def width_for(megabytes, scale):
    """Hidden width whose HIDDEN square layers hold megabytes*scale MB."""
    return max(8, int(math.sqrt(megabytes * scale * 1e6 / (4 * HIDDEN))))


class MLP(nn.Module):
    """CHANNELS -> width -> (HIDDEN square layers) -> CHANNELS, on the mean token
    (one row: the weights are read once per call, which keeps the compute small
    next to the memory), plus a residual so every token keeps its own value."""

    def __init__(self, width, out=CHANNELS):
        super().__init__()
        self.inp = nn.Linear(CHANNELS, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(HIDDEN))
        self.out = nn.Linear(width, out)

    def forward(self, x):
        h = torch.tanh(self.inp(x.mean(0, keepdim=True)))
        for layer in self.hidden:
            h = torch.tanh(layer(h))
        return self.out(h) + 0.5 * x


class FlowModel(MLP):
    def forward(self, x, cond):
        return super().forward(x + cond)


class FeatureExtractor(nn.Module):
    def __init__(self, backbone, head_width):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Sequential(nn.Linear(CHANNELS, head_width), nn.Tanh(),
                                  nn.Linear(head_width, CHANNELS))

    def forward(self, image):
        return self.head(self.backbone(image))


def default_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "stagebench-demo")


def test_image():
    """The input: a fixed pattern (no randomness), TOKENS x CHANNELS."""
    i = torch.arange(TOKENS, dtype=torch.float32).unsqueeze(1)
    j = torch.arange(CHANNELS, dtype=torch.float32).unsqueeze(0)
    return torch.sin(0.3 * i + 0.17 * j) * torch.cos(0.05 * i * j)


class Cascade1024Pipeline:
    def __init__(self, scale=1.0, cache=None, device="cpu", low_vram=True, log=print):
        self.scale = scale
        self.cache = cache or default_cache()
        self.device = torch.device(device)
        self.low_vram = low_vram
        self.log = log
        self.models = {}

    # -- checkpoints ------------------------------------------------------------
    def _make(self, kind):
        w = width_for(MODEL_MB[kind], self.scale)
        if kind == "image_cond_backbone":
            return MLP(w)
        if kind == "image_cond_head":
            return FeatureExtractor(nn.Identity(), max(8, w // 4)).head
        if "flow" in kind:
            return FlowModel(w)
        return MLP(w)

    def _checkpoint(self, ckpt):
        """Path of a checkpoint, written once (atomically) on first use."""
        kind = "image_cond_head" if ckpt.startswith("image_cond_") and ckpt != \
            "image_cond_backbone" else ckpt
        # the width in the name: a checkpoint of another size is never read
        path = os.path.join(self.cache, "%s-w%d.pt" % (ckpt, width_for(MODEL_MB[kind], self.scale)))
        if os.path.exists(path):
            return path
        os.makedirs(self.cache, exist_ok=True)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(zlib.crc32(ckpt.encode()))
            state = self._make(kind).state_dict()
        tmp = "%s.tmp%d" % (path, os.getpid())
        torch.save(state, tmp)
        os.replace(tmp, path)
        return path

    def _load_state(self, module, ckpt):
        state = torch.load(self._checkpoint(ckpt), map_location="cpu")
        module.load_state_dict(state)
        del state
        return module.to(self.device).eval()

    def _load_model(self, name):
        # Random init first (draws from the CPU generator), then the weights.
        return self._load_state(self._make(name), name)

    def _load_backbone(self):
        return self._load_state(self._make("image_cond_backbone"), "image_cond_backbone")

    def _load_extractor(self, name, backbone=None):
        if backbone is None:
            backbone = self._load_backbone()
        head = self._load_state(self._make("image_cond_head"), name)
        ex = FeatureExtractor(backbone, head[0].out_features)
        ex.head = head
        return ex.to(self.device).eval()

    def load_models(self):
        """Build every model now; each feature extractor loads its own backbone."""
        t0 = time.perf_counter()
        for name in PIPELINE_MODELS:
            self.models[name] = self._load_model(name)
        for name in IMAGE_COND_MODELS:
            self.models[name] = self._load_extractor(name)
        self.log("setup: %d models in %.2f s" % (len(self.models), time.perf_counter() - t0))

    @contextlib.contextmanager
    def _active(self, name):
        """The model a stage runs; in low-VRAM mode a copy moved to the device."""
        model = self.models[name]
        if self.low_vram:
            model = copy.deepcopy(model).to(self.device)
        try:
            yield model
        finally:
            del model

    # -- stages -------------------------------------------------------------------
    def _sample(self, model, x, cond):
        for _ in range(STEPS):
            x = x - model(x, cond) / STEPS
        return x

    def _noise(self):
        return torch.randn(TOKENS, CHANNELS).to(self.device)

    @torch.no_grad()
    def preprocess_image(self, image):
        with self._active("rembg_model") as rembg:
            mask = torch.sigmoid(rembg(image.to(self.device)))
        return image.to(self.device) * mask + 1e-3 * self._noise()

    @torch.no_grad()
    def get_cond(self, image):
        feats = []
        for name in IMAGE_COND_MODELS:
            with self._active(name) as ex:
                feats.append(ex(image))
        return torch.stack(feats).mean(0)

    @torch.no_grad()
    def estimate_camera(self, cond):
        with self._active("camera_estimator") as cam:
            return cam(cond + 0.1 * self._noise())

    @torch.no_grad()
    def sample_sparse_structure(self, cond, camera):
        with self._active("sparse_structure_flow_model") as flow:
            x = self._sample(flow, self._noise(), cond + camera)
        with self._active("sparse_structure_decoder") as dec:
            return torch.tanh(dec(x))

    @torch.no_grad()
    def sample_shape_slat(self, cond, init, resolution=512):
        name = "shape_slat_flow_model_%d" % resolution
        with self._active(name) as flow:
            x = self._sample(flow, init + self._noise(), cond)
        if resolution == 512:
            # the cascade decodes the coarse shape to seed the fine one
            with self._active("shape_slat_decoder") as dec:
                x = dec(x)
            return x
        return x.half()

    @torch.no_grad()
    def sample_tex_slat(self, cond, shape):
        with self._active("tex_slat_flow_model_1024") as flow:
            x = self._sample(flow, self._noise(), cond + shape.float())
        return x.to(torch.bfloat16)

    @torch.no_grad()
    def decode_slat(self, shape, tex):
        with self._active("shape_slat_decoder") as dec:
            vertices = dec(shape.float())
        with self._active("tex_slat_decoder") as dec:
            colors = torch.sigmoid(dec(tex.float()))
        return vertices, colors

    def export(self, mesh, out_dir):
        vertices, colors = mesh
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, "mesh.npz")
        np.savez(path, vertices=vertices.cpu().numpy(), colors=colors.cpu().numpy())
        return path

    def run(self, seed, out_dir):
        torch.manual_seed(seed)
        t = time.perf_counter()
        image = self.preprocess_image(test_image())
        cond = self.get_cond(image)
        t = self._step("preprocess", t)
        camera = self.estimate_camera(cond)
        t = self._step("camera", t)
        coords = self.sample_sparse_structure(cond, camera)
        t = self._step("structure", t)
        shape = self.sample_shape_slat(cond, coords, resolution=512)
        t = self._step("shape_512", t)
        shape = self.sample_shape_slat(cond, shape, resolution=1024)
        t = self._step("shape_1024", t)
        tex = self.sample_tex_slat(cond, shape)
        t = self._step("texture", t)
        mesh = self.decode_slat(shape, tex)
        t = self._step("decode", t)
        path = self.export(mesh, out_dir)
        self._step("export", t)
        return path

    def _step(self, what, t0):
        t = time.perf_counter()
        self.log("%s: %.2f s" % (what, t - t0))
        return t
