"""test_demo.py -- the demo pipeline at tiny size, plain and under the probe like the runner runs it."""
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import DEMO, run_probed

STAGES = ["setup", "preprocess", "camera", "structure", "shape_512", "shape_1024",
          "texture", "decode", "export"]
VARIANTS = {
    "eager": {},
    "staged": {"STAGEBENCH_STAGED": "1"},
    "staged-no-rng": {"STAGEBENCH_STAGED": "1", "STAGEBENCH_RNG_RESTORE": "0"},
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("demo-cache"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, cache):
    """Each variant run once at tiny size: {variant: (rc, events, out_dir, run_dir)}."""
    done = {}
    for variant, env in VARIANTS.items():
        run_dir = tmp_path_factory.mktemp(variant)
        env = dict(env, STAGEBENCH_MODE=variant, STAGEBENCH_ADAPTER="adapter",
                   STAGEBENCH_LATENTS=str(run_dir / "run-1.latents"),
                   STAGEBENCH_TRACE=str(run_dir / "run-1.trace.jsonl.zst"))
        out = run_dir / "out"
        rc, ev, stdout, stderr = run_probed(
            [sys.executable, os.path.join(DEMO, "pipeline.py"), "--seed", "7", "--size", "tiny",
             "--out", str(out), "--cache", cache], env)
        assert rc == 0, stderr
        done[variant] = (ev, out, run_dir, stdout)
    return done


def latents(events):
    return {e["name"]: e for e in events if e["kind"] == "latent"}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_enters_the_stages_in_order(runs, variant):
    ev, out, _, stdout = runs[variant]
    assert [e["stage"] for e in ev if e["kind"] == "stage"] == STAGES
    assert (out / "mesh.npz").exists()
    for stage in STAGES[1:]:
        assert "[demo] %s:" % stage in stdout


def test_eager_builds_everything_in_setup_with_four_backbones(runs):
    ev = runs["eager"][0]
    loads = [e for e in ev if e["kind"] == "load"]
    assert {e["stage"] for e in loads} == {"setup"}
    assert sum(e["name"] == "image_cond_backbone" for e in loads) == 4
    assert not any(e["kind"] == "release" for e in ev)


def test_staged_builds_each_model_in_its_stage_and_releases_it_after(runs):
    ev = runs["staged"][0]
    loads = {(e["kind"], e["name"]): e["stage"] for e in ev if e["kind"] in ("load", "reload")}
    assert loads[("load", "rembg_model")] == "preprocess"
    assert loads[("load", "image_cond_backbone")] == "preprocess"
    assert sum(e["kind"] == "load" and e["name"] == "image_cond_backbone" for e in ev) == 1
    assert loads[("load", "tex_slat_flow_model_1024")] == "texture"
    assert loads[("reload", "shape_slat_decoder")] == "decode"
    assert not any(e.get("outside") for e in ev)
    released = {e["name"]: e["stage"] for e in ev if e["kind"] == "release"}
    assert released["shape_slat_flow_model_512"] == "shape_1024"
    assert released["image_cond_backbone"] == "camera"
    assert all(e["nbytes"] > 0 for e in ev if e["kind"] == "release")


def test_staged_latents_equal_eager_bit_for_bit_and_files_match(runs):
    eager, staged = latents(runs["eager"][0]), latents(runs["staged"][0])
    assert set(eager) == {"image", "cond", "camera", "coords", "shape_512_slat",
                          "shape_1024_slat", "tex_slat", "vertices", "colors"}
    assert set(staged) == set(eager)
    for name in eager:
        assert staged[name]["sha256"] == eager[name]["sha256"], name
        assert staged[name]["dtype"] == eager[name]["dtype"]
    assert eager["tex_slat"]["dtype"] == "bfloat16"
    assert eager["shape_1024_slat"]["dtype"] == "float16"
    run_dir = runs["staged"][2]
    for e in staged.values():
        arr = np.load(run_dir / e["file"])
        assert hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest() == e["sha256"]
    a = np.load(runs["eager"][1] / "mesh.npz")
    b = np.load(runs["staged"][1] / "mesh.npz")
    assert np.array_equal(a["vertices"], b["vertices"]) and np.array_equal(a["colors"], b["colors"])


def test_without_rng_restore_latents_differ_from_the_first_mid_run_build(runs):
    ev = runs["staged-no-rng"][0]
    first_build = next(e["stage"] for e in ev if e["kind"] in ("load", "reload"))
    assert first_build == "preprocess"
    eager, plain = latents(runs["eager"][0]), latents(ev)
    start = STAGES.index(first_build)
    for name, e in plain.items():
        same = e["sha256"] == eager[name]["sha256"]
        assert same == (STAGES.index(e["stage"]) < start), name


def test_the_pipeline_runs_the_same_without_stagebench(runs, cache, tmp_path):
    out = tmp_path / "plain"
    rc, ev, stdout, stderr = run_probed(
        [sys.executable, os.path.join(DEMO, "pipeline.py"), "--seed", "7", "--size", "tiny",
         "--out", str(out), "--cache", cache], {}, with_fd=False)
    assert rc == 0, stderr
    a = np.load(runs["eager"][1] / "mesh.npz")
    b = np.load(out / "mesh.npz")
    assert np.array_equal(a["vertices"], b["vertices"]) and np.array_equal(a["colors"], b["colors"])


def test_more_steps_change_the_flow_stages_result_not_the_models(cache, tmp_path):
    """--steps: the sampler runs that many steps (the flow stages' outputs move, their shapes
    do not); 0 steps is refused."""
    outs = {}
    for steps in ("4", "9"):
        out = tmp_path / ("s" + steps)
        rc, ev, stdout, stderr = run_probed(
            [sys.executable, os.path.join(DEMO, "pipeline.py"), "--seed", "7", "--size", "tiny",
             "--out", str(out), "--cache", cache, "--steps", steps], {}, with_fd=False)
        assert rc == 0, stderr
        outs[steps] = np.load(out / "mesh.npz")
    assert outs["4"]["vertices"].shape == outs["9"]["vertices"].shape
    assert not np.array_equal(outs["4"]["vertices"], outs["9"]["vertices"])
    p = subprocess.run([sys.executable, os.path.join(DEMO, "pipeline.py"), "--steps", "0",
                        "--out", str(tmp_path / "z")], capture_output=True, text=True)
    assert p.returncode == 2 and "--steps" in p.stderr


def test_pipeline_rejects_a_bad_size():
    p = subprocess.run([sys.executable, os.path.join(DEMO, "pipeline.py"), "--size", "huge",
                        "--out", "/nonexistent"], capture_output=True, text=True)
    assert p.returncode == 2 and "size" in p.stderr


def _cascade():
    if DEMO not in sys.path:
        sys.path.insert(0, DEMO)
    import cascade
    return cascade


@pytest.mark.parametrize("threads", [1, 2])
def test_checkpoint_round_trip_is_exact_and_reads_into_the_modules_own_tensors(tmp_path, threads):
    import torch
    cascade = _cascade()
    src = torch.nn.Module()
    src.register_buffer("a", torch.randn(300, 70))
    src.register_buffer("b", torch.randn(5).to(torch.bfloat16))
    src.register_buffer("c", torch.arange(7, dtype=torch.int64))
    path = str(tmp_path / "m.safetensors")
    cascade.save_checkpoint(src.state_dict(), path, {"model": "m"})
    dst = torch.nn.Module()
    for name, t in src.state_dict().items():
        dst.register_buffer(name, torch.empty_like(t))
    ptrs = {n: t.data_ptr() for n, t in dst.state_dict().items()}
    old = cascade.READ_CHUNK
    cascade.READ_CHUNK = 4096  # several pieces per tensor, spread over the threads
    try:
        cascade.load_checkpoint_into(dst, path, threads=threads)
    finally:
        cascade.READ_CHUNK = old
    for name, t in src.state_dict().items():
        got = dst.state_dict()[name]
        assert got.dtype == t.dtype and torch.equal(got, t), name
        assert got.data_ptr() == ptrs[name], name
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]


