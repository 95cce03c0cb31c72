#!/usr/bin/env python3
"""run.py -- one Qwen-Image-2.1 text-to-image run through diffusers, the usual way.

    python run.py --out DIR [--model Qwen/Qwen-Image-2.1] [--prompt TEXT] [--seed 7]
                  [--width 1024] [--height 1024] [--steps 20] [--device mps]
                  [--dtype bfloat16] [--offload]

--offload: pipe.enable_model_cpu_offload(device=...) instead of pipe.to(device).
Staged loading is not here: adapter.py adds it through stagebench's probe.
"""
import argparse
import os
import sys

import torch


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--model", default="Qwen/Qwen-Image-2.1")
    ap.add_argument("--prompt", default="A red fox reading a newspaper in a sunlit cafe")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--height", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device", default="mps")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--offload", action="store_true")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    from diffusers import QwenImage21Pipeline
    pipe = QwenImage21Pipeline.from_pretrained(args.model, torch_dtype=getattr(torch, args.dtype))
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
