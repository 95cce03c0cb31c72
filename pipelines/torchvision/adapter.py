"""adapter.py -- stages app.py (an unmodified torchvision script) for stagebench.

Nothing of app.py is copied here. The adapter names:
- the stage functions of the main module (app.py runs as `python3 app.py`): each
  call enters its stage and its result is fingerprinted;
- the calls that build or load models (the two torchvision constructors the
  script imports by name, torchvision.models.resnet50, torch.load): in a staged
  run they are intercepted while the script sets itself up and return lazy
  stand-ins, built with the script's own arguments in the stage that uses them.

The script seeds once and then builds its models, whose random init draws from
the generator before the test images are drawn. STAGEBENCH_RNG_REPLAY=1 (the
"staged" variant) runs each constructor where the script calls it, one model at
a time, and drops it, so the images are eager's; "staged-no-replay" shows what
happens without it.
"""
import functools

# stage -> the models it uses (the names given to the intercepted constructors)
PLAN = {
    "detect": ["detector"],
    "classify": ["classifier"],
    "segment": ["segmenter"],
}
MODELS = {
    "detector": "torchvision.models.detection:fasterrcnn_resnet50_fpn",
    "classifier": "torchvision.models:resnet50",
    "segmenter": "torchvision.models.segmentation:deeplabv3_resnet50",
}


def stages_of(name):
    return [stage for stage, names in PLAN.items() if name in names]


def install(probe):
    for name, target in MODELS.items():
        probe.defer(target, name=name, stages=stages_of(name))
    if probe.staged:
        probe.defer_load("torch:load")
    probe.when_imported("app", functools.partial(_patch, probe))


def _patch(probe, app):
    probe.on_call(app, "build_models", "setup")
    probe.on_call(app, "load_images", "prepare", outputs=_images)
    probe.on_call(app, "detect", "detect", outputs=_boxes)
    probe.on_call(app, "classify", "classify", outputs="probs")
    probe.on_call(app, "segment", "segment", outputs=_masks)
    probe.on_call(app, "save_results", "write")


def _images(images):
    return {"image_%d" % i: im for i, im in enumerate(images)}


def _masks(masks):
    # class indices (int64): fingerprinted as float32, which the latent reader compares
    return {"masks": masks.float()}


def _boxes(boxes):
    return {"boxes_%d" % i: b for i, b in enumerate(boxes)}
