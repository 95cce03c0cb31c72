#!/usr/bin/env python3
"""app.py -- text to image with a diffusers pipeline, written as a user writes it.

    python app.py MODEL_DIR OUT_DIR [--seed 7] [--steps 2] [--size 32] [--dtype bfloat16]

DiffusionPipeline.from_pretrained(MODEL_DIR, torch_dtype=DTYPE), pipe.to("cpu"), one prompt,
the image saved as OUT_DIR/image.npy. Nothing here knows stagebench.
"""
import argparse
import os

import numpy as np
import torch
from diffusers import DiffusionPipeline


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--dtype", default="bfloat16")
    a = ap.parse_args()
    pipe = DiffusionPipeline.from_pretrained(a.model, torch_dtype=getattr(torch, a.dtype))
    pipe.to("cpu")
    with torch.no_grad():
        image = pipe("a red fox reading a newspaper", num_inference_steps=a.steps,
                     height=a.size, width=a.size, output_type="np",
                     generator=torch.Generator("cpu").manual_seed(a.seed)).images[0]
    os.makedirs(a.out, exist_ok=True)
    np.save(os.path.join(a.out, "image.npy"), np.asarray(image, dtype=np.float32))
    print("image", image.shape)


if __name__ == "__main__":
    main()
