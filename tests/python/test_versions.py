"""test_versions.py -- the probe names the versions of Python and of the libraries the run
imported in `versions` events (traces/FORMAT.md): Python at activation, each library once its
import finished, none the run never imported; the recorder keeps them and the reader reads them."""
import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, run_probed

SB = os.environ.get("SB_BIN") or os.path.join(ROOT, "stagebench")

SCRIPT = textwrap.dedent("""
    import json, sys
    import torch
    print(json.dumps({"torch": str(torch.__version__),
                      "diffusers_before": "diffusers" in sys.modules}), flush=True)
    import diffusers.pipelines   # a submodule first: the package's import names it
    import noversion
""")


@pytest.fixture
def libs(tmp_path):
    """Fake diffusers, transformers (never imported) and a module without __version__."""
    lib = tmp_path / "lib"
    (lib / "diffusers").mkdir(parents=True)
    (lib / "diffusers" / "__init__.py").write_text('__version__ = "0.99.0.test"\n')
    (lib / "diffusers" / "pipelines.py").write_text("")
    (lib / "transformers").mkdir()
    (lib / "transformers" / "__init__.py").write_text('__version__ = "9.9.9"\n')
    (lib / "noversion.py").write_text("")
    (tmp_path / "app.py").write_text(SCRIPT)
    return tmp_path


def merged(events):
    out = {}
    for e in events:
        if e["kind"] == "versions":
            for k, v in e["versions"].items():
                assert k not in out, "%s named twice" % k
                out[k] = v
    return out


def test_python_first_then_each_library_once_imported_and_none_never_imported(libs):
    rc, ev, out, err = run_probed([sys.executable, str(libs / "app.py")], {},
                                  extra_path=[str(libs / "lib")])
    assert rc == 0, err
    said = json.loads(out.splitlines()[0])
    kinds = [e["kind"] for e in ev]
    assert kinds[:2] == ["mark", "versions"], kinds
    assert ev[1]["versions"] == {"python": platform.python_version(),
                                 "implementation": platform.python_implementation()}
    got = merged(ev)
    assert got == {"python": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "torch": said["torch"], "diffusers": "0.99.0.test"}
    # each library in an event of its own, written when it was imported: torch's before
    # diffusers', both with the time of their import
    libs_ev = [e for e in ev if e["kind"] == "versions"][1:]
    assert [list(e["versions"]) for e in libs_ev] == [["torch"], ["diffusers"]]
    assert libs_ev[0]["mono"] <= libs_ev[1]["mono"]


def test_a_library_imported_before_activation_is_named_in_the_first_event(libs, tmp_path):
    # a sitecustomize the probe's shadows (run first) that imports diffusers
    site = tmp_path / "othersite"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import diffusers\n")
    (libs / "app2.py").write_text("pass\n")
    rc, ev, out, err = run_probed([sys.executable, str(libs / "app2.py")], {},
                                  extra_path=[str(site), str(libs / "lib")])
    assert rc == 0, err
    first = [e for e in ev if e["kind"] == "versions"][0]
    assert first["versions"]["diffusers"] == "0.99.0.test"
    assert merged(ev).keys() == {"python", "implementation", "diffusers"}


def test_without_a_descriptor_nothing_is_watched(libs):
    rc, ev, out, err = run_probed([sys.executable, str(libs / "app.py")], {}, with_fd=False,
                                  extra_path=[str(libs / "lib")])
    assert rc == 0 and ev == [], err


def test_sweep_names_a_library_the_hook_missed():
    from stagebench_probe import Probe
    from stagebench_probe.versions import VersionWatch

    class Fake:
        __version__ = "1.2.3"
    sent = []
    probe = Probe()
    probe.emit = lambda kind, **f: sent.append((kind, f))
    w = VersionWatch(probe)
    saved = sys.modules.get("accelerate")
    sys.modules["accelerate"] = Fake()
    try:
        w.sweep()
        w.sweep()  # named once
    finally:
        if saved is None:
            del sys.modules["accelerate"]
        else:
            sys.modules["accelerate"] = saved
    named = [f["versions"] for k, f in sent if k == "versions"]
    assert sum("accelerate" in v for v in named) == 1
    assert {"accelerate": "1.2.3"} in [{k: v for k, v in n.items() if k == "accelerate"}
                                       for n in named]


@pytest.mark.skipif(not os.access(SB, os.X_OK), reason="no stagebench binary")
def test_the_recorder_keeps_them_and_analyze_reads_them(libs):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGEBENCH_")}
    env["PYTHONPATH"] = str(libs / "lib")
    env["STAGEBENCH_HOME"] = ROOT
    trace = str(libs / "run.trace.jsonl")
    p = subprocess.run([SB, "record", "-q", "--interval", "50ms", "-o", trace, "--",
                        sys.executable, str(libs / "app.py")],
                       env=env, cwd=str(libs), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    torch_v = json.loads(p.stdout.splitlines()[0])["torch"]
    with open(trace) as f:
        lines = [json.loads(line) for line in f]
    assert any(r.get("kind") == "versions" and r["versions"] == {"torch": torch_v}
               for r in lines)
    p = subprocess.run([SB, "analyze", "--json", trace], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)["runs"][0]
    assert run["versions"] == {"python": platform.python_version(),
                               "implementation": platform.python_implementation(),
                               "torch": torch_v, "diffusers": "0.99.0.test"}
