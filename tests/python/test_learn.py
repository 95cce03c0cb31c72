"""test_learn.py -- a staging plan learned from one eager run (STAGEBENCH_LEARN), then
installed as the adapter of eager and staged runs: the models by call site (classes of the
script, a library's function, torch.load + load_state_dict), the stages by use, identical
outputs, the releases, a model used where the learning run never saw it, and a plan used
on a script that changed."""
import ast
import os
import textwrap

import pytest

from conftest import run_probed

ZOO = """
from torch import nn
def big_net(width, depth=2):
    return nn.Sequential(*[nn.Linear(width, width) for _ in range(depth)])
def other_net(width):
    return nn.Linear(width, width)
"""

APP = """
import os
import sys
import torch
from torch import nn
import zoo


class Encoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))

    def forward(self, x):
        return self.body(x)


class Decoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, 8)

    def forward(self, x):
        return self.proj(x)

    def decode(self, x):
        return self.forward(x).tanh()


def build(weights):
    encoder = Encoder(256)
    encoder.load_state_dict(torch.load(weights))
    encoder.eval()
    denoiser = zoo.%(maker)s
    decoder = Decoder(256)
    return encoder, denoiser, decoder


def encode(encoder, x):
    return encoder(x)


def denoise(denoiser, h):
    for _ in range(3):
        h = denoiser(h)
    return h


def main():
    torch.manual_seed(7)
    encoder, denoiser, decoder = build(sys.argv[1])
    x = torch.randn(4, 256)
    with torch.no_grad():
        h = encode(encoder, x)
        h = denoise(denoiser, h)
        y = decoder.decode(h)
        if os.environ.get("AGAIN"):
            y = y + encode(encoder, x)[:, :8]
    print("sum %%.6f" %% float(y.sum()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
"""


def _zoo(tmp_path):
    """A third-party library: zoo.py in a site-packages directory."""
    d = tmp_path / "site-packages"
    d.mkdir(exist_ok=True)
    return d / "zoo.py"


def _write(tmp_path, pad=0, maker="big_net(256, depth=4)"):
    if not _zoo(tmp_path).exists():
        _zoo(tmp_path).write_text(ZOO)
    (tmp_path / "app.py").write_text("\n" * pad + APP % {"maker": maker})
    weights = tmp_path / "enc.pt"
    if not weights.exists():
        import torch
        from torch import nn
        torch.manual_seed(1)
        body = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256))
        torch.save({"body." + k: v for k, v in body.state_dict().items()}, str(weights))
    return [os.environ.get("SB_PYTHON", "/usr/bin/python3"), str(tmp_path / "app.py"),
            str(weights)]


def _run(tmp_path, argv, env):
    rc, events, out, err = run_probed(argv, env, cwd=str(tmp_path),
                                      extra_path=[str(tmp_path / "site-packages")])
    return rc, events, out, err


def _learn(tmp_path, argv):
    plan = tmp_path / "plan.py"
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_LEARN": str(plan)})
    assert rc == 0, err
    return plan, events, out


