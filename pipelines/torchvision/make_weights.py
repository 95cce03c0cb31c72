#!/usr/bin/env python3
"""Stand-in for a weights download: random weights for app.py's three models, saved once.

    python3 make_weights.py DIR

Builds each model with a fixed seed and writes DIR/detector.pth, classifier.pth,
segmenter.pth (state dicts; files already there are kept). No network access.
"""
import os
import sys

import torch
import torchvision


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: make_weights.py DIR\n")
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    models = {
        "detector.pth": lambda: torchvision.models.detection.fasterrcnn_resnet50_fpn(
            weights=None, weights_backbone=None),
        "classifier.pth": lambda: torchvision.models.resnet50(weights=None),
        "segmenter.pth": lambda: torchvision.models.segmentation.deeplabv3_resnet50(
            weights=None, weights_backbone=None, aux_loss=False),
    }
    for i, (name, build) in enumerate(models.items()):
        path = os.path.join(out, name)
        if os.path.exists(path):
            continue
        torch.manual_seed(1000 + i)
        tmp = path + ".tmp%d" % os.getpid()
        torch.save(build().state_dict(), tmp)
        os.replace(tmp, path)  # a concurrent run never reads half a file
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
