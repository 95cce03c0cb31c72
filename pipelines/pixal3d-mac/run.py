#!/usr/bin/env python3
"""run.py -- drive a Pixal3D-mac checkout's 1024_cascade once, as its generate_mps.py does.

    python run.py --port DIR --image FILE --out DIR [--seed 7] [--device mps]
                  [--texture-size 2048] [--model-path TencentARC/Pixal3D]

generate_mps.py is imported as a module (its main() is not called): parse_args,
load_runtime_deps, _configure_fdg_environment, resolve_device, load_pipeline,
image_to_asset, output_glb_path, asset_to_glb. Nothing of the port is changed
here; staged loading comes only from adapter.py through stagebench's probe.

The checkout: --port, else $PIXAL3D_MAC_DIR, else the checkout whose .venv runs
this Python, else the current directory; it must hold generate_mps.py.
"""
import argparse
import os
import sys


def find_port(given):
    cands = [given, os.environ.get("PIXAL3D_MAC_DIR")]
    prefix = os.path.realpath(sys.prefix)
    if os.path.basename(prefix) == ".venv":
        cands.append(os.path.dirname(prefix))
    cands.append(os.getcwd())
    for c in cands:
        if c and os.path.isfile(os.path.join(c, "generate_mps.py")):
            return os.path.realpath(c)
    raise SystemExit("run.py: no Pixal3D-mac checkout (a directory holding generate_mps.py) "
                     "in --port, $PIXAL3D_MAC_DIR, this Python's .venv or the current "
                     "directory (looked at: %s)" % ", ".join(c for c in cands if c))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--port", default="")
    ap.add_argument("--image", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", default="7")
    ap.add_argument("--device", default="mps")
    ap.add_argument("--texture-size", default="2048")
    ap.add_argument("--model-path", default="")
    ap.add_argument("--pipeline-type", default="1024_cascade")
    args = ap.parse_args(argv)
    port = find_port(args.port)
    image_path = os.path.abspath(args.image)
    os.makedirs(args.out, exist_ok=True)
    out = os.path.abspath(os.path.join(args.out, "asset.glb"))
    sys.path.insert(0, port)
    os.chdir(port)

    import generate_mps as gm
    port_argv = [image_path, "--output", out, "--device", args.device, "--seed", args.seed,
                 "--pipeline-type", args.pipeline_type, "--texture-size", args.texture_size]
    if args.model_path:
        port_argv += ["--model-path", args.model_path]
    pargs = gm.parse_args(port_argv)
    gm.load_runtime_deps()
    gm._configure_fdg_environment(pargs)
    device = gm.resolve_device(pargs.device)
    pipeline = gm.load_pipeline(pargs, device=device)
    from PIL import Image
    image = Image.open(image_path)
    asset = gm.image_to_asset(pipeline, image, pargs, device=device,
                              tmp_dir=os.path.join(args.out, "tmp"))
    glb = gm.output_glb_path(pargs.output)
    gm.asset_to_glb(asset, glb, pargs)
    print("[pixal3d-mac] wrote %s" % glb, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
