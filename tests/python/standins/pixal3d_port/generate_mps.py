"""The port's entry script (imported as a module by drivers; main() is not called here)."""
import argparse
import os

IMAGE_COND_CONFIGS = {
    "ss": {"backbone": "facebook/dinov3-vitl16"},
    "shape_512": {"backbone": "facebook/dinov3-vitl16", "naf": True},
    "shape_1024": {"backbone": "facebook/dinov3-vitl16", "naf": True},
    "tex_1024": {"backbone": "facebook/dinov3-vitl16", "naf": True},
}


def parse_args(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("--output", default="out.glb")
    ap.add_argument("--model-path", default="TencentARC/Pixal3D")
    ap.add_argument("--device", default="mps")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--pipeline-type", default="1024_cascade")
    ap.add_argument("--texture-size", type=int, default=2048)
    ap.add_argument("--save-mesh", action="store_true")
    return ap.parse_args(argv)


def load_runtime_deps():
    global torch, Pixal3DImageTo3DPipeline
    import torch
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


def load_pipeline(args, device=None):
    pipeline = Pixal3DImageTo3DPipeline.from_pretrained(args.model_path)
    for key in IMAGE_COND_CONFIGS:
        setattr(pipeline, "image_cond_model_%s" % key,
                build_image_cond_model(IMAGE_COND_CONFIGS[key], device))
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
