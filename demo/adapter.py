"""adapter.py -- tells stagebench_probe how the demo pipeline (cascade.py) is staged.

Installed by the probe's sitecustomize when STAGEBENCH_ADAPTER names it: the
pipeline files stay as they are. In every mode, the pipeline's stage methods
enter their stage and their outputs are fingerprinted. With STAGEBENCH_STAGED=1
the models are registered with the probe instead of built up front, the four
feature extractors share one backbone, and the low-VRAM copy is skipped.
"""
import contextlib
import functools
import time

# Which stages use which model (the extractors follow their backbone).
STAGES = {
    "rembg_model": ["preprocess"],
    "image_cond_backbone": ["preprocess"],
    "camera_estimator": ["camera"],
    "sparse_structure_flow_model": ["structure"],
    "sparse_structure_decoder": ["structure"],
    "shape_slat_flow_model_512": ["shape_512"],
    "shape_slat_decoder": ["shape_512", "decode"],
    "shape_slat_flow_model_1024": ["shape_1024"],
    "tex_slat_flow_model_1024": ["texture"],
    "tex_slat_decoder": ["decode"],
}


def _shape_stage(self, cond, init, resolution=512):
    return "shape_%d" % resolution


def install(probe):
    probe.when_imported("cascade", functools.partial(_patch, probe))


def _patch(probe, cascade):
    cls = cascade.Cascade1024Pipeline
    if probe.staged:
        _make_staged(probe, cascade, cls)
    else:
        _report_eager_loads(probe, cls)
    probe.on_call(cls, "load_models", "setup")
    probe.on_call(cls, "preprocess_image", "preprocess", outputs="image")
    probe.on_call(cls, "get_cond", "preprocess", outputs="cond")
    probe.on_call(cls, "estimate_camera", "camera", outputs="camera")
    probe.on_call(cls, "sample_sparse_structure", "structure", outputs="coords")
    probe.on_call(cls, "sample_shape_slat", _shape_stage, outputs="{stage}_slat")
    probe.on_call(cls, "sample_tex_slat", "texture", outputs="tex_slat")
    probe.on_call(cls, "decode_slat", "decode", outputs=["vertices", "colors"])
    probe.on_call(cls, "export", "export")


def _make_staged(probe, cascade, cls):
    def load_models(self):
        for name in cascade.PIPELINE_MODELS:
            self.models[name] = probe.register(
                name, functools.partial(self._load_model, name), STAGES[name])
        probe.register("image_cond_backbone", self._load_backbone,
                       STAGES["image_cond_backbone"])
        for name in cascade.IMAGE_COND_MODELS:
            self.models[name] = probe.share(
                name, "image_cond_backbone",
                build=functools.partial(self._load_extractor, name))
        self.log("setup: %d models registered (staged)" % len(self.models))

    @contextlib.contextmanager
    def _active(self, name):
        yield self.models[name]  # staged loading replaces the low-VRAM copy

    cls.load_models = load_models
    cls._active = _active


def _report_eager_loads(probe, cls):
    """Eager mode: the pipeline builds its models itself; report each build
    (construct and read its checkpoint). A build inside another (an extractor
    that loads its own backbone) is reported on its own and left out of the
    outer one's seconds, as its bytes are left out of the outer one's nbytes."""
    inner = []  # seconds of the builds nested in each open build, innermost last
    for method, label in (("_load_model", None), ("_load_backbone", "image_cond_backbone"),
                          ("_load_extractor", None)):
        orig = getattr(cls, method)

        def timed(self, *args, _orig=orig, _label=label, **kwargs):
            inner.append(0.0)
            t0 = time.perf_counter()
            try:
                module = _orig(self, *args, **kwargs)
            finally:
                elapsed = time.perf_counter() - t0
                nested = inner.pop()
                if inner:
                    inner[-1] += elapsed
            from stagebench_probe import module_nbytes
            name = _label or args[0]
            backbone = getattr(module, "backbone", None)
            nbytes = module_nbytes(module, exclude=[backbone] if backbone is not None else ())
            probe.emit("load", name=name, stage=probe.stage, nbytes=nbytes,
                       seconds=round(elapsed - nested, 6))
            return module
        setattr(cls, method, timed)
