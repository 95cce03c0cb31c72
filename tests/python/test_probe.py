"""test_probe.py -- release, the lazy registry, RNG restore, events, fingerprints, activation."""
import hashlib
import json
import os
import random
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch
from torch import nn

from conftest import PROBE, SITE, run_probed
import stagebench_probe as sbp
from stagebench_probe import Probe, StageReleasedError, release, module_nbytes


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- release -----------------------------------------------------------------------

def test_release_frees_memory_even_while_held_and_call_names_module_and_stage():
    model = nn.Sequential(nn.Linear(5120, 5120), nn.Linear(5120, 16))  # ~105 MB
    held_weight = model[0].weight  # other code still holds the module and a parameter
    nbytes = module_nbytes(model)
    assert nbytes > 100 * 1024 * 1024
    before = rss_bytes()
    freed = release(model, name="text_encoder", stage="decode")
    after = rss_bytes()
    assert freed == nbytes
    assert before - after > 0.9 * nbytes, (before, after, nbytes)
    assert model[0].weight.device.type == "meta"
    assert model[0].weight.shape == (5120, 5120)
    assert held_weight.numel() == 0
    with pytest.raises(StageReleasedError) as exc:
        model(torch.zeros(1, 5120))
    msg = str(exc.value)
    assert "text_encoder" in msg and "'decode'" in msg
    with pytest.raises(StageReleasedError, match="text_encoder"):
        model[1](torch.zeros(1, 5120))  # a submodule held elsewhere fails too


def test_release_keeps_tied_weights_tied_and_leaves_excluded_backbone():
    backbone = nn.Linear(8, 8)
    head = nn.Linear(8, 8)
    head.weight = backbone.weight  # tied inside the released part below
    outer = nn.Sequential(backbone, head)
    extractor = nn.Sequential(nn.Linear(8, 8), backbone)
    release(extractor, name="ex", exclude=[backbone])
    assert backbone.weight.device.type == "cpu"
    backbone(torch.zeros(1, 8))  # still callable
    assert extractor[0].weight.device.type == "meta"
    release(outer, name="outer")
    assert outer[0].weight is outer[1].weight


# -- registry ----------------------------------------------------------------------

class Counter:
    def __init__(self, width=64):
        self.calls = 0
        self.width = width

    def __call__(self, *backbone):
        self.calls += 1
        return nn.Linear(self.width, self.width)


def kinds(events, kind):
    return [e for e in events if e["kind"] == kind]


def test_registry_builds_lazily_and_reports_load_release_reload(pipe_probe):
    probe = pipe_probe()
    build = Counter()
    enc = probe.register("encoder", build, ["encode", "decode"])
    probe.enter("encode")
    assert build.calls == 0, "entering a stage must not build"
    enc(torch.zeros(1, 64))
    enc(torch.zeros(1, 64))
    assert build.calls == 1
    real = probe.get("encoder")
    probe.enter("denoise")
    assert probe.resident() == []
    with pytest.raises(StageReleasedError, match="encoder was released when stage 'denoise'"):
        real(torch.zeros(1, 64))
    probe.enter("decode")
    assert build.calls == 1
    assert enc.eval() is enc  # methods returning the model give back the proxy
    assert build.calls == 2
    ev = probe.read_events()
    assert [e["stage"] for e in kinds(ev, "stage")] == ["encode", "denoise", "decode"]
    (load,) = kinds(ev, "load")
    assert load["name"] == "encoder" and load["stage"] == "encode"
    assert load["nbytes"] == 64 * 64 * 4 + 64 * 4 and load["seconds"] >= 0
    assert "outside" not in load
    (rel,) = kinds(ev, "release")
    assert rel == {**rel, "name": "encoder", "stage": "denoise", "nbytes": load["nbytes"]}
    (reload,) = kinds(ev, "reload")
    assert reload["stage"] == "decode" and reload["nbytes"] == load["nbytes"]
    order = [e["kind"] for e in ev if e["kind"] != "gpu"]
    assert order == ["stage", "load", "stage", "release", "stage", "reload"]


def test_entering_the_current_stage_again_writes_nothing(pipe_probe):
    probe = pipe_probe()
    probe.enter("a")
    probe.enter("a")
    assert [e["kind"] for e in probe.read_events()] == ["stage"]