def test_checkpoint_that_does_not_match_the_model_is_refused_naming_the_file(tmp_path):
    import torch
    cascade = _cascade()
    path = str(tmp_path / "m.safetensors")
    cascade.save_checkpoint({"w": torch.zeros(4, 4)}, path)
    for shape in [(4, 5), (16,)]:
        m = torch.nn.Module()
        m.register_buffer("w", torch.empty(shape))
        with pytest.raises(ValueError, match="m.safetensors.*tensor w"):
            cascade.load_checkpoint_into(m, path)
    m = torch.nn.Module()
    m.register_buffer("v", torch.empty(4, 4))
    with pytest.raises(ValueError, match="missing: v; unexpected: w"):
        cascade.load_checkpoint_into(m, path)
    with open(path, "r+b") as f:  # cut off the last tensor bytes
        f.truncate(os.path.getsize(path) - 4)
    m = torch.nn.Module()
    m.register_buffer("w", torch.empty(4, 4))
    with pytest.raises(ValueError, match="m.safetensors"):
        cascade.load_checkpoint_into(m, path)


def test_building_a_model_draws_from_the_cpu_generator_and_the_checkpoint_sets_every_value(
        tmp_path):
    import torch
    cascade = _cascade()
    pipe = cascade.Cascade1024Pipeline(scale=cascade.SIZES["tiny"], cache=str(tmp_path))
    pipe._checkpoint("rembg_model")  # written outside the measured generator state
    torch.manual_seed(1)
    before = torch.get_rng_state()
    a = pipe._load_model("rembg_model")
    assert not torch.equal(torch.get_rng_state(), before)
    torch.manual_seed(2)
    b = pipe._load_model("rembg_model")
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name
    assert os.listdir(tmp_path) == ["rembg_model-w%d.safetensors"
                                    % cascade.width_for(cascade.MODEL_MB["rembg_model"],
                                                        cascade.SIZES["tiny"])]
