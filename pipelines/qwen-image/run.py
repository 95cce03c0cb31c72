#!/usr/bin/env python3
"""run.py -- one Qwen-Image text-to-image run through diffusers, the usual way.

    python run.py --out DIR [--size full|tiny|small] [--model Qwen/Qwen-Image-2.1] [--cache DIR]
                  [--prompt TEXT] [--seed 7] [--width W] [--height H] [--steps N]
                  [--device D] [--dtype T] [--pipeline-class auto|QwenImage21Pipeline|
                  QwenImagePipeline] [--offload]
    python run.py --prepare --size tiny|small --cache DIR [--pipeline-class ...]

The pipeline is loaded as users load it: CLASS.from_pretrained(MODEL, torch_dtype=DTYPE), then
pipe.to(DEVICE) (or, with --offload, pipe.enable_model_cpu_offload(device=DEVICE)), then
pipe(prompt=..., width=..., height=..., num_inference_steps=..., generator=
torch.Generator("cpu").manual_seed(SEED)) under torch.no_grad().

--size full (the default) is the published setting: MODEL (a hub id or a local copy), 1024 x
1024, 20 steps, mps, bfloat16. --size tiny (and small, wider models) runs the same code on the
random-weight model that --prepare writes into CACHE/SIZE[-CLASS] (make_tiny.py: nothing is
downloaded; HF_HUB_OFFLINE=1 is set), 64 x 64, 2 steps, cpu, float32. An empty --width/--height/--steps/--device/--dtype takes
the size's value. --pipeline-class auto: the class a local model directory names in its
model_index.json, else QwenImage21Pipeline when the installed diffusers has it, else
QwenImagePipeline (same shape: text encoder, transformer, VAE).
Staged loading is not here: adapter.py adds it through stagebench's probe.
"""
import argparse
import json
import os
import sys

SIZES = {"full": {"width": 1024, "height": 1024, "steps": 20, "device": "mps",
                  "dtype": "bfloat16"},
         "tiny": {"width": 64, "height": 64, "steps": 2, "device": "cpu", "dtype": "float32"},
         "small": {"width": 64, "height": 64, "steps": 2, "device": "cpu", "dtype": "float32"}}
LOCAL = ("tiny", "small")  # sizes whose model --prepare writes (make_tiny.py)
CLASSES = ("QwenImage21Pipeline", "QwenImagePipeline")


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--size", choices=("full", "tiny", "small"), default="full")
    ap.add_argument("--model", default="Qwen/Qwen-Image-2.1")
    ap.add_argument("--cache", default="")
    ap.add_argument("--prompt", default="A red fox reading a newspaper in a sunlit cafe")
    ap.add_argument("--seed", type=int, default=7)
    for key in ("width", "height", "steps", "device", "dtype"):
        ap.add_argument("--" + key, default="")
    ap.add_argument("--pipeline-class", default="auto", choices=("auto",) + CLASSES)
    ap.add_argument("--offload", action="store_true")
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    for key, value in SIZES[args.size].items():
        if getattr(args, key) in ("", None):
            setattr(args, key, value)
    for key in ("width", "height", "steps"):
        try:
            setattr(args, key, int(getattr(args, key)))
        except ValueError:
            ap.error("--%s: expected a whole number, got %r" % (key, getattr(args, key)))
    if args.size in LOCAL and not args.cache:
        ap.error("--size %s needs --cache DIR (where --prepare writes the model)" % args.size)
    if not args.prepare and not args.out:
        ap.error("--out DIR is required")
    return args


def class_name(args, diffusers=None):
    """The pipeline class to load: --pipeline-class, else model_index.json's, else the newest."""
    if args.pipeline_class != "auto":
        return args.pipeline_class
    index = os.path.join(model_path(args), "model_index.json")
    if os.path.isfile(index):
        with open(index) as f:
            name = json.load(f).get("_class_name")
        if name in CLASSES:
            return name
    if diffusers is None:
        import diffusers
    return CLASSES[0] if hasattr(diffusers, CLASSES[0]) else CLASSES[1]


def model_path(args):
    if args.size not in LOCAL:
        return args.model
    suffix = "" if args.pipeline_class == "auto" else "-" + args.pipeline_class
    return os.path.join(args.cache, args.size + suffix)


def prepare(args):
    if args.size not in LOCAL:
        return 0  # the full model is the user's own copy (or the hub's): nothing to write
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import make_tiny
    cls = None if args.pipeline_class == "auto" else args.pipeline_class
    return make_tiny.main(["make_tiny.py", model_path(args), "--size", args.size] +
                          (["--class", cls] if cls else []))


def main(argv=None):
    args = parse(argv)
    if args.size in LOCAL:
        os.environ["HF_HUB_OFFLINE"] = "1"  # the tiny model is local; never reach for a hub
    if args.prepare:
        return prepare(args)
    import torch
    import diffusers
    cls = getattr(diffusers, class_name(args, diffusers))
    pipe = cls.from_pretrained(model_path(args), torch_dtype=getattr(torch, args.dtype))
    if args.offload:
        pipe.enable_model_cpu_offload(device=args.device)
    else:
        pipe.to(args.device)
    with torch.no_grad():
        image = pipe(prompt=args.prompt, width=args.width, height=args.height,
                     num_inference_steps=args.steps,
                     generator=torch.Generator("cpu").manual_seed(args.seed)).images[0]
    os.makedirs(args.out, exist_ok=True)
    if hasattr(image, "save"):
        path = os.path.join(args.out, "image.png")
        image.save(path)
    else:
        import numpy as np
        path = os.path.join(args.out, "image.npy")
        np.save(path, image.float().cpu().numpy())
    print("[qwen-image] wrote %s" % path, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