def test_pin_keeps_a_model_resident_across_stages(pipe_probe):
    probe = pipe_probe()
    build = Counter()
    vae = probe.register("vae", build, ["decode"])
    probe.pin("vae")
    probe.enter("encode")
    vae(torch.zeros(1, 64))
    for stage in ("denoise", "decode", "export"):
        probe.enter(stage)
        vae(torch.zeros(1, 64))
    assert build.calls == 1
    assert probe.resident() == ["vae"]
    probe.pin("vae", False)
    probe.enter("after")
    assert probe.resident() == []
    ev = probe.read_events()
    assert len(kinds(ev, "load")) == 1 and "outside" not in kinds(ev, "load")[0]
    assert [e["stage"] for e in kinds(ev, "release")] == ["after"]


def test_model_used_outside_its_stages_is_built_and_flagged(pipe_probe, capsys):
    probe = pipe_probe()
    build = Counter()
    te = probe.register("text_encoder", build, ["encode"])
    probe.enter("decode")
    te(torch.zeros(1, 64))
    assert build.calls == 1
    (load,) = kinds(probe.read_events(), "load")
    assert load["outside"] is True and load["stage"] == "decode"
    err = capsys.readouterr().err
    assert "text_encoder" in err and "'decode'" in err


def test_share_builds_the_backbone_once_for_every_extractor(pipe_probe):
    probe = pipe_probe()
    backbone_build = Counter(width=256)
    probe.register("backbone", backbone_build, ["cond"])
    heads = Counter(width=8)
    names = ["ex%d" % i for i in range(4)]
    proxies = [probe.share(n, "backbone", build=lambda b: nn.Sequential(b, nn.Linear(256, 8)))
               for n in names]
    probe.enter("cond")
    outs = [p(torch.ones(1, 256)) for p in proxies]
    assert backbone_build.calls == 1
    assert probe.get("ex0")[0] is probe.get("ex3")[0]
    assert all(o.shape == (1, 8) for o in outs)
    del heads
    probe.enter("denoise")
    assert probe.resident() == []
    ev = probe.read_events()
    loads = {e["name"]: e["nbytes"] for e in kinds(ev, "load")}
    assert loads["backbone"] == 256 * 256 * 4 + 256 * 4
    assert all(loads[n] == 256 * 8 * 4 + 8 * 4 for n in names), "sharers count only their own bytes"
    rel = [e["name"] for e in kinds(ev, "release")]
    assert sorted(rel) == sorted(names + ["backbone"]) and rel[-1] == "backbone"


# -- RNG restore: the silent bug ------------------------------------------------------

NAMES = ("a", "b", "c")


def fixed_weights():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return {n: nn.Linear(32, 32).state_dict() for n in NAMES}


def build(weights, name):
    # like a real build: random init (CPU generator, and here Python's and
    # NumPy's too), then the checkpoint
    random.random()
    np.random.rand(3)
    m = nn.Linear(32, 32)
    m.load_state_dict(weights[name])
    return m


def run_stages(staged, rng_restore):
    """A pipeline that seeds once and draws each stage's noise from the global
    generators after using the stage's model: eager builds every model before
    seeding, staged builds each one mid-run."""
    probe = Probe(rng_restore=rng_restore)
    weights = fixed_weights()
    if staged:
        models = {n: probe.register(n, lambda n=n: build(weights, n), [n]) for n in NAMES}
    else:
        models = {n: build(weights, n) for n in NAMES}
    torch.manual_seed(7)
    random.seed(7)
    np.random.seed(7)
    outs = []
    with torch.no_grad():
        for name in NAMES:
            probe.enter(name)
            h = models[name](torch.ones(2, 32))
            outs.append((h + torch.randn(2, 32), random.random(), float(np.random.rand())))
    return outs


def test_rng_restore_keeps_noise_bit_identical_and_no_restore_changes_it():
    eager = run_stages(staged=False, rng_restore=True)
    staged = run_stages(staged=True, rng_restore=True)
    plain = run_stages(staged=True, rng_restore=False)
    for (xe, re_, ne), (xs, rs, ns) in zip(eager, staged):
        assert torch.equal(xe, xs) and re_ == rs and ne == ns
    for (xe, re_, ne), (xp, rp, np_) in zip(eager, plain):
        assert not torch.equal(xe, xp) and re_ != rp and ne != np_


# -- events ----------------------------------------------------------------------------

def test_events_on_a_pipe_are_json_lines_with_monotonic_time(pipe_probe):
    probe = pipe_probe(mode="staged")
    t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
    probe.enter("encode")
    probe.mark("a note with \"quotes\" and \u00e9")
    probe.emit("load", name="x", stage="encode", nbytes=3, seconds=0.5)
    t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
    ev = probe.read_events()
    assert [e["kind"] for e in ev] == ["stage", "mark", "load"]
    assert all(e["type"] == "event" for e in ev)
    monos = [e["mono"] for e in ev]
    assert monos == sorted(monos) and t0 <= monos[0] and monos[-1] <= t1
    assert ev[1]["note"] == "a note with \"quotes\" and \u00e9"


