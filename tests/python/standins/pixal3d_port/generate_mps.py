"""The port's entry script, imported as a module by drivers (main() is not to be called).

torch, PIL and Pixal3DImageTo3DPipeline are module globals only once load_runtime_deps() has
run: anything that needs them raises NameError before. load_pipeline builds the pipeline, sets
the four extractors, then init_pipeline calls `_load_naf()` on each extractor that has
`use_naf_upsample`, ignoring what it returns."""
import argparse
import os

IMAGE_COND_CONFIGS = {
    "ss": {"backbone": "facebook/dinov3-vitl16"},
    "shape_512": {"backbone": "facebook/dinov3-vitl16", "use_naf_upsample": True},
    "shape_1024": {"backbone": "facebook/dinov3-vitl16", "use_naf_upsample": True},
    "tex_1024": {"backbone": "facebook/dinov3-vitl16", "use_naf_upsample": True},
}
DIAGNOSTIC_ENV = ("PIXAL3D_FP32_MODELS", "PIXAL3D_CPU_MODELS", "PIXAL3D_DUMP_FIXTURES")


def _texture_size(text):
    n = int(text)
    if not 512 <= n <= 4096:
        raise argparse.ArgumentTypeError("--texture-size must be in 512..4096")
    return n


def parse_args(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("--output", default="out.glb")
    ap.add_argument("--model-path", default="TencentARC/Pixal3D")
    ap.add_argument("--device", choices=("mps", "cpu"), default="mps")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--pipeline-type", choices=("1024_cascade", "1536_cascade"),
                    default="1024_cascade")
    ap.add_argument("--texture-size", type=_texture_size, default=2048)
    for flag in ("--save-mesh", "--tex-recalib", "--tex-sat-boost", "--flash-sdpa",
                 "--load-mesh", "--load-fixture-07", "--free-spent-models"):
        ap.add_argument(flag, action="store_true")
    return ap.parse_args(argv)


def load_runtime_deps():
    global torch, PIL, Pixal3DImageTo3DPipeline
    import torch
    import PIL.Image
    from pixal3d.pipelines import Pixal3DImageTo3DPipeline


def _configure_fdg_environment(args):
    os.environ.setdefault("PIXAL3D_FDG", "1")


def resolve_device(name):
    return name if name != "mps" or torch.backends.mps.is_available() else "cpu"


def output_glb_path(output):
    return output if output.endswith(".glb") else output + ".glb"


def build_image_cond_model(config, device):
    from pixal3d.trainers.flow_matching.mixins.image_conditioned_proj import ImageCondProj
    return ImageCondProj(config, device)


def init_pipeline(pipeline):
    for key in IMAGE_COND_CONFIGS:
        extractor = getattr(pipeline, "image_cond_model_%s" % key)
        if extractor.use_naf_upsample:
            extractor._load_naf()  # stores .naf_model on the extractor; returns nothing used


def load_pipeline(args, device=None):
    from pixal3d.models import note
    for name in DIAGNOSTIC_ENV:
        if os.environ.get(name):
            note("diagnostic " + name)
    device = device or resolve_device(args.device)
    pipeline = Pixal3DImageTo3DPipeline.from_pretrained(args.model_path)
    for key in IMAGE_COND_CONFIGS:
        setattr(pipeline, "image_cond_model_%s" % key,
                build_image_cond_model(IMAGE_COND_CONFIGS[key], device))
    init_pipeline(pipeline)
    return pipeline


def _estimate_camera(image):
    moge = torch.nn.Linear(16, 4)  # MoGe-2: loaded and freed by the port itself
    params = moge(image).mean(dim=0)
    del moge
    return params


def image_to_asset(pipeline, image, args, device=None, *, tmp_dir=None):
    image = pipeline.preprocess_image(image)
    camera = _estimate_camera(image)
    torch.manual_seed(args.seed)
    return pipeline.run(image, camera_params=camera, seed=args.seed, preprocess_image=False,
                        return_latent=True, pipeline_type=args.pipeline_type)


def asset_to_glb(asset, glb_path, args):
    with open(glb_path, "w") as f:
        f.write("%.6f\n" % float(asset["mesh"].sum() + asset["texture"].sum()))


def save_mesh_checkpoint(path, mesh, vertices, faces, resolution):
    pass


def main():
    raise RuntimeError("stand-in: generate_mps.main() is not to be called by a driver")


if __name__ == "__main__":
    main()
