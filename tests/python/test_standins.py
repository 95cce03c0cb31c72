"""test_standins.py -- what a staged model's stand-in does when the pipeline treats it as the
model (probe/README.md, "What a stand-in does"): each use gives what eager gives."""
import copy
import io
import pickle

import pytest
import torch
from torch import nn

from conftest import run_probed
from stagebench_probe import Probe


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def _build():
    torch.manual_seed(3)
    return Net()


def _pair(cls=None, build_first=False):
    """(eager model, staged stand-in) built the same way."""
    eager = _build()
    probe = Probe(staged=True)
    standin = probe.register("net", _build, ["run"], record=True, cls=cls)
    probe.enter("run")
    if build_first:
        standin(torch.zeros(1, 8))
    return eager, standin, probe


def _same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return list(sa) == list(sb) and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_isinstance_with_the_class_known():
    eager, standin, _ = _pair(cls=Net)
    assert isinstance(standin, nn.Module) and isinstance(standin, Net)
    assert standin.__class__ is Net


def test_isinstance_after_the_first_build_and_after_a_release():
    eager, standin, probe = _pair()
    assert not isinstance(standin, nn.Module)  # class unknown and not built: documented
    standin(torch.zeros(1, 8))
    assert isinstance(standin, Net)
    probe.enter("elsewhere")  # released
    assert probe.resident() == []
    assert isinstance(standin, Net)  # the class is remembered; nothing is built for it
    assert probe.resident() == []


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_copies_are_real_models(how):
    eager, standin, _ = _pair()
    fn = copy.copy if how == "copy" else copy.deepcopy
    got, want = fn(standin), fn(eager)
    assert type(got) is type(want) is Net
    assert _same_weights(got, want)
    x = torch.randn(2, 8)
    assert torch.equal(got(x), want(x))


def test_pickle_and_torch_save_write_the_model():
    eager, standin, _ = _pair()
    got = pickle.loads(pickle.dumps(standin))
    assert type(got) is Net and _same_weights(got, eager)
    buf = io.BytesIO()
    torch.save(standin, buf)
    buf.seek(0)
    try:
        got = torch.load(buf, weights_only=False)
    except TypeError:  # torch 1.x: no weights_only
        buf.seek(0)
        got = torch.load(buf)
    assert type(got) is Net and _same_weights(got, eager)


def test_parameters_state_dict_named_modules():
    eager, standin, _ = _pair()
    assert [p.shape for p in standin.parameters()] == [p.shape for p in eager.parameters()]
    assert _same_weights(standin, eager)
    assert [n for n, _ in standin.named_modules()] == [n for n, _ in eager.named_modules()]


def test_to_and_eval_are_recorded_and_return_the_stand_in():
    eager, standin, probe = _pair()
    assert standin.to("cpu") is standin and standin.eval() is standin
    assert probe.resident() == []  # recorded, nothing built
    assert not probe.get("net").training


def test_hooks_survive_a_release_and_their_handle_removes_them():
    eager, standin, probe = _pair()
    seen = []
    handle = standin.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    assert probe.resident() == []  # recorded only
    standin(torch.zeros(1, 8))
    probe.enter("elsewhere")
    probe.enter("run")
    standin(torch.zeros(2, 8))  # rebuilt: the hook is on the new model too
    assert seen == [(1, 4), (2, 4)]
    handle.remove()
    standin(torch.zeros(3, 8))
    assert seen == [(1, 4), (2, 4)]


ZOO = """
from torch import nn
def make():
    return nn.Linear(4, 4)
"""

SCRIPT = """
import copy, sys, torch
import zoo
torch.manual_seed(0)
def build():
    return zoo.make()
def use(m):
    return m(torch.ones(1, 4))
def later():
    pass
def main():
    m = build()
    use(m)
    keep = copy.deepcopy(m)  # a copy kept alive from here on
    raise RuntimeError("boom in the middle")
    later()
if __name__ == "__main__":
    main()
"""

ADAPTER = """
def install(probe):
    probe.defer("zoo:make", name="lin", stages=["use"])
    probe.when_imported("app", lambda app: (probe.on_call(app, "use", "use"),
                                            probe.on_call(app, "main", "setup"),
                                            probe.on_call(app, "later", "later")))
"""


def test_the_pipelines_own_failure_comes_first(tmp_path):
    (tmp_path / "app.py").write_text(SCRIPT)
    (tmp_path / "adapter.py").write_text(ADAPTER)
    (tmp_path / "zoo.py").write_text(ZOO)
    rc, events, out, err = run_probed(["/usr/bin/python3", str(tmp_path / "app.py")],
                                      {"STAGEBENCH_ADAPTER": str(tmp_path / "adapter.py"),
                                       "STAGEBENCH_STAGED": "1"}, cwd=str(tmp_path),
                                      extra_path=[str(tmp_path)])
    assert rc == 1, err  # the pipeline's own status
    assert "the pipeline failed in stage use: RuntimeError: boom in the middle" in err
    assert "never engaged" not in err
    notes = [e["note"] for e in events if e["kind"] == "mark"]
    assert any(n.startswith("probe: the pipeline failed in stage use") for n in notes)
