#!/usr/bin/env python3
"""run.py -- one PixArt-Sigma text-to-image run through diffusers, the usual way.

    python run.py --out DIR [--size full|tiny|small] [--model ID|DIR] [--cache DIR]
                  [--prompt TEXT] [--seed 7] [--width W] [--height H] [--steps N]
                  [--device D] [--dtype T]
    python run.py --prepare --size tiny|small --cache DIR

The pipeline is loaded as users load it: PixArtSigmaPipeline.from_pretrained(MODEL,
torch_dtype=DTYPE), then pipe.to(DEVICE), then pipe(prompt=..., width=..., height=...,
num_inference_steps=..., generator=torch.Generator("cpu").manual_seed(SEED)) under
torch.no_grad(); everything else (guidance, resolution binning, the 300-token prompt) is the
pipeline's default.

--size full (the default) is the published setting: MODEL (a hub id or a local copy), 1024 x
1024, 20 steps, mps, bfloat16. --size tiny (and small, wider models) runs the same code on the
random-weight model that --prepare writes into CACHE/SIZE (make_tiny.py: nothing is
downloaded; HF_HUB_OFFLINE=1 is set), 256 x 256, 2 steps, cpu, float32. An empty
--width/--height/--steps/--device/--dtype takes the size's value.
Nothing here knows of stagebench: its probe learns the staging plan from an eager run.
"""
import argparse
import os
import sys

SIZES = {"full": {"width": 1024, "height": 1024, "steps": 20, "device": "mps",
                  "dtype": "bfloat16"},
         "tiny": {"width": 256, "height": 256, "steps": 2, "device": "cpu", "dtype": "float32"},
         "small": {"width": 256, "height": 256, "steps": 2, "device": "cpu", "dtype": "float32"}}
LOCAL = ("tiny", "small")  # sizes whose model --prepare writes (make_tiny.py)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--size", choices=sorted(SIZES), default="full")
    ap.add_argument("--model", default="PixArt-alpha/PixArt-Sigma-XL-2-1024-MS")
    ap.add_argument("--cache", default="")
    ap.add_argument("--prompt", default="A red fox reading a newspaper in a sunlit cafe")
    ap.add_argument("--seed", type=int, default=7)
    for key in ("width", "height", "steps", "device", "dtype"):
        ap.add_argument("--" + key, default="")
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


def model_path(args):
    return os.path.join(args.cache, args.size) if args.size in LOCAL else args.model


def prepare(args):
    if args.size not in LOCAL:
        return 0  # the full model is the user's own copy (or the hub's): nothing to write
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_tiny
    return make_tiny.main(["make_tiny.py", model_path(args), "--size", args.size])


def main(argv=None):
    args = parse(argv)
    if args.size in LOCAL:
        os.environ["HF_HUB_OFFLINE"] = "1"  # the tiny model is local; never reach for a hub
    if args.prepare:
        return prepare(args)
    import torch
    from diffusers import PixArtSigmaPipeline
    pipe = PixArtSigmaPipeline.from_pretrained(model_path(args),
                                               torch_dtype=getattr(torch, args.dtype))
    pipe.to(args.device)
    with torch.no_grad():
        image = pipe(prompt=args.prompt, width=args.width, height=args.height,
                     num_inference_steps=args.steps,
                     generator=torch.Generator("cpu").manual_seed(args.seed)).images[0]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "image.png")
    image.save(path)
    print("[pixart-sigma] wrote %s" % path, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