def _tables(plan):
    tree = ast.parse(plan.read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id in ("MODELS", "STAGES"):
            found[node.targets[0].id] = ast.literal_eval(node.value)
    return found["MODELS"], found["STAGES"]


def _seq(events):
    return [(e["kind"], e.get("name") or e.get("stage")) for e in events
            if e["kind"] in ("stage", "load", "release", "reload")]


def _latents(events):
    return {(e["name"], e["stage"]): e["sha256"] for e in events if e["kind"] == "latent"}


def test_learned_plan(tmp_path):
    argv = _write(tmp_path)
    plan, events, out = _learn(tmp_path, argv)
    models, stages = _tables(plan)
    assert list(models) == ["encoder", "denoiser", "decoder"]
    assert models["encoder"]["by"] == "app:Encoder"
    assert models["denoiser"]["by"] == "zoo:big_net"
    assert models["decoder"]["uses"] == ["decode"]
    assert models["encoder"]["at"].startswith("app.py:")
    assert [(s["name"], s["models"], s["enter"]) for s in stages] == [
        ("encode", ["encoder"], "app:encode"),
        ("denoise", ["denoiser"], "app:denoise"),
        ("decoder.decode", ["decoder"], None)]
    assert any(e["kind"] == "mark" and "3 model(s), 3 stage(s)" in e["note"] for e in events)


def test_eager_and_staged_from_the_plan(tmp_path):
    argv = _write(tmp_path)
    plan, _, learned_out = _learn(tmp_path, argv)
    common = {"STAGEBENCH_ADAPTER": str(plan), "STAGEBENCH_RNG_REPLAY": "1"}
    rc, eager, eout, err = _run(tmp_path, argv, dict(common))
    assert rc == 0, err
    rc, staged, sout, err = _run(tmp_path, argv, dict(common, STAGEBENCH_STAGED="1"))
    assert rc == 0, err
    assert eout == sout == learned_out
    assert _seq(eager) == [("stage", "setup"), ("load", "encoder"), ("load", "denoiser"),
                           ("load", "decoder"), ("stage", "encode"), ("stage", "denoise"),
                           ("stage", "decoder.decode")]
    assert _seq(staged) == [("stage", "setup"), ("stage", "encode"), ("load", "encoder"),
                            ("stage", "denoise"), ("release", "encoder"), ("load", "denoiser"),
                            ("stage", "decoder.decode"), ("release", "denoiser"),
                            ("load", "decoder")]
    assert _latents(eager) == _latents(staged)
    assert ("denoiser#3", "denoise") in _latents(eager)
    assert ("decoder.decode", "decoder.decode") in _latents(eager)


def test_model_used_where_the_plan_never_saw_it(tmp_path):
    argv = _write(tmp_path)
    plan, _, _ = _learn(tmp_path, argv)
    common = {"STAGEBENCH_ADAPTER": str(plan), "STAGEBENCH_RNG_REPLAY": "1", "AGAIN": "1"}
    rc, eager, eout, err = _run(tmp_path, argv, dict(common))
    assert rc == 0, err
    rc, staged, sout, err = _run(tmp_path, argv, dict(common, STAGEBENCH_STAGED="1"))
    assert rc == 0, err
    assert eout == sout
    assert ("reload", "encoder") in _seq(staged)
    assert "encoder used in stage 'decoder.decode'" in err


def test_plan_on_a_changed_script(tmp_path):
    argv = _write(tmp_path)
    plan, _, _ = _learn(tmp_path, argv)
    env = {"STAGEBENCH_ADAPTER": str(plan), "STAGEBENCH_STAGED": "1"}
    # the same calls two lines further down: found again, and said
    _write(tmp_path, pad=2)
    rc, events, out, err = _run(tmp_path, argv, env)
    assert rc == 0, err
    notes = [e["note"] for e in events if e["kind"] == "mark"]
    assert any("zoo:big_net is called at app.py:" in n for n in notes), notes
    assert ("load", "denoiser") in _seq(events)
    # another function makes the denoiser now: the plan says it no longer finds it
    _write(tmp_path, maker="other_net(256)")
    rc, events, out, err = _run(tmp_path, argv, env)
    assert rc == 0, err
    assert "model 'denoiser' (made at app.py:" in err and "learn it again" in err
    assert ("load", "encoder") in _seq(events)


def test_call_from_inside_a_library_is_not_the_planned_one(tmp_path):
    """zoo.big_net called by another library function, not by the script: left alone."""
    argv = _write(tmp_path)
    plan, _, _ = _learn(tmp_path, argv)
    _zoo(tmp_path).write_text(ZOO + "\ndef wrapped(width):\n    return big_net(width)\n")
    _write(tmp_path, maker="wrapped(256)")
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_ADAPTER": str(plan),
                                                 "STAGEBENCH_STAGED": "1"})
    assert rc == 0, err
    assert ("load", "denoiser") not in _seq(events)
    assert "model 'denoiser'" in err


@pytest.mark.parametrize("staged", ["", "1"])
def test_no_plan_is_learned_without_the_variable(tmp_path, staged):
    argv = _write(tmp_path)
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_STAGED": staged})
    assert not (tmp_path / "plan.py").exists()
    if staged:
        assert rc == 3 and "no adapter was given" in err
    else:
        assert rc == 0, err


CUSTOM_LOADER = """
import sys
import torch
from torch import nn


def read_into(model, seed):
    # a loader of the script's own: writes the weights into the model it is given
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g))


def build():
    other = nn.Linear(64, 64)
    net = nn.Linear(64, 64)
    read_into(net, 5)
    return other, net


def first(other, x):
    return other(x)


def second(net, x):
    return net(x)


def main():
    torch.manual_seed(0)
    other, net = build()
    x = torch.ones(2, 64)
    y = first(other, x)
    print("sum %.6f" % float(second(net, y).sum()))


if __name__ == "__main__":
    main()
"""


def test_a_model_its_own_loader_wrote_into_is_kept_not_rebuilt(tmp_path):
    """Staged, a model the script used while setting itself up (here: its own checkpoint
    reader) is kept resident: a rebuild would lose what that code did to it."""
    (tmp_path / "app.py").write_text(CUSTOM_LOADER)
    argv = [os.environ.get("SB_PYTHON", "/usr/bin/python3"), str(tmp_path / "app.py")]
    plan, _, learned_out = _learn(tmp_path, argv)
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_ADAPTER": str(plan),
                                                 "STAGEBENCH_STAGED": "1"})
    assert rc == 0, err
    assert out == learned_out
    assert "not staged: net (" in err and "used while the script sets itself up" in err
    assert "kept resident; forced by app:read_into at app.py:" in err
    assert ("release", "net") not in _seq(events)
    assert ("load", "other") in _seq(events)



