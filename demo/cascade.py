"""cascade.py -- a stand-in image-to-3D pipeline shaped like Pixal3D's 1024_cascade.

Written like a third-party pipeline: it knows nothing of stagebench. It builds
every model up front, seeds once when it runs and draws every stage's noise
from the torch CPU generator. A model is built the way current pipelines build
one: its big weights are allocated without init, it draws its small learned
positional embedding from the CPU generator (as real models initialise their
tokens), and then its checkpoint, a safetensors file, is read straight into
the weights. With low_vram=True each stage works on a copy of its model, as a
port that moves the active model "to the device" does on unified memory.
"""
import contextlib
import copy
import ctypes
import json
import math
import mmap
import os
import struct
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

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
STEPS = 4       # sampler steps per flow model (pipeline.py --steps)


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


class Linear(nn.Linear):
    """nn.Linear whose weights are left uninitialised (torch.empty): the
    checkpoint supplies every value, so initialising them is wasted time (what
    torch.nn.utils.skip_init does, as a class: copy.deepcopy keeps working)."""

    def reset_parameters(self):
        pass


class MLP(nn.Module):
    """A learned positional embedding, then CHANNELS -> width -> (HIDDEN square
    layers) -> CHANNELS on the mean token (one row: the weights are read once
    per call, which keeps the compute small next to the memory), plus a residual
    so every token keeps its own value."""

    def __init__(self, width, out=CHANNELS):
        super().__init__()
        # Drawn from the CPU generator on construction, as real models draw their
        # tokens and embeddings; the checkpoint overwrites it.
        self.pos = nn.Parameter(0.02 * torch.randn(TOKENS, CHANNELS))
        self.inp = Linear(CHANNELS, width)
        self.hidden = nn.ModuleList(Linear(width, width) for _ in range(HIDDEN))
        self.out = Linear(width, out)

    def forward(self, x):
        x = x + self.pos
        h = torch.tanh(self.inp(x.mean(0, keepdim=True)))
        for layer in self.hidden:
            h = torch.tanh(layer(h))
        return self.out(h) + 0.5 * x


class FlowModel(MLP):
    def forward(self, x, cond):
        return super().forward(x + cond)


def make_head(width):
    return nn.Sequential(Linear(CHANNELS, width), nn.Tanh(), Linear(width, CHANNELS))


class FeatureExtractor(nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, image):
        return self.head(self.backbone(image))


# -- checkpoints: safetensors files ---------------------------------------------
# An 8-byte little-endian header length, a JSON header ({name: {"dtype", "shape",
# "data_offsets": [begin, end]}}, offsets into the data that follows; "__metadata__":
# strings), then the tensors' raw little-endian bytes, back to back.
CKPT_FORMAT = "stagebench-demo/2"  # in each file's __metadata__; bump with the layout
CKPT_SUFFIX = ".safetensors"
READ_CHUNK = 16 << 20  # bytes per read; the reads are spread over the threads
_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
           "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32,
           "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}
_DTYPE_NAMES = {v: k for k, v in _DTYPES.items()}


def _raw_bytes(t):
    """A writable byte view of a contiguous CPU tensor's memory (no copy)."""
    flat = t.detach().reshape(-1)
    if flat.dtype == torch.bfloat16:  # numpy has no bfloat16: same bytes as int16
        flat = flat.view(torch.int16)
    return memoryview(flat.numpy()).cast("B")


