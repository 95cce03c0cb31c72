"""Write the stand-in's model directory (pipeline.json and seven tiny checkpoints)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pixal3d.models import write_checkpoint  # noqa: E402

MODELS = {
    "sparse_structure_flow_model": 8, "sparse_structure_decoder": 8,
    "shape_slat_flow_model_512": 8, "shape_slat_flow_model_1024": 8,
    "shape_slat_decoder": 8, "tex_slat_flow_model_1024": 8, "tex_slat_decoder": 8,
}


def main(out):
    paths = {}
    for i, (k, w) in enumerate(MODELS.items()):
        paths[k] = "ckpts/%s" % k
        write_checkpoint(os.path.join(out, paths[k]), w, seed=i)
    with open(os.path.join(out, "pipeline.json"), "w") as f:
        json.dump({"models": paths}, f)


if __name__ == "__main__":
    main(sys.argv[1])