QUERIED = """
import sys
import torch
import zoo


def main():
    torch.manual_seed(0)
    net = zoo.make_net(64)
    net.to(torch.float64)
    x = torch.ones(2, 64, dtype=torch.float64)
    # a library's device walk before the first call (diffusers' get_module_execution_device)
    device, dtype = zoo.execution_device(net)
    print("asked", device, dtype)
    with torch.no_grad():
        print("sum %.6f" % float(zoo.run(net, x.to(device)).sum()))


if __name__ == "__main__":
    main()
"""

ZOO_QUERY = """
import torch
class Net(nn.Module):
    # device and dtype properties, as transformers' and diffusers' models have
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.Linear(width, width))
    def forward(self, x):
        return self.body(x)
    @property
    def device(self):
        return next(self.parameters()).device
    @property
    def dtype(self):
        return next(self.parameters()).dtype
def make_net(width):
    return Net(width)
def execution_device(module):
    for sub in module.modules():
        hook = getattr(sub, "_hf_hook", None)
        if getattr(hook, "execution_device", None) is not None:
            return hook.execution_device, None
    return module.device, module.dtype
def run(net, x):
    return net(x)
"""


def test_queries_are_not_uses(tmp_path):
    """Staged, a library asking a model not built yet for its device (modules(), its
    offload hooks, .device) and its dtype is answered without building it, from what the
    script recorded on it (.to(float64)) and what the learning run saw: the model is built
    in its stage, not kept resident. A class without a device property is not given one."""
    _zoo(tmp_path).write_text(ZOO + ZOO_QUERY)
    (tmp_path / "app.py").write_text(QUERIED)
    argv = [os.environ.get("SB_PYTHON", "/usr/bin/python3"), str(tmp_path / "app.py")]
    plan, _, learned_out = _learn(tmp_path, argv)
    models, stages = _tables(plan)
    assert models["net"]["dtype"] == "float64" and models["net"]["device"] == "cpu"
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_ADAPTER": str(plan),
                                                 "STAGEBENCH_STAGED": "1"})
    assert rc == 0, err
    assert out == learned_out
    assert "asked cpu torch.float64" in out
    assert "kept resident" not in err
    seq = _seq(events)
    assert seq.index(("load", "net")) > seq.index(("stage", stages[0]["name"])), seq
    # the same walk on a class with no device property: built (and kept), as eager fails
    # over to its parameters there
    (tmp_path / "site-packages" / "zoo.py").write_text(
        ZOO + ZOO_QUERY.replace("def device", "def where"))
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_ADAPTER": str(plan),
                                                 "STAGEBENCH_STAGED": "1"})
    assert rc == 1 and "has no attribute 'device'" in err


def test_kept_plan_on_the_script_renamed_and_moved(tmp_path):
    """The same script under another name in another directory: the plan matches it by
    what it does (its calls, from its functions, of its own classes), stages every model,
    and says nothing changed."""
    argv = _write(tmp_path)
    plan, _, learned_out = _learn(tmp_path, argv)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "renamed.py").write_text((tmp_path / "app.py").read_text())
    argv = [argv[0], str(moved / "renamed.py"), argv[2]]
    env = {"STAGEBENCH_ADAPTER": str(plan), "STAGEBENCH_RNG_REPLAY": "1"}
    rc, eager, eout, err = _run(tmp_path, argv, dict(env))
    assert rc == 0, err
    rc, staged, sout, err = _run(tmp_path, argv, dict(env, STAGEBENCH_STAGED="1"))
    assert rc == 0, err
    assert eout == sout == learned_out
    assert "changed since" not in err and "does not match" not in err
    seq = _seq(staged)
    for name, stage in (("encoder", "encode"), ("denoiser", "denoise"),
                        ("decoder", "decoder.decode")):
        assert seq.index(("load", name)) == seq.index(("stage", stage)) + 1 + (
            name != "encoder"), seq
    assert _latents(eager) == _latents(staged) and _latents(staged)


