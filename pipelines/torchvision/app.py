#!/usr/bin/env python3
"""Find the objects in a batch of images, label each one, and segment the scenes.

Three torchvision models: Faster R-CNN (ResNet-50 FPN) finds boxes, ResNet-50
labels the crop of each box, DeepLabV3 (ResNet-50) segments the whole image.
Weights come from --weights DIR; when a file is missing the weights are fetched
first (make_weights.py stands in for the download: random weights, saved once).
Without --input, synthetic test images are used.

    python3 app.py --out results/ [--seed 0] [--images 2] [--image-size 256]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torchvision.models.detection import fasterrcnn_resnet50_fpn
from torchvision.models.segmentation import deeplabv3_resnet50

HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHT_FILES = ("detector.pth", "classifier.pth", "segmenter.pth")
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def log(msg):
    print("[app] " + msg, flush=True)


def fetch_weights(weights_dir):
    if all(os.path.exists(os.path.join(weights_dir, f)) for f in WEIGHT_FILES):
        return
    log("fetching weights into %s" % weights_dir)
    subprocess.check_call([sys.executable, os.path.join(HERE, "make_weights.py"), weights_dir])


def load_weights(model, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state)
    return model.eval()


def build_models(weights_dir, detect_size, max_boxes):
    detector = fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None,
                                       min_size=detect_size, max_size=detect_size,
                                       rpn_pre_nms_top_n_test=200, rpn_post_nms_top_n_test=50,
                                       box_score_thresh=0.0, box_detections_per_img=max_boxes)
    detector = load_weights(detector, os.path.join(weights_dir, "detector.pth"))
    classifier = torchvision.models.resnet50(weights=None)
    classifier = load_weights(classifier, os.path.join(weights_dir, "classifier.pth"))
    segmenter = deeplabv3_resnet50(weights=None, weights_backbone=None, aux_loss=False)
    segmenter = load_weights(segmenter, os.path.join(weights_dir, "segmenter.pth"))
    return detector, classifier, segmenter


def load_images(paths, count, size):
    if paths:
        from torchvision.io import read_image
        return [F.interpolate(read_image(p)[None].float() / 255, size=(size, size),
                              mode="bilinear", align_corners=False)[0] for p in paths]
    return [torch.rand(3, size, size) for _ in range(count)]


def normalize(x):
    return (x - MEAN) / STD


@torch.no_grad()
def detect(detector, images, max_boxes):
    outputs = detector(images)
    return [out["boxes"][:max_boxes] for out in outputs]


@torch.no_grad()
def classify(classifier, images, boxes, crop_size=224):
    crops = []
    for image, image_boxes in zip(images, boxes):
        h, w = image.shape[1:]
        for box in image_boxes.tolist():
            x0, y0 = max(int(box[0]), 0), max(int(box[1]), 0)
            x1, y1 = min(int(box[2]) + 1, w), min(int(box[3]) + 1, h)
            crop = image[:, y0:max(y1, y0 + 1), x0:max(x1, x0 + 1)]
            crops.append(F.interpolate(crop[None], size=(crop_size, crop_size),
                                       mode="bilinear", align_corners=False)[0])
        if not len(image_boxes):
            crops.append(F.interpolate(image[None], size=(crop_size, crop_size),
                                       mode="bilinear", align_corners=False)[0])
    batch = torch.stack([normalize(c) for c in crops])
    return classifier(batch).softmax(dim=1)


@torch.no_grad()
def segment(segmenter, images):
    batch = torch.stack([normalize(image) for image in images])
    return segmenter(batch)["out"].argmax(dim=1)


def save_results(out_dir, boxes, probs, masks):
    os.makedirs(out_dir, exist_ok=True)
    labels = probs.argmax(dim=1).tolist()
    summary = {"boxes": [b.tolist() for b in boxes], "labels": labels,
               "classes_in_masks": sorted(set(masks.unique().tolist()))}
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(summary, f)
    np.save(os.path.join(out_dir, "masks.npy"), masks.numpy())
    return os.path.join(out_dir, "results.json")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", nargs="*", default=[], help="image files (default: synthetic)")
    ap.add_argument("--images", type=int, default=2, help="synthetic images (default 2)")
    ap.add_argument("--image-size", type=int, default=256)
    ap.add_argument("--detect-size", type=int, default=320)
    ap.add_argument("--max-boxes", type=int, default=4)
    ap.add_argument("--weights", default=os.path.expanduser("~/.cache/torchvision-app"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    fetch_weights(args.weights)
    detector, classifier, segmenter = build_models(args.weights, args.detect_size, args.max_boxes)
    log("models ready in %.1f s" % (time.perf_counter() - t0))

    images = load_images(args.input, args.images, args.image_size)
    boxes = detect(detector, images, args.max_boxes)
    log("%d boxes" % sum(len(b) for b in boxes))
    probs = classify(classifier, images, boxes)
    masks = segment(segmenter, images)
    path = save_results(args.out, boxes, probs, masks)
    log("wrote %s in %.1f s" % (path, time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
