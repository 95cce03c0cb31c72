"""The port's pipeline class (a subclass of base.Pipeline, which reads pipeline.json).

run() follows the port's call order, tests each model key with `in` before using it (and does
nothing else with `self.models`), draws all noise from the torch CPU generator, copies the active
model when `low_vram` is set (the port's default), and hands the image-conditioning extractor to
get_proj_cond_shape positionally twice and by keyword once."""
import copy

import numpy as np
import torch

from pixal3d import models as _models
from pixal3d.pipelines.base import Pipeline


class SparseTensor:
    """A sparse latent: `coords` and `feats`."""

    def __init__(self, coords, feats):
        self.coords, self.feats = coords, feats


class Samples:
    """An object (not a mapping) whose `samples` is the latent."""

    def __init__(self, samples):
        self.samples = samples


def _noise(shape):
    """Every stage's noise: the torch CPU generator (seeded by run(); Python `random` and
    NumPy are never seeded by the port, and no noise comes from them)."""
    return torch.randn(*shape)


class SparseStructureSampler:
    def sample(self, model, cond, shape):
        out = model(_noise(shape) + cond.mean())
        return SparseTensor(torch.arange(out.shape[0]).float(), out)


class ShapeSampler:
    def sample(self, model, cond, shape):
        return {"samples": model(_noise(shape) + cond.mean())}  # a mapping with `samples`


class TexSampler:
    def sample(self, model, cond, shape):  # bfloat16, as the port's texture latents
        return Samples(model(_noise(shape) + cond.mean()).to(torch.bfloat16))


def _from_weights(module, seed):
    """Fixed weights, as read from a file (no draw from the global generators)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module


class Rembg:
    """RMBG-2: a plain object (not a module) whose weights are in `.model`."""

    def __init__(self):
        self.model = _from_weights(torch.nn.Linear(16, 16), 5)


class Pixal3DImageTo3DPipeline(Pipeline):
    MODEL_KEYS = ("sparse_structure_flow_model", "sparse_structure_decoder",
                  "shape_slat_flow_model_512", "shape_slat_flow_model_1024",
                  "shape_slat_decoder", "tex_slat_flow_model_512",
                  "tex_slat_flow_model_1024", "tex_slat_decoder")

    def __init__(self, models):
        super().__init__(models)
        self.low_vram = True  # the port's default
        self.rembg_model = Rembg()
        self.sparse_structure_sampler = SparseStructureSampler()
        self.shape_slat_sampler = ShapeSampler()
        self.tex_slat_sampler = TexSampler()

    def _model(self, name):
        """The port tests membership, then indexes; low_vram copies the active model."""
        if name not in self.models:
            raise RuntimeError("%s is not in pipeline.models" % name)
        model = self.models[name]
        if self.low_vram:
            _models.note("low_vram copy " + name)
            return copy.deepcopy(model)
        return model

    def preprocess_image(self, image):
        pixels = np.asarray(image.convert("L").resize((16, 4)), dtype=np.float32) / 255
        return self.rembg_model.model(torch.from_numpy(pixels))

    def get_proj_cond_ss(self, image, camera_params):
        return self.image_cond_model_ss(image)

    def get_proj_cond_shape(self, image_cond_model, image, camera_params):
        return image_cond_model(image)

    def sample_sparse_structure(self, cond):
        flow = self._model("sparse_structure_flow_model")
        z = self.sparse_structure_sampler.sample(flow, cond, (4, 8))
        return self._model("sparse_structure_decoder")(z.feats)

    def sample_shape_slat(self, cond, coords, width):
        flow = self._model("shape_slat_flow_model_512")
        return self.shape_slat_sampler.sample(flow, cond + coords.mean(), (4, width))["samples"]

    def sample_tex_slat(self, cond, shape_slat):
        flow = self._model("tex_slat_flow_model_1024")
        return self.tex_slat_sampler.sample(flow, cond + shape_slat.mean(), (4, 8)).samples

    def decode_latent(self, shape_slat, tex_slat):
        mesh = self._model("shape_slat_decoder")(shape_slat)
        return {"mesh": mesh, "texture": self._model("tex_slat_decoder")(tex_slat.float())}

    def run(self, image, camera_params=None, seed=42, preprocess_image=True,
            return_latent=False, pipeline_type="1024_cascade"):
        if pipeline_type != "1024_cascade":
            raise NotImplementedError("the stand-in has only 1024_cascade")
        if preprocess_image:
            image = self.preprocess_image(image)
        torch.manual_seed(seed)
        cond = self.get_proj_cond_ss(image, camera_params)
        coords = self.sample_sparse_structure(cond)
        cond = self.get_proj_cond_shape(self.image_cond_model_shape_512, image, camera_params)
        slat = self.sample_shape_slat(cond, coords, 8)
        up = self._model("shape_slat_decoder").upsample(slat)[:, :8]
        cond = self.get_proj_cond_shape(self.image_cond_model_shape_1024, image,
                                        camera_params)
        flow = self._model("shape_slat_flow_model_1024")
        hi = self.shape_slat_sampler.sample(flow, cond + up.mean(), (4, 8))["samples"]
        cond = self.get_proj_cond_shape(image_cond_model=self.image_cond_model_tex_1024,
                                        image=image, camera_params=camera_params)
        tex = self.sample_tex_slat(cond, hi)
        asset = self.decode_latent(hi, tex)
        if return_latent:
            asset["latent"] = (hi, tex)
        return asset