def test_plan_of_another_script_runs_eagerly_and_says_why(tmp_path):
    """A plan none of whose models the script makes: the run goes on as written (exit 0,
    the script's own output), a "plan does not match" note says why; nothing deferred
    reaches a library's own checkpoint reading (torch.load inside zoo)."""
    argv = _write(tmp_path)
    plan, _, _ = _learn(tmp_path, argv)
    _zoo(tmp_path).write_text(ZOO + "\nimport torch\ndef read(path):\n    "
                              "return torch.load(path)\n")
    (tmp_path / "other.py").write_text(
        "import sys\nimport torch\nimport zoo\nnet = torch.nn.Linear(256, 256)\n"
        "net.load_state_dict({k[7:]: v for k, v in zoo.read(sys.argv[1]).items()\n"
        "                     if k.startswith('body.0.')})\n"
        "print('sum %.4f' % float(net(torch.ones(1, 256)).sum()))\n")
    argv = [argv[0], str(tmp_path / "other.py"), argv[2]]
    rc, plain, pout, err = _run(tmp_path, argv, {})
    assert rc == 0, err
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_ADAPTER": str(plan),
                                                 "STAGEBENCH_STAGED": "1"})
    assert rc == 0, err
    assert out == pout
    notes = [e["note"] for e in events if e["kind"] == "mark"]
    assert any(n.startswith("plan does not match: none of its 3 model(s) was made") and
               "the run went on as written" in n for n in notes), notes
    assert not [e for e in events if e["kind"] in ("load", "release")]


def test_a_failed_learning_run_writes_no_plan(tmp_path):
    """The run failed (or used no model that can be staged): no plan file, and stderr
    says why; a plan with 0 models would run every later run as written."""
    argv = _write(tmp_path)
    plan = tmp_path / "plan.py"
    app = (tmp_path / "app.py").read_text()
    (tmp_path / "app.py").write_text(app.replace('    print("sum', '    raise SystemError("late")\n'
                                                 '    print("sum'))
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_LEARN": str(plan)})
    assert rc == 1 and "late" in err
    assert not plan.exists()
    assert "no plan written: the run failed" in err
    (tmp_path / "app.py").write_text("import torch\nprint(torch.ones(2).sum())\n")
    rc, events, out, err = _run(tmp_path, argv, {"STAGEBENCH_LEARN": str(plan)})
    assert rc == 0, err
    assert not plan.exists()
    assert "no plan written: the run used no model that can be staged" in err


LOADER_LIB = """
import os
import torch
from torch import nn
def from_file(path, width):
    # a library's loader (as from_pretrained): builds under its own generator state and
    # reads the weights, so it draws nothing from the script's generators
    with open(os.environ["CALLS"], "a") as f:
        f.write("from_file\\n")
    with torch.random.fork_rng():
        m = nn.Linear(width, width)
    m.load_state_dict(torch.load(path))
    return m
"""

LOADER_APP = """
import sys
import torch
from torch import nn
import loaderlib


def main():
    torch.manual_seed(3)
    lm = loaderlib.from_file(sys.argv[1], 64)
    head = nn.Linear(64, 4)
    x = torch.randn(2, 64)
    with torch.no_grad():
        h = lm(x)
        print("sum %.6f" % float(head(h).sum()))


if __name__ == "__main__":
    main()
"""


def test_a_load_that_draws_nothing_is_not_replayed(tmp_path):
    """RNG replay on: a model whose making drew no random numbers in the learning run
    ("draws": False in the plan) is made once, in its stage, not also at its call site."""
    import torch
    from torch import nn
    d = _zoo(tmp_path).parent
    d.mkdir(exist_ok=True)
    (d / "loaderlib.py").write_text(LOADER_LIB)
    (tmp_path / "app.py").write_text(LOADER_APP)
    weights = tmp_path / "lm.pt"
    torch.save(nn.Linear(64, 64).state_dict(), str(weights))
    argv = [os.environ.get("SB_PYTHON", "/usr/bin/python3"), str(tmp_path / "app.py"),
            str(weights)]
    calls = tmp_path / "calls"
    plan = tmp_path / "plan.py"
    rc, _, learned_out, err = _run(tmp_path, argv, {"STAGEBENCH_LEARN": str(plan),
                                                     "CALLS": str(calls)})
    assert rc == 0, err
    models, _ = _tables(plan)
    assert models["lm"]["draws"] is False, models
    assert models["head"]["draws"] is True, models
    calls.unlink()
    env = {"STAGEBENCH_ADAPTER": str(plan), "STAGEBENCH_RNG_REPLAY": "1",
           "STAGEBENCH_STAGED": "1", "CALLS": str(calls)}
    rc, staged, out, err = _run(tmp_path, argv, env)
    assert rc == 0, err
    assert out == learned_out
    assert calls.read_text().split() == ["from_file"]
    seq = _seq(staged)
    assert seq.index(("load", "lm")) > seq.index(("stage", "setup")) + 0
    assert [x for x in seq if x[0] == "load"].count(("load", "lm")) == 1