def test_probe_without_fd_is_a_silent_noop_and_the_registry_still_works(tmp_path, capsys):
    probe = Probe.from_env({"STAGEBENCH_LATENTS": str(tmp_path / "run.latents")})
    assert not probe.events.on
    assert probe.emit("mark", note="x") is None
    assert probe.fingerprint("z", torch.ones(3)) is None
    m = probe.register("m", lambda: nn.Linear(4, 4), ["s"])
    probe.enter("s")
    m(torch.zeros(1, 4))
    probe.enter("t")
    assert probe.resident() == []
    assert not (tmp_path / "run.latents").exists()
    assert capsys.readouterr().err == ""


def test_a_closed_fd_turns_events_off_with_one_warning(capsys):
    r, w = os.pipe()
    os.close(r)
    probe = Probe(fd=w)
    import signal
    old = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        assert probe.mark("first") is None
        assert probe.mark("second") is None
    finally:
        signal.signal(signal.SIGPIPE, old)
        os.close(w)
    assert capsys.readouterr().err.count("events are off") == 1


# -- fingerprints --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,name", [(torch.float32, "float32"), (torch.float16, "float16"),
                                        (torch.float64, "float64"), (torch.bfloat16, "bfloat16")])
def test_fingerprint_hashes_raw_bytes_and_saves_npy(pipe_probe, tmp_path, dtype, name):
    latents = tmp_path / "run-1.latents"
    probe = pipe_probe(latents_dir=str(latents))
    probe.enter("denoise")
    t = torch.linspace(-3, 3, 24, dtype=torch.float32).reshape(2, 3, 4).to(dtype)
    t = t.transpose(1, 2)  # not contiguous: the hash is of C order
    probe.fingerprint("latent", t)
    probe.fingerprint("latent", t)  # a second copy gets its own file
    ev = probe.read_events()
    first, second = kinds(ev, "latent")
    if dtype == torch.bfloat16:
        raw = t.contiguous().view(torch.int16).numpy().view(np.uint16)
    else:
        raw = t.contiguous().numpy()
    assert first["sha256"] == hashlib.sha256(raw.tobytes()).hexdigest()
    assert first["dtype"] == name and first["shape"] == [2, 4, 3]
    assert first["stage"] == "denoise" and first["name"] == "latent"
    assert first["file"] == os.path.join("run-1.latents", "latent.npy")
    assert second["file"] == os.path.join("run-1.latents", "latent-2.npy")
    saved = np.load(tmp_path / first["file"])
    assert saved.dtype == raw.dtype and np.array_equal(saved, raw)


# -- hooks ---------------------------------------------------------------------------------

def test_on_call_enters_stages_and_fingerprints_outputs(pipe_probe, tmp_path):
    probe = pipe_probe(latents_dir=str(tmp_path / "r.latents"))

    class Pipe:
        def encode(self, x):
            return x * 2

        def sample(self, x, resolution=512):
            return x + resolution, x - 1

        @staticmethod
        def export(x):
            return None

    probe.on_call(Pipe, "encode", "encode", outputs="emb")
    probe.on_call(Pipe, "sample", lambda self, x, resolution=512: "shape_%d" % resolution,
                  outputs=["{stage}_hi", "{stage}_lo"])
    probe.on_call(Pipe, "encode", "again")  # wrapping twice is a no-op
    probe.on_call(Pipe, "export", "export")
    p = Pipe()
    assert torch.equal(p.encode(torch.ones(2)), torch.full((2,), 2.0))
    p.sample(torch.ones(2), resolution=1024)
    Pipe.export(1)
    ev = probe.read_events()
    assert [e["stage"] for e in kinds(ev, "stage")] == ["encode", "shape_1024", "export"]
    assert [(e["name"], e["stage"]) for e in kinds(ev, "latent")] == [
        ("emb", "encode"), ("shape_1024_hi", "shape_1024"), ("shape_1024_lo", "shape_1024")]


