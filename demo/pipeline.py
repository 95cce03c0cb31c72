"""pipeline.py -- run the demo image-to-3D stand-in (see cascade.py) from the command line.

python3 demo/pipeline.py --seed 7 --size default --out DIR [--cache DIR]
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
    ap.add_argument("--out", required=True, help="directory for mesh.npz")
    ap.add_argument("--cache", default=None,
                    help="checkpoint cache (default: $XDG_CACHE_HOME/stagebench-demo)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-low-vram", dest="low_vram", action="store_false",
                    help="do not copy the active model for each stage")
    args = ap.parse_args(argv)
    try:
        scale = cascade.parse_size(args.size)
    except ValueError as e:
        ap.error(str(e))

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    t0 = time.perf_counter()
    log = lambda msg: print("[demo] " + msg, flush=True)  # noqa: E731
    pipe = cascade.Cascade1024Pipeline(scale=scale, cache=args.cache, device=args.device,
                                       low_vram=args.low_vram, log=log)
    pipe.load_models()
    path = pipe.run(args.seed, args.out)
    log("wrote %s in %.2f s" % (path, time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
