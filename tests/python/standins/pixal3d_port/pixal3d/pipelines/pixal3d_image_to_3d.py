"""The port's pipeline class: from_pretrained reads pipeline.json and calls
pixal3d.models.from_pretrained for each model, looked up at call time."""
import json

import torch

from pixal3d import models as _models


class Sampler:
    def __init__(self, pipeline, key):
        self.pipeline, self.key = pipeline, key

    def sample(self, model, cond, shape):
        noise = torch.randn(*shape)  # every stage's noise: the CPU generator
        return {"samples": model(noise + cond.mean())}


class SparseSampler(Sampler):
    def sample(self, model, cond, shape):
        out = super().sample(model, cond, shape)["samples"]
        return type("SparseTensor", (), {"coords": torch.arange(out.shape[0]).float(),
                                         "feats": out})()


def _from_weights(module, seed):
    """Fixed weights, as read from a file (no draw from the global generator)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module


class Rembg:
    def __init__(self):
        self.model = _from_weights(torch.nn.Linear(16, 16), 5)


class Pixal3DImageTo3DPipeline:
    def __init__(self, models):
        self.models = models
        self.low_vram = True
        self.rembg_model = Rembg()
        self.sparse_structure_sampler = SparseSampler(self, "ss")
        self.shape_slat_sampler = Sampler(self, "shape")
        self.tex_slat_sampler = Sampler(self, "tex")
        self.calls = []

    @classmethod
    def from_pretrained(cls, path, config_file="pipeline.json"):
        with open("%s/%s" % (path, config_file)) as f:
            args = json.load(f)
        loaded = {}
        for k, v in args["models"].items():
            loaded[k] = _models.from_pretrained(f"{path}/{v}")
        return cls(loaded)

    def _active(self, name):
        model = self.models[name]
        if self.low_vram:  # the port copies the active model to the device
            import copy
            _models.note("low_vram copy " + name)
            return copy.deepcopy(model)
        return model

    def preprocess_image(self, image):
        self.calls.append("preprocess_image")
        import numpy as np
        pixels = np.asarray(image.convert("L").resize((16, 4)), dtype=np.float32) / 255
        return self.rembg_model.model(torch.from_numpy(pixels))

    def get_proj_cond_ss(self, image, camera_params):
        self.calls.append("get_proj_cond_ss")
        return self.image_cond_model_ss(image)

    def get_proj_cond_shape(self, image_cond_model, image, camera_params):
        self.calls.append("get_proj_cond_shape")
        return image_cond_model(image)

    def sample_sparse_structure(self, cond):
        flow = self._active("sparse_structure_flow_model")
        z = self.sparse_structure_sampler.sample(flow, cond, (4, 8))
        return self.models["sparse_structure_decoder"](z.feats)

    def sample_shape_slat(self, cond, coords, width):
        flow = self._active("shape_slat_flow_model_512")
        return self.shape_slat_sampler.sample(flow, cond, (4, width))["samples"]

    def sample_tex_slat(self, cond, shape_slat):
        flow = self._active("tex_slat_flow_model_1024")
        return self.tex_slat_sampler.sample(flow, cond, (4, 8))["samples"]

    def decode_latent(self, shape_slat, tex_slat):
        self.calls.append("decode_latent")
        mesh = self.models["shape_slat_decoder"](shape_slat)
        return {"mesh": mesh, "texture": self.models["tex_slat_decoder"](tex_slat)}

    def run(self, image, camera_params=None, seed=42, preprocess_image=True,
            return_latent=False, pipeline_type="1024_cascade"):
        torch.manual_seed(seed)
        cond = self.get_proj_cond_ss(image, camera_params)
        coords = self.sample_sparse_structure(cond)
        cond = self.get_proj_cond_shape(self.image_cond_model_shape_512, image, camera_params)
        slat = self.sample_shape_slat(cond, coords, 8)
        up = self.models["shape_slat_decoder"].upsample(slat)[:, :8]
        cond = self.get_proj_cond_shape(self.image_cond_model_shape_1024, image,
                                        camera_params)
        hi = self.shape_slat_sampler.sample(self.models["shape_slat_flow_model_1024"],
                                            cond + up.mean(), (4, 8))["samples"]
        cond = self.get_proj_cond_shape(image_cond_model=self.image_cond_model_tex_1024,
                                        image=image, camera_params=camera_params)
        tex = self.sample_tex_slat(cond, hi)
        return self.decode_latent(hi, tex)