def save_checkpoint(state, path, metadata=None):
    """Write the tensors of `state` (name -> tensor) to `path` atomically (a
    temporary file in the same directory, then a rename)."""
    header, offset = {}, 0
    for name, t in state.items():
        n = t.numel() * t.element_size()
        header[name] = {"dtype": _DTYPE_NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = dict(metadata or {}, format=CKPT_FORMAT)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            for t in state.values():
                t = t.detach().contiguous().cpu()
                if sys.byteorder != "little" and t.element_size() > 1:
                    t = t.clone()
                    _raw_view(t).byteswap(inplace=True)
                f.write(_raw_bytes(t))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_header(f, path, size):
    head = f.read(8)
    if len(head) != 8:
        raise ValueError("%s: truncated checkpoint (no header)" % path)
    (n,) = struct.unpack("<Q", head)
    if n > size - 8:
        raise ValueError("%s: header length %d runs past the end of the file" % (path, n))
    try:
        header = json.loads(f.read(n))
    except ValueError as e:
        raise ValueError("%s: bad checkpoint header: %s" % (path, e)) from None
    if not isinstance(header, dict):
        raise ValueError("%s: bad checkpoint header: not an object" % path)
    return 8 + n, header


def load_checkpoint_into(module, path, threads=1):
    """Read the checkpoint at `path` straight into the parameters and buffers of
    `module` (CPU, contiguous; no pickle, no intermediate copy): each tensor's
    bytes go from the file into the tensor's own memory with pread, in
    READ_CHUNK pieces spread over `threads` threads, after advising huge pages
    for the large tensors (_advise_huge_pages). The file must hold exactly
    the module's state_dict keys with their dtypes and shapes (ValueError naming
    the file otherwise)."""
    state = module.state_dict()
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        base, header = _read_header(f, path, size)
        meta = header.pop("__metadata__", {})
        if meta.get("format") != CKPT_FORMAT:
            raise ValueError("%s: checkpoint format %r, expected %r (delete the file to "
                             "write it again)" % (path, meta.get("format"), CKPT_FORMAT))
        if set(header) != set(state):
            missing, extra = sorted(set(state) - set(header)), sorted(set(header) - set(state))
            raise ValueError("%s: checkpoint does not match the model (missing: %s; "
                             "unexpected: %s)" % (path, ", ".join(missing) or "none",
                                                  ", ".join(extra) or "none"))
        jobs, end = [], 0
        for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
            t = state[name]
            lo, hi = info["data_offsets"]
            if (_DTYPES.get(info["dtype"]) != t.dtype or list(info["shape"]) != list(t.shape)
                    or lo != end or hi - lo != t.numel() * t.element_size()):
                raise ValueError("%s: tensor %s is %s %s at [%d, %d); the model has %s %s"
                                 % (path, name, info["dtype"], info["shape"], lo, hi,
                                    _DTYPE_NAMES.get(t.dtype, t.dtype), list(t.shape)))
            if t.device.type != "cpu" or not t.is_contiguous():
                raise ValueError("%s: %s must be a contiguous CPU tensor to read into"
                                 % (path, name))
            end = hi
            _advise_huge_pages(t)
            dest = _raw_bytes(t)
            for at in range(0, len(dest), READ_CHUNK):
                jobs.append((dest[at:at + READ_CHUNK], base + lo + at))
        if base + end != size:
            raise ValueError("%s: %d bytes of tensors, %d in the file"
                             % (path, end, size - base))
        fd = f.fileno()
        if threads > 1 and len(jobs) > 1 and hasattr(os, "preadv"):
            with ThreadPoolExecutor(min(threads, len(jobs))) as pool:
                for _ in pool.map(lambda job: _pread_into(fd, path, *job), jobs):
                    pass
        else:
            for dest, at in jobs:
                _pread_into(fd, path, dest, at)
    if sys.byteorder != "little":
        for t in state.values():
            if t.element_size() > 1:
                _raw_view(t).byteswap(inplace=True)
    return module


_HUGE = 2 << 20
_libc = None


def _advise_huge_pages(t):
    """Ask Linux for transparent huge pages for a large tensor's memory before
    it is first written (what torch 2.x does for every CPU allocation with
    THP_MEM_ALLOC_ENABLE=1): the read then faults in 2 MiB pages instead of
    4 KiB ones, which is most of the cost of filling fresh memory. Advice only:
    does nothing where it is not available."""
    global _libc
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    nbytes = t.numel() * t.element_size()
    if advice is None or nbytes < 2 * _HUGE or _libc is False:
        return
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
            _libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            _libc.madvise.restype = ctypes.c_int
        except (OSError, AttributeError):
            _libc = False
            return
    page = mmap.PAGESIZE
    start = (t.data_ptr() + page - 1) // page * page
    end = (t.data_ptr() + nbytes) // page * page
    _libc.madvise(start, end - start, advice)  # failure is harmless: 4 KiB pages


def _raw_view(t):
    flat = t.detach().reshape(-1)
    return (flat.view(torch.int16) if flat.dtype == torch.bfloat16 else flat).numpy()


def _pread_into(fd, path, dest, at):
    got = 0
    while got < len(dest):
        if hasattr(os, "preadv"):
            n = os.preadv(fd, [dest[got:]], at + got)
        else:
            os.lseek(fd, at + got, os.SEEK_SET)
            n = os.readv(fd, [dest[got:]])
        if n == 0:
            raise ValueError("%s: truncated checkpoint" % path)
        got += n


def default_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "stagebench-demo")


