"""pipeline.py -- run the demo image-to-3D stand-in (see cascade.py) from the command line.

python3 demo/pipeline.py --seed 7 --size default --out DIR [--cache DIR]
python3 demo/pipeline.py --prepare --size default [--cache DIR]   (checkpoints only)
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import cascade  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description="Demo image-to-3D pipeline (a Pixal3D "
                                 "1024_cascade stand-in).")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--size", default="default",
                    help="tiny|small|default|large or a scale factor (default: default)")
    ap.add_argument("--out", help="directory for mesh.npz (required unless --prepare)")
    ap.add_argument("--prepare", action="store_true",
                    help="only write the size's checkpoints into the cache, then exit "
                    "(the pipeline file's prepare command: never inside a measured run)")
    ap.add_argument("--cache", default=None,
                    help="checkpoint cache (default: $XDG_CACHE_HOME/stagebench-demo)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=cascade.STEPS,
                    help="sampler steps per flow model (default: %(default)s); more steps make "
                         "the four flow stages longer without changing any model's memory")
    ap.add_argument("--no-low-vram", dest="low_vram", action="store_false",
                    help="do not copy the active model for each stage")
    args = ap.parse_args(argv)
    try:
        scale = cascade.parse_size(args.size)
    except ValueError as e:
        ap.error(str(e))

    if args.steps < 1:
        ap.error("--steps must be 1 or more")
    if not args.out and not args.prepare:
        ap.error("--out is required")

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    t0 = time.perf_counter()
    log = lambda msg: print("[demo] " + msg, flush=True)  # noqa: E731
    pipe = cascade.Cascade1024Pipeline(scale=scale, cache=args.cache, device=args.device,
                                       low_vram=args.low_vram, log=log, steps=args.steps)
    if args.prepare:
        names = cascade.PIPELINE_MODELS + cascade.IMAGE_COND_MODELS + ["image_cond_backbone"]
        for name in names:
            pipe._checkpoint(name)  # written once, atomically; kept when present
        log("prepare: %d checkpoints in %s in %.2f s" % (len(names), pipe.cache,
                                                         time.perf_counter() - t0))
        return 0
    pipe.load_models()
    path = pipe.run(args.seed, args.out)
    log("wrote %s in %.2f s" % (path, time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
