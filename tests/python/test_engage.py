"""test_engage.py -- scripts run as files or with -m, deferral of the calls that build models,
RNG replay, and runs whose staged loading never engaged failing with the reason."""
import sys
import textwrap

import pytest
import torch
from torch import nn

from conftest import run_probed

# A third-party "model zoo" and a script using it the usual way: seed, build the
# models at the top, then draw the inputs and run two stages.
ZOO = """
import torch
from torch import nn
BUILT = []
def big_net(width, depth=2):
    BUILT.append(width)
    return nn.Sequential(*[nn.Linear(width, width) for _ in range(depth)])
"""

APP = """
import sys
import torch
import zoo
from zoo import big_net

def build(weights):
    a = big_net(64, depth=3)
    a.load_state_dict(torch.load(weights))
    a = a.eval()
    b = zoo.big_net(32).to("cpu")
    return a, b

def first(a, x):
    return a(x)

def second(b, x):
    return b(x[:, :32])

def main():
    torch.manual_seed(7)
    a, b = build(sys.argv[1])
    print("built", zoo.BUILT)
    x = torch.randn(2, 64)
    y = first(a, x)
    z = second(b, y)
    print("sum %.6f" % float(z.sum()))
    return 0

"""

ADAPTER = """
import functools
def install(probe):
    probe.defer("zoo:big_net", name=lambda width, **kw: "net%d" % width,
                stages=lambda name: {"net64": ["first"], "net32": ["second"]}[name])
    if probe.staged:
        probe.defer_load("torch.load")
    probe.when_imported(TARGET, functools.partial(patch, probe))

def patch(probe, app):
    probe.on_call(app, "build", "setup")
    probe.on_call(app, "first", "first", outputs="y")
    probe.on_call(app, "second", "second", outputs="z")
"""


def make(tmp_path, target="app", guard=True, adapter_extra=""):
    (tmp_path / "zoo.py").write_text(ZOO)
    app = APP + ('if __name__ == "__main__":\n    sys.exit(main())\n' if guard
                 else "main()\n")
    (tmp_path / "app.py").write_text(app)
    (tmp_path / "adapter.py").write_text("TARGET = %r\n" % target + ADAPTER + adapter_extra)
    torch.manual_seed(0)
    torch.save(nn.Sequential(*[nn.Linear(64, 64) for _ in range(3)]).state_dict(),
               tmp_path / "w.pt")
    return tmp_path


def run(tmp_path, argv, staged, replay=False, extra=None):
    env = {"STAGEBENCH_ADAPTER": str(tmp_path / "adapter.py"),
           "STAGEBENCH_MODE": "staged" if staged else "eager",
           "STAGEBENCH_STAGED": "1" if staged else "0",
           "STAGEBENCH_RNG_REPLAY": "1" if replay else "0"}
    env.update(extra or {})
    return run_probed(argv, env, cwd=str(tmp_path), extra_path=[str(tmp_path)])


def seq(events):
    out = []
    for e in events:
        if e["kind"] == "stage":
            out.append(e["stage"])
        elif e["kind"] in ("load", "reload", "release"):
            out.append("%s:%s" % (e["kind"], e["name"]))
    return out


def sums(out):
    return [line for line in out.splitlines() if line.startswith("sum")]


@pytest.mark.parametrize("how", ["file", "path", "module"])
def test_script_run_as_a_file_or_with_m_is_staged(tmp_path, how):
    d = make(tmp_path, target=str(tmp_path / "app.py") if how == "path" else "app")
    argv = ([sys.executable, "-m", "app"] if how == "module"
            else [sys.executable, "app.py"]) + [str(d / "w.pt")]
    rc, ev, out, err = run(d, argv, staged=True)
    assert rc == 0, err
    assert seq(ev) == ["setup", "first", "load:net64", "second", "release:net64",
                       "load:net32"]
    assert "built []" in out  # nothing built while the script set itself up


def test_replay_keeps_eager_draws_and_the_checkpoint_reaches_the_deferred_model(tmp_path):
    d = make(tmp_path)
    argv = [sys.executable, "app.py", str(d / "w.pt")]
    rc, ev, out, err = run(d, argv, staged=True, replay=True)
    assert rc == 0, err
    assert "built [64, 32]" in out  # replay: built where eager builds, and dropped
    assert seq(ev) == ["setup", "first", "load:net64", "second", "release:net64",
                       "load:net32"]
    rc, ev_e, out_e, err = run(d, argv, staged=False)
    assert rc == 0, err
    assert seq(ev_e) == ["setup", "load:net64", "load:net32", "first", "second"]
    assert sums(out) == sums(out_e)
    lat = lambda evs: {e["name"]: e["sha256"] for e in evs if e["kind"] == "latent"}
    assert lat(ev) == lat(ev_e) and set(lat(ev)) == {"y", "z"}
    rc, ev_p, out_p, err = run(d, argv, staged=True, replay=False)
    assert rc == 0, err
    assert sums(out_p) != sums(out_e)  # x = randn(...) came from another state


def test_script_without_a_main_guard_is_patched_before_its_first_call(tmp_path):
    d = make(tmp_path, guard=False)
    rc, ev, out, err = run(d, [sys.executable, "app.py", str(d / "w.pt")], staged=True)
    assert rc == 0, err
    assert seq(ev)[:3] == ["setup", "first", "load:net64"]


def test_unmodified_script_runs_the_same_without_stagebench(tmp_path):
    d = make(tmp_path)
    rc, ev, out, err = run_probed([sys.executable, "app.py", str(d / "w.pt")], {},
                                  cwd=str(d), with_fd=False, extra_path=[str(d)])
    assert rc == 0 and ev == [] and "built [64, 32]" in out, err