def test_image():
    """The input: a fixed pattern (no randomness), TOKENS x CHANNELS."""
    i = torch.arange(TOKENS, dtype=torch.float32).unsqueeze(1)
    j = torch.arange(CHANNELS, dtype=torch.float32).unsqueeze(0)
    return torch.sin(0.3 * i + 0.17 * j) * torch.cos(0.05 * i * j)


class Cascade1024Pipeline:
    def __init__(self, scale=1.0, cache=None, device="cpu", low_vram=True, log=print,
                 steps=STEPS):
        self.scale = scale
        self.steps = steps
        self.cache = cache or default_cache()
        self.device = torch.device(device)
        self.low_vram = low_vram
        self.log = log
        self.models = {}

    # -- checkpoints ------------------------------------------------------------
    def _make(self, kind):
        """The module, its weights uninitialised (only the small learned
        embedding is drawn, from the CPU generator)."""
        w = width_for(MODEL_MB[kind], self.scale)
        if kind == "image_cond_backbone":
            return MLP(w)
        if kind == "image_cond_head":
            return make_head(max(8, w // 4))
        if "flow" in kind:
            return FlowModel(w)
        return MLP(w)

    @staticmethod
    def _kind(ckpt):
        if ckpt.startswith("image_cond_") and ckpt != "image_cond_backbone":
            return "image_cond_head"
        return ckpt

    def _checkpoint(self, ckpt):
        """Path of a checkpoint, written once (atomically) on first use. Its name
        carries the width (a checkpoint of another size is never read) and the
        format (.safetensors; the .pt files of the torch.save format before it
        are not read, and the one of the same model is removed when it is
        replaced)."""
        kind = self._kind(ckpt)
        stem = os.path.join(self.cache, "%s-w%d" % (ckpt, width_for(MODEL_MB[kind], self.scale)))
        path = stem + CKPT_SUFFIX
        if os.path.exists(path):
            return path
        os.makedirs(self.cache, exist_ok=True)
        # the weights come from their own generator; the module's construction
        # draw is kept off the caller's generator too
        with torch.random.fork_rng(devices=[]):
            module = self._make(kind)
        gen = torch.Generator().manual_seed(zlib.crc32(ckpt.encode()))
        with torch.no_grad():
            for m in module.modules():
                if isinstance(m, nn.Linear):  # nn.Linear's own init ranges
                    bound = 1 / math.sqrt(m.in_features)
                    m.weight.uniform_(-bound, bound, generator=gen)
                    m.bias.uniform_(-bound, bound, generator=gen)
                elif isinstance(m, MLP):
                    m.pos.normal_(0.0, 0.02, generator=gen)
        save_checkpoint(module.state_dict(), path, {"model": ckpt})
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stem + ".pt")
        return path

    def _load_state(self, module, ckpt):
        load_checkpoint_into(module, self._checkpoint(ckpt), threads=torch.get_num_threads())
        return module.to(self.device).eval()

    def _load_model(self, name):
        # Construct (the embedding draws from the CPU generator), then read the weights.
        return self._load_state(self._make(name), name)

    def _load_backbone(self):
        return self._load_state(self._make("image_cond_backbone"), "image_cond_backbone")

    def _load_extractor(self, name, backbone=None):
        if backbone is None:
            backbone = self._load_backbone()
        head = self._load_state(self._make("image_cond_head"), name)
        return FeatureExtractor(backbone, head).to(self.device).eval()

    def load_models(self):
        """Build every model now; each feature extractor loads its own backbone."""
        t0 = time.perf_counter()
        for name in PIPELINE_MODELS:
            self.models[name] = self._load_model(name)
        for name in IMAGE_COND_MODELS:
            self.models[name] = self._load_extractor(name, self._load_backbone())
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
        for _ in range(self.steps):
            x = x - model(x, cond) / self.steps
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
