"""adapter.py -- stages a Pixal3D-mac checkout's 1024_cascade (driven by run.py) for stagebench.

The port is not edited and none of its code is copied. In every mode the
pipeline's methods enter the stages below and the three samplers' outputs are
fingerprinted. Eager is the port's own loading, untouched. Staged
(STAGEBENCH_STAGED=1):
- while generate_mps.load_pipeline runs, pixal3d.models.from_pretrained is
  intercepted: each of the seven flow/decoder models becomes a lazy stand-in
  keeping its checkpoint path, built directly on the device (torch.device as a
  context on torch 2.x) the first time a stage listing it uses it;
- DINOv3ViTModel.from_pretrained is cached by its arguments while the four
  extractors are built (one backbone for the four), and so is the NAF upsampler
  (one for the three that have it: the port's _load_naf stores it on its own
  extractor as .naf_model, so every later call stores the first one there);
- low_vram is turned off (it would copy each active model a second time);
- RMBG-2's weights are released when camera begins, the extractors' when
  decode begins (adapter-level release events rembg_model, image_cond_models);
- the shape decoder, listed in shape_512 and decode only, is released at
  shape_1024 and built again at decode (a reload event);
- every build runs with the random generators saved and restored.
"""
import functools
import os

# model key -> the stages that use it
STAGES = {
    "sparse_structure_flow_model": ["structure"],
    "sparse_structure_decoder": ["structure"],
    "shape_slat_flow_model_512": ["shape_512"],
    "shape_slat_decoder": ["shape_512", "decode"],
    "shape_slat_flow_model_1024": ["shape_1024"],
    "tex_slat_flow_model_1024": ["texture"],
    "tex_slat_decoder": ["decode"],
}
EXTRACTORS = {"image_cond_model_shape_512": "shape_512",
              "image_cond_model_shape_1024": "shape_1024",
              "image_cond_model_tex_1024": "texture"}
REFUSED_ENV = ("PIXAL3D_FP32_MODELS", "PIXAL3D_CPU_MODELS", "PIXAL3D_DUMP_FIXTURES")
DINO = ("pixal3d.trainers.flow_matching.mixins.image_conditioned_proj:"
        "DINOv3ViTModel.from_pretrained")


def install(probe):
    if probe.staged:
        bad = [k for k in os.environ if k in REFUSED_ENV or k.startswith("PIXAL3D_NAF_")]
        if bad:
            raise RuntimeError("a staged run refuses the port's diagnostic switches %s: "
                               "unset them" % ", ".join(sorted(bad)))
        probe.memoize(DINO)
    # staged: lazy stand-ins; eager: the port's own loads, reported as load events
    state = {"models": probe.defer("pixal3d.models:from_pretrained", name=_key_of_path,
                                   stages=lambda name: STAGES.get(name, []))}
    probe.when_imported("generate_mps", functools.partial(_patch_entry, probe, state))
    probe.when_imported("pixal3d.pipelines.pixal3d_image_to_3d",
                        functools.partial(_patch_pipeline, probe))


def _key_of_path(path, *args, **kwargs):
    # "<model path>/ckpts/ss_flow_..." -> a provisional name; renamed to the
    # pipeline's own key once its constructor has returned
    return "ckpt:" + str(path).rstrip("/").rsplit("/", 1)[-1]


def _patch_entry(probe, state, gm):
    probe.on_call(gm, "asset_to_glb", "export")
    if not probe.staged:
        probe.on_call(gm, "load_pipeline", "setup")
        return
    orig_load = gm.load_pipeline
    orig_build = gm.build_image_cond_model

    @functools.wraps(orig_load)
    def load_pipeline(args, device=None):
        state["models"].device = device
        pipeline = orig_load(args, device=device)
        for key, model in list(pipeline.models.items()):
            if hasattr(model, "_sb_name"):
                probe.rename(model, key, STAGES.get(key, []))
        pipeline.low_vram = False
        extractors = [getattr(pipeline, "image_cond_model_%s" % k) for k in
                      ("ss", "shape_512", "shape_1024", "tex_1024")]
        probe.on_enter("camera", lambda p: p.release_module(pipeline.rembg_model.model,
                                                             "rembg_model"))
        probe.on_enter("decode", lambda p: p.release_module(extractors, "image_cond_models"))
        return pipeline

    @functools.wraps(orig_build)
    def build_image_cond_model(config, *args, **kwargs):
        ext = orig_build(config, *args, **kwargs)
        _share_naf(type(ext), ext)
        return ext

    gm.load_pipeline = load_pipeline
    gm.build_image_cond_model = build_image_cond_model
    probe.on_call(gm, "load_pipeline", "setup")


def _share_naf(cls, ext):
    """One NAF upsampler for every extractor that loads one. The port's _load_naf() stores
    the upsampler on its own extractor as .naf_model (its caller ignores the return value):
    the first call runs it, every later call stores that same upsampler on its extractor
    and returns what the first call returned."""
    if getattr(cls, "_stagebench_naf", None) is not None or not hasattr(cls, "_load_naf"):
        return
    orig = cls._load_naf
    shared = []  # [(upsampler, what the port's _load_naf returned)]
    if getattr(ext, "naf_model", None) is not None:
        shared.append((ext.naf_model, ext.naf_model))

    @functools.wraps(orig)
    def _load_naf(self, *args, **kwargs):
        if not shared:
            ret = orig(self, *args, **kwargs)
            naf = getattr(self, "naf_model", None)
            shared.append((ret if naf is None else naf, ret))
            return ret
        naf, ret = shared[0]
        if naf is not None:
            self.naf_model = naf
        return ret
    cls._load_naf = _load_naf
    cls._stagebench_naf = True


def _shape_stage(self, *args, **kwargs):
    ext = kwargs.get("image_cond_model", args[0] if args else None)
    for attr, stage in EXTRACTORS.items():
        if ext is getattr(self, attr, None):
            return stage
    return None  # an extractor the plan does not know: stay in the current stage


def _latents(result):
    """{name: tensor} of a sampler's output: a tensor, an object or mapping with
    `samples`, a sparse latent with coords and feats."""
    value = result.get("samples", result) if isinstance(result, dict) else \
        getattr(result, "samples", result)
    if hasattr(value, "feats") and hasattr(value, "coords"):
        return {"coords": value.coords, "feats": value.feats}
    return {"samples": value}


def _sampler_outputs(label):
    def outputs(result):
        return {"%s_%s" % (label, k): v for k, v in _latents(result).items()}
    return outputs


def _patch_pipeline(probe, mod):
    cls = mod.Pixal3DImageTo3DPipeline
    probe.on_call(cls, "preprocess_image", "preprocess", then="camera")
    probe.on_call(cls, "get_proj_cond_ss", "structure")
    probe.on_call(cls, "get_proj_cond_shape", _shape_stage)
    probe.on_call(cls, "decode_latent", "decode")
    orig_run = cls.run

    @functools.wraps(orig_run)
    def run(self, *args, **kwargs):
        for attr, label in (("sparse_structure_sampler", "structure"),
                            ("shape_slat_sampler", "shape"), ("tex_slat_sampler", "texture")):
            sampler = getattr(self, attr, None)
            if sampler is not None:
                probe.on_call(sampler, "sample", None, outputs=_sampler_outputs(label))
        return orig_run(self, *args, **kwargs)
    cls.run = run