def test_a_target_that_never_runs_fails_the_run_naming_it(tmp_path):
    d = make(tmp_path, target="not_the_app")
    rc, ev, out, err = run(d, [sys.executable, "app.py", str(d / "w.pt")], staged=True)
    assert rc == 3
    assert "module not_the_app was never imported nor run as the main script" in err
    # the model calls were still intercepted: the registry has them
    marks = [e["note"] for e in ev if e["kind"] == "mark"]
    assert any(m.startswith("probe: failed:") and "not_the_app" in m for m in marks)


def test_staged_run_with_nothing_deferred_fails_naming_the_calls(tmp_path):
    d = make(tmp_path, adapter_extra="\nimport zoo as _z\n")
    (d / "adapter.py").write_text((d / "adapter.py").read_text().replace(
        '"zoo:big_net"', '"zoo:small_net"').replace("import zoo as _z", ""))
    (d / "zoo.py").write_text(ZOO + "\ndef small_net():\n    return None\n")
    rc, ev, out, err = run(d, [sys.executable, "app.py", str(d / "w.pt")], staged=True)
    assert rc == 3
    assert "staged loading never engaged" in err
    assert "no model was deferred: the calls the adapter names (zoo:small_net)" in err


def test_a_hook_that_never_fires_fails_an_eager_run_too(tmp_path):
    d = make(tmp_path, adapter_extra=textwrap.dedent("""
        _orig = patch
        def patch(probe, app):
            _orig(probe, app)
            app.unused = lambda: None
            probe.on_call(app, "unused", "never")
    """))
    rc, ev, out, err = run(d, [sys.executable, "app.py", str(d / "w.pt")], staged=False)
    assert rc == 3
    assert "the hooked method app.unused was never called" in err


def test_a_pipeline_that_fails_keeps_its_own_exit_status(tmp_path):
    d = make(tmp_path, target="not_the_app")
    rc, ev, out, err = run(d, [sys.executable, "app.py", str(d / "missing.pt")], staged=False)
    assert rc == 1 and "never imported" in err


def test_deferred_value_reads_only_when_the_model_is_built(tmp_path, pipe_probe):
    from stagebench_probe.defer import DeferredValue
    reads = []

    def load(path):
        reads.append(path)
        return {"model": {"weight": torch.ones(2, 2), "bias": torch.zeros(2)}}
    v = DeferredValue(load, ("f.pt",), {}, "load")
    sub = v["model"]
    assert reads == [] and "model" in repr(sub)
    probe = pipe_probe(staged=True)
    m = probe.register("lin", lambda: nn.Linear(2, 2), ["s"], record=True)
    assert m.load_state_dict(sub) is not None and m.eval() is m
    assert reads == []
    probe.enter("s")
    assert torch.equal(m.weight, torch.ones(2, 2)) and not m.training
    assert reads == ["f.pt"]
    probe.enter("t")
    probe.enter("s")
    m(torch.zeros(1, 2))  # rebuilt: the file is read again, the calls replayed
    assert reads == ["f.pt", "f.pt"] and not m.training
    ev = probe.read_events()
    assert [e["kind"] for e in ev if e["kind"] in ("load", "reload", "release")] == \
        ["load", "release", "reload"]


@pytest.mark.parametrize("target,said", [
    # the module is imported by the pipeline: checked then, before it builds anything
    ("zoo:big_nett", "zoo has no attribute 'big_nett' (did you mean 'big_net'?)"),
    ("zoo:big_net.nope", "zoo.big_net has no attribute 'nope'"),
    # already imported when the adapter is installed: checked there
    ("os.path:joinn", "os.path has no attribute 'joinn' (did you mean 'join'?)"),
    # never imported: a failure at the end naming the target
    ("nozoo:big_net", "never resolved: its module nozoo was never imported"),
])
def test_a_typo_in_a_defer_target_is_named_with_the_adapter(tmp_path, target, said):
    d = make(tmp_path)
    (d / "adapter.py").write_text((d / "adapter.py").read_text().replace(
        'probe.defer("zoo:big_net"', 'probe.defer(%r' % target))
    rc, ev, out, err = run(d, [sys.executable, "app.py", str(d / "w.pt")], staged=True)
    assert rc == 3, err
    line = [x for x in err.splitlines() if "defer target '%s'" % target in x]
    assert line and said in line[0] and "adapter %s:" % (d / "adapter.py") in line[0], err
    assert "Traceback" not in err
    if not target.startswith("nozoo"):
        assert "built" not in out  # stopped before the pipeline went on


THREADS = """
import sys, threading, time
from stagebench_probe import Probe
probe = Probe(staged=True)

def stages(name):
    time.sleep(0.01)  # widens the window between naming a model and registering it
    return ["use"]

probe.defer("zoo:big_net", stages=stages)
import zoo
barrier = threading.Barrier(16)
errors, models = [], []

def build():
    barrier.wait()
    try:
        models.append(zoo.big_net(8))
    except Exception as e:
        errors.append(repr(e))

threads = [threading.Thread(target=build) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(set(m._sb_name for m in models)), errors)
"""


def test_sixteen_threads_deferring_builds_at_once_get_sixteen_names(tmp_path):
    (tmp_path / "zoo.py").write_text(ZOO)
    (tmp_path / "threads.py").write_text(THREADS)
    from conftest import PROBE
    import subprocess
    p = subprocess.run([sys.executable, "threads.py"], cwd=str(tmp_path), capture_output=True,
                       text=True, timeout=120,
                       env={"PYTHONPATH": "%s:%s" % (PROBE, tmp_path), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "16 []", p.stderr
