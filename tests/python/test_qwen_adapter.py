"""test_qwen_adapter.py -- pipelines/qwen-image against a stand-in of diffusers' QwenImage21Pipeline
(tests/python/standins/qwen): stages, residency, .config without loading, eager and offload."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, run_probed

STANDIN = os.path.join(ROOT, "tests", "python", "standins", "qwen")
PIPE = os.path.join(ROOT, "pipelines", "qwen-image")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("qwen")
    subprocess.run([sys.executable, os.path.join(STANDIN, "make_model_dir.py"),
                    str(tmp / "model")], check=True)
    out = {}
    for variant in ("eager", "staged", "offload"):
        log = tmp / (variant + ".log")
        env = {"STAGEBENCH_ADAPTER": os.path.join(PIPE, "adapter.py"),
               "STAGEBENCH_MODE": variant,
               "STAGEBENCH_STAGED": "1" if variant == "staged" else "0",
               "QWEN_STANDIN_LOG": str(log)}
        argv = [sys.executable, os.path.join(PIPE, "run.py"), "--model", str(tmp / "model"),
                "--width", "128", "--height", "128", "--steps", "3", "--device", "cpu",
                "--dtype", "float32", "--out", str(tmp / variant)]
        if variant == "offload":
            argv.append("--offload")
        rc, ev, stdout, err = run_probed(argv, env, extra_path=[STANDIN])
        assert rc == 0, err
        out[variant] = (ev, log.read_text().splitlines())
    return out


def timeline(ev):
    t = []
    for e in ev:
        if e["kind"] == "stage":
            t.append(e["stage"])
        elif e["kind"] in ("load", "reload", "release"):
            t.append("%s %s" % (e["kind"], e["name"]))
    return t


def test_staged_holds_the_text_encoder_in_encode_and_the_transformer_in_denoise(runs):
    ev, built = runs["staged"]
    assert timeline(ev) == ["setup", "encode", "load text_encoder",
                            "denoise", "release text_encoder", "load transformer",
                            "decode", "release transformer"]
    # the VAE loaded at setup and stayed; the two big models only in their stage
    assert built == ["build vae", "build text_encoder", "build transformer"]
    assert not any(e.get("outside") for e in ev if e["kind"] == "load")


def test_eager_and_offload_load_everything_at_setup_untouched(runs):
    for variant in ("eager", "offload"):
        ev, built = runs[variant]
        assert timeline(ev) == ["setup", "load text_encoder", "load transformer",
                                "encode", "denoise", "decode"], variant
        assert sorted(built[:3]) == ["build text_encoder", "build transformer", "build vae"]
    assert runs["offload"][1][-1] == "offload cpu"


def test_latents_are_identical_in_every_variant(runs):
    lat = {v: [(e["name"], e["stage"], e["sha256"]) for e in runs[v][0] if e["kind"] == "latent"]
           for v in runs}
    assert [(n, s) for n, s, _ in lat["eager"]] == [("latents", "decode"), ("image", "decode")]
    assert lat["staged"] == lat["eager"] == lat["offload"]


def test_a_stand_in_answers_config_and_refuses_private_attributes_without_loading(pipe_probe):
    sys.path.insert(0, PIPE)
    try:
        import importlib
        adapter = importlib.import_module("adapter")
    finally:
        sys.path.remove(PIPE)
    probe = pipe_probe(staged=True)
    built = []
    probe.register("transformer", lambda: built.append(1) or __import__("torch").nn.Linear(2, 2),
                   ["denoise"])
    comp = adapter.Component(probe, "transformer", lambda: {"in_channels": 64})
    assert comp.config == {"in_channels": 64}
    assert not hasattr(comp, "_hf_hook")
    assert built == []
    assert comp.weight.shape == (2, 2) and built == [1]
    sys.modules.pop("adapter", None)
