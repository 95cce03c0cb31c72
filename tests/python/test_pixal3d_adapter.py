"""test_pixal3d_adapter.py -- pipelines/pixal3d-mac against a stand-in of the port
(tests/python/standins/pixal3d_port): stages, residency, events, one backbone, eager untouched."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, run_probed

PORT = os.path.join(ROOT, "tests", "python", "standins", "pixal3d_port")
PIPE = os.path.join(ROOT, "pipelines", "pixal3d-mac")
STAGES = ["setup", "preprocess", "camera", "structure", "shape_512", "shape_1024", "texture",
          "decode", "export"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pixal")
    subprocess.run([sys.executable, os.path.join(PORT, "make_model_dir.py"),
                    str(tmp / "model")], check=True)
    from PIL import Image
    Image.new("RGB", (32, 32), (200, 30, 90)).save(tmp / "in.png")
    out = {}
    for mode in ("eager", "staged"):
        log = tmp / (mode + ".log")
        env = {"STAGEBENCH_ADAPTER": os.path.join(PIPE, "adapter.py"),
               "STAGEBENCH_MODE": mode, "STAGEBENCH_STAGED": "1" if mode == "staged" else "0",
               "STAGEBENCH_LATENTS": str(tmp / (mode + ".latents")),
               "PIXAL3D_STANDIN_LOG": str(log)}
        rc, ev, stdout, err = run_probed(
            [sys.executable, os.path.join(PIPE, "run.py"), "--port", PORT, "--image",
             str(tmp / "in.png"), "--model-path", str(tmp / "model"), "--device", "cpu",
             "--out", str(tmp / mode)], env)
        assert rc == 0, err
        built = log.read_text().splitlines()
        out[mode] = (ev, built, (tmp / mode / "asset.glb").read_text())
    return out


def timeline(ev):
    t = []
    for e in ev:
        if e["kind"] == "stage":
            t.append(e["stage"])
        elif e["kind"] in ("load", "reload", "release"):
            t.append("%s %s" % (e["kind"], e["name"]))
    return t


def test_both_modes_enter_the_stages_in_order(runs):
    for mode in ("eager", "staged"):
        ev = runs[mode][0]
        assert [e["stage"] for e in ev if e["kind"] == "stage"] == STAGES, mode


def test_staged_builds_each_model_in_its_stage_and_releases_as_planned(runs):
    assert timeline(runs["staged"][0]) == [
        "setup", "preprocess", "camera", "release rembg_model",
        "structure", "load sparse_structure_flow_model", "load sparse_structure_decoder",
        "shape_512", "release sparse_structure_flow_model", "release sparse_structure_decoder",
        "load shape_slat_flow_model_512", "load shape_slat_decoder",
        "shape_1024", "release shape_slat_flow_model_512", "release shape_slat_decoder",
        "load shape_slat_flow_model_1024",
        "texture", "release shape_slat_flow_model_1024", "load tex_slat_flow_model_1024",
        "decode", "release tex_slat_flow_model_1024", "release image_cond_models",
        "reload shape_slat_decoder", "load tex_slat_decoder",
        "export", "release shape_slat_decoder", "release tex_slat_decoder"]
    loads = [e for e in runs["staged"][0] if e["kind"] in ("load", "reload")]
    assert len(loads) == 8 and not any(e.get("outside") for e in loads)


def test_staged_reads_no_weights_at_setup_and_builds_one_backbone_and_one_naf(runs):
    ev, built, _ = runs["staged"]
    assert built.count("backbone facebook/dinov3-vitl16") == 1
    assert built.count("naf") == 1
    assert [b for b in built if b.startswith("ckpt")][:1] == ["ckpt sparse_structure_flow_model"]
    assert not any(b.startswith("low_vram") for b in built)
    setup_loads = [e for e in ev if e["kind"] == "load" and e["stage"] == "setup"]
    assert setup_loads == []


def test_eager_is_the_ports_own_loading(runs):
    ev, built, _ = runs["eager"]
    assert built.count("backbone facebook/dinov3-vitl16") == 4 and built.count("naf") == 3
    assert sum(b.startswith("ckpt") for b in built) == 7
    assert any(b.startswith("low_vram copy") for b in built)
    assert not [e for e in ev if e["kind"] in ("release", "reload")]
    assert {e["stage"] for e in ev if e["kind"] == "load"} == {"setup"}


def test_sampler_outputs_are_fingerprinted_and_identical_across_modes(runs):
    lat = {m: [(e["name"], e["stage"], e["sha256"]) for e in runs[m][0] if e["kind"] == "latent"]
           for m in runs}
    assert [(n, s) for n, s, _ in lat["staged"]] == [
        ("structure_coords", "structure"), ("structure_feats", "structure"),
        ("shape_samples", "shape_512"), ("shape_samples", "shape_1024"),
        ("texture_samples", "texture")]
    assert lat["staged"] == lat["eager"]
    assert runs["staged"][2] == runs["eager"][2]  # the asset itself


def test_staged_refuses_the_ports_diagnostic_switches(tmp_path):
    rc, ev, out, err = run_probed(
        [sys.executable, "-c", "pass"],
        {"STAGEBENCH_ADAPTER": os.path.join(PIPE, "adapter.py"), "STAGEBENCH_STAGED": "1",
         "PIXAL3D_CPU_MODELS": "1"})
    assert rc == 3 and "PIXAL3D_CPU_MODELS" in err


def _in_standin(script, adapter=False):
    """Run `script` with this Python, the stand-in (and the adapter's
    directory) first on sys.path; returns its stdout, failing on a non-zero exit."""
    paths = [PORT] + ([PIPE] if adapter else [])
    prelude = "import sys; sys.path[:0] = %r\n" % paths
    p = subprocess.run([sys.executable, "-c", prelude + script], capture_output=True, text=True,
                       cwd=PORT, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_staged_naf_sharing_stores_one_upsampler_on_every_extractor_that_wants_one():
    # The port's init_pipeline calls _load_naf() on each extractor with use_naf_upsample and
    # ignores what it returns: _load_naf stores the upsampler as .naf_model. Sharing must put
    # the first one on every such extractor (not only return it), with eager's outputs.
    out = _in_standin('''
import copy, torch, adapter, generate_mps as gm
from types import SimpleNamespace
gm.load_runtime_deps()
image = torch.ones(4, 16)
def build(configs):
    pipe = SimpleNamespace(**{"image_cond_model_" + k: gm.build_image_cond_model(c, "cpu")
                              for k, c in configs.items()})
    gm.init_pipeline(pipe)
    return {k: getattr(pipe, "image_cond_model_" + k) for k in configs}
eager = build(copy.deepcopy(gm.IMAGE_COND_CONFIGS))
ss = gm.build_image_cond_model(dict(gm.IMAGE_COND_CONFIGS["ss"]), "cpu")
adapter._share_naf(type(ss), ss)
configs = copy.deepcopy(gm.IMAGE_COND_CONFIGS)
staged = build(configs)
nafs = [getattr(e, "naf_model", None) for k, e in staged.items()
        if configs[k].get("use_naf_upsample")]
assert len(nafs) == 3 and all(n is nafs[0] for n in nafs) and nafs[0] is not None, nafs
assert getattr(staged["ss"], "naf_model", None) is None
for k in staged:
    assert torch.equal(staged[k](image), eager[k](image)), k
print("ok")
''', adapter=True)
    assert out.strip() == "ok"


def test_the_standin_models_the_ports_failure_paths():
    # What the stand-in's README lists: if any of these stops raising, the stand-in has
    # become lenient and the adapter tests above prove less.
    out = _in_standin('''
import copy, torch, generate_mps as gm, pixal3d.models as models
gm.load_runtime_deps()
def raises(exc, fn, *a, **k):
    try:
        fn(*a, **k)
    except exc as e:
        return str(e)
    raise AssertionError("%s did not raise %s" % (fn, exc.__name__))
cfg = dict(gm.IMAGE_COND_CONFIGS["shape_1024"])
ext = gm.build_image_cond_model(cfg, "cpu")
print(raises(RuntimeError, ext, torch.ones(4, 16)))
assert ext._load_naf() is None and ext.naf_model is not None
ext(torch.ones(4, 16))
print(raises(RuntimeError, gm.build_image_cond_model, cfg, "cpu"))
print(raises(TypeError, models.from_pretrained, path="x"))
print(raises(SystemExit, gm.parse_args, ["in.png", "--texture-size", "256"]))
print(raises(RuntimeError, gm.main))
''')
    lines = out.splitlines()
    assert lines[0] == ("use_naf_upsample is set but the NAF upsampler is not loaded; "
                        "call _load_naf()")
    assert "cannot build it again" in lines[1] and "keyword" in lines[2]
