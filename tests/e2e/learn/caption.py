#!/usr/bin/env python3
"""caption.py -- a three-model script stagebench has no adapter for (tests/e2e/learn.sh).

Embeds images with a torchvision ResNet-34, mixes the features with the script's own model
(its weights read with torch.load + load_state_dict), and scores them with a head of its own
and a norm built of torch.nn layers it makes first; each step in a function of its own, the
models made once at the top.

    python3 caption.py WEIGHTS.pt OUT_DIR [--seed N] [--images N]
    python3 caption.py --prepare WEIGHTS.pt
"""
import argparse
import os

import torch
import torch.nn.functional as F
import torchvision
from torch import nn

WIDTH = 2048


class Mixer(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = x + torch.tanh(layer(x))
        return x


class Head(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.hidden = nn.Linear(width, classes)
        self.out = nn.Linear(classes, classes)

    def forward(self, x):
        return self.out(F.gelu(self.hidden(x)))


def models(weights):
    embedder = torchvision.models.resnet34(weights=None).eval()
    mixer = Mixer(WIDTH, 6)
    mixer.load_state_dict(torch.load(weights, map_location="cpu"))
    head = Head(WIDTH, 4096)
    # made of layers the script makes first: stays as it is (the plan says why)
    norm = nn.Sequential(nn.LayerNorm(4096), nn.Linear(4096, 512))
    return embedder, mixer, head, norm


def embed(embedder, images):
    return F.pad(embedder(images), (0, WIDTH - 1000))


def mix(mixer, feats):
    for _ in range(2):
        feats = mixer(feats)
    return feats


def score(head, norm, feats):
    return norm(head(feats)).softmax(dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("weights")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--images", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(2)
    if args.prepare:
        torch.manual_seed(1)
        os.makedirs(os.path.dirname(os.path.abspath(args.weights)), exist_ok=True)
        torch.save(Mixer(WIDTH, 6).state_dict(), args.weights)
        return 0
    torch.manual_seed(args.seed)
    embedder, mixer, head, norm = models(args.weights)
    images = torch.rand(args.images, 3, 96, 96)
    with torch.no_grad():
        scores = score(head, norm, mix(mixer, embed(embedder, images)))
    os.makedirs(args.out, exist_ok=True)
    torch.save(scores, os.path.join(args.out, "scores.pt"))
    print("top %d" % int(scores[0].argmax()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