def test_when_imported_patches_a_module_as_it_is_imported(tmp_path, monkeypatch):
    (tmp_path / "thirdparty_pipe_mod.py").write_text(textwrap.dedent("""
        class Pipe:
            def run(self):
                return "plain"
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = Probe()
    seen = []

    def patch(mod):
        seen.append(mod.__name__)
        mod.Pipe.run = lambda self: "patched"
    probe.when_imported("thirdparty_pipe_mod", patch)
    assert seen == []
    import thirdparty_pipe_mod
    assert seen == ["thirdparty_pipe_mod"]
    assert thirdparty_pipe_mod.Pipe().run() == "patched"
    probe.when_imported("thirdparty_pipe_mod", lambda mod: seen.append("again"))
    assert seen[-1] == "again"  # already imported: called at once
    sys.modules.pop("thirdparty_pipe_mod")


# -- activation through sitecustomize ------------------------------------------------------

CHECK = "import sys; print('stagebench_probe' in sys.modules)"


def test_sitecustomize_imports_nothing_without_stagebench_env():
    rc, ev, out, err = run_probed([sys.executable, "-c", CHECK], {}, with_fd=False)
    assert (rc, out.strip(), ev) == (0, "False", [])


def test_sitecustomize_runs_the_adapter_once_and_leaves_the_fd_to_children(tmp_path):
    (tmp_path / "my_adapter.py").write_text(textwrap.dedent("""
        def install(probe):
            probe.mark("installed, staged=%s" % probe.staged)
            probe.register("m", lambda: None, ["s"])  # staged loading engaged
            probe.enter("s")
    """))
    code = ("import os, sys; print('stagebench_probe' in sys.modules, "
            "'STAGEBENCH_FD' in os.environ, 'STAGEBENCH_ADAPTER' in os.environ, "
            "os.environ.get('STAGEBENCH_PROBE_PID') == str(os.getpid()))")
    rc, ev, out, err = run_probed([sys.executable, "-c", code],
                                  {"STAGEBENCH_ADAPTER": str(tmp_path / "my_adapter.py"),
                                   "STAGEBENCH_STAGED": "1", "STAGEBENCH_MODE": "staged"})
    assert rc == 0, err
    assert out.split() == ["True", "True", "False", "True"]
    notes = [e["note"] for e in ev if e["kind"] == "mark"]
    assert notes[-1] == "installed, staged=True", err
    assert "mode=staged" in notes[0]


def test_a_broken_adapter_stops_the_run_with_exit_3(tmp_path):
    (tmp_path / "bad_adapter.py").write_text("def install(probe):\n    raise RuntimeError('nope')\n")
    rc, ev, out, err = run_probed([sys.executable, "-c", "print('pipeline ran')"],
                                  {"STAGEBENCH_ADAPTER": str(tmp_path / "bad_adapter.py")})
    assert rc == 3 and "pipeline ran" not in out
    assert "nope" in err and "bad_adapter.py" in err


def test_integer_and_bool_outputs_are_fingerprinted_as_float64(pipe_probe, tmp_path):
    probe = pipe_probe(latents_dir=str(tmp_path / "run.latents"))
    probe.fingerprint("masks", torch.tensor([[0, 3], [7, 1]]))
    probe.fingerprint("keep", np.array([True, False]))
    ev = [e for e in probe.read_events() if e["kind"] == "latent"]
    assert [e["dtype"] for e in ev] == ["float64", "float64"]
    arr = np.load(tmp_path / "run.latents" / "masks.npy")
    assert arr.dtype == np.float64 and arr.tolist() == [[0.0, 3.0], [7.0, 1.0]]
    assert ev[0]["sha256"] == hashlib.sha256(arr.tobytes()).hexdigest()


FORK_WHILE_EMITTING = textwrap.dedent("""
    import os, sys, threading, time
    from stagebench_probe import Probe
    from stagebench_probe.events import Emitter
    probe = Probe(emitter=Emitter(os.open(os.devnull, os.O_WRONLY)))
    stop = False
    def busy():
        k = 0
        while not stop:
            k += 1
            probe.enter("s%d" % (k % 2))
            probe.mark("busy %d" % k)
    t = threading.Thread(target=busy)
    t.start()
    kids = []
    for i in range(30):
        pid = os.fork()
        if pid == 0:
            probe.enter("child")
            probe.mark("child")
            probe.events.emit("mark", note="child")
            os._exit(0)
        kids.append(pid)
    stop = True
    t.join()
    # a child that is not done after 30 s is stuck on a lock held at the fork
    deadline = time.monotonic() + 30
    hung = 0
    for pid in kids:
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                hung += 1
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                break
            time.sleep(0.01)
    print("hung", hung)
""")


def test_a_child_forked_while_a_thread_emits_does_not_deadlock():
    p = subprocess.run([sys.executable, "-c", FORK_WHILE_EMITTING], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=PROBE))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "hung 0", p.stderr
