"""test_devmem.py -- the probe's device-memory events with stand-in torch.cuda / torch.mps.

No GPU and no Apple machine is here, and Debian's torch is 1.13: these stand-ins
answer the calls the probe makes (names as in torch 2.x) and count them, so the
CUDA and MPS paths run on every `make test`. The probe finds torch through
sys.modules, which the tests replace for their duration.
"""
import sys
import threading
import types

import pytest

from conftest import PROBE  # noqa: F401  (puts probe/ on sys.path)
from stagebench_probe import Probe


class Calls:
    def __init__(self):
        self.log = []

    def __call__(self, name, *args):
        self.log.append((name,) + args)


def fake_cuda(calls, reserved, initialized=True, available=True):
    """torch.cuda with len(reserved) devices; reserved[i] is device i's figure
    now; the peak follows it until reset_peak_memory_stats."""
    peak = list(reserved)

    def memory_reserved(i):
        calls("memory_reserved", i)
        peak[i] = max(peak[i], reserved[i])
        return reserved[i]

    def max_memory_reserved(i):
        calls("max_memory_reserved", i)
        peak[i] = max(peak[i], reserved[i])
        return peak[i]

    def reset_peak_memory_stats(i):
        calls("reset_peak_memory_stats", i)
        peak[i] = reserved[i]

    def grow(i, nbytes):  # the stage allocates, then frees part of it
        reserved[i] += nbytes
        peak[i] = max(peak[i], reserved[i])

    return types.SimpleNamespace(
        is_available=lambda: available, is_initialized=lambda: initialized,
        device_count=lambda: len(reserved), memory_reserved=memory_reserved,
        max_memory_reserved=max_memory_reserved,
        reset_peak_memory_stats=reset_peak_memory_stats, empty_cache=lambda: None,
        grow=grow)


def forbidden(calls, name):
    def f(*args):
        calls("FORBIDDEN " + name, *args)
        raise AssertionError(name + " must not be called")
    return f


def fake_torch(cuda=None, mps=None, mps_available=False):
    cuda = cuda or types.SimpleNamespace(is_available=lambda: False,
                                         is_initialized=lambda: False)
    backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: mps_available))
    t = types.SimpleNamespace(cuda=cuda, backends=backends)
    if mps is not None:
        t.mps = mps
    return t


@pytest.fixture
def with_torch(monkeypatch):
    def install(t):
        monkeypatch.setitem(sys.modules, "torch", t)
    return install


def gpu_events(ev):
    return [e for e in ev if e["kind"] == "gpu"]


def test_cuda_reserved_and_stage_peak_at_every_stage_boundary(pipe_probe, with_torch):
    calls = Calls()
    cuda = fake_cuda(calls, [100, 200])
    with_torch(fake_torch(cuda=cuda))
    probe = pipe_probe()
    probe.enter("encode")
    cuda.grow(0, 1000)      # encode holds 1000 more on cuda:0 ...
    cuda.grow(0, -600)      # ... and frees 600 of it before it ends
    probe.enter("decode")
    ev = probe.read_events()
    g = gpu_events(ev)
    assert [(e["stage"], e["device"], e["bytes"], e["max_bytes"]) for e in g] == [
        ("encode", "cuda:0", 100, 100), ("encode", "cuda:1", 200, 200),  # opening encode
        ("encode", "cuda:0", 500, 1100), ("encode", "cuda:1", 200, 200),  # closing it
        ("decode", "cuda:0", 500, 500), ("decode", "cuda:1", 200, 200),  # peak reset
    ]
    assert all(e["metric"] == "cuda_reserved" for e in g)
    kinds = [e["kind"] for e in ev]
    assert kinds == ["stage", "gpu", "gpu", "gpu", "gpu", "stage", "gpu", "gpu"]
    resets = [c for c in calls.log if c[0] == "reset_peak_memory_stats"]
    assert resets == [("reset_peak_memory_stats", 0), ("reset_peak_memory_stats", 1)] * 2


def test_cuda_not_initialised_is_not_touched(pipe_probe, with_torch):
    calls = Calls()
    cuda = types.SimpleNamespace(
        is_available=lambda: True, is_initialized=lambda: False, device_count=lambda: 1,
        memory_reserved=forbidden(calls, "memory_reserved"),
        max_memory_reserved=forbidden(calls, "max_memory_reserved"),
        reset_peak_memory_stats=forbidden(calls, "reset_peak_memory_stats"))
    with_torch(fake_torch(cuda=cuda))
    probe = pipe_probe()
    probe.enter("a")
    probe.enter("b")
    assert gpu_events(probe.read_events()) == []
    assert calls.log == []


def test_mps_driver_memory_without_a_peak(pipe_probe, with_torch):
    calls = Calls()
    level = [3 << 20]

    def driver_allocated_memory():
        calls("driver_allocated_memory")
        return level[0]
    mps = types.SimpleNamespace(driver_allocated_memory=driver_allocated_memory,
                                current_allocated_memory=lambda: level[0] // 2,
                                empty_cache=lambda: None)
    with_torch(fake_torch(mps=mps, mps_available=True))
    probe = pipe_probe()
    probe.enter("denoise")
    level[0] = 7 << 20
    probe.enter("decode")
    g = gpu_events(probe.read_events())
    assert [(e["stage"], e["device"], e["metric"], e["bytes"]) for e in g] == [
        ("denoise", "mps", "mps_driver", 3 << 20),
        ("denoise", "mps", "mps_driver", 7 << 20),
        ("decode", "mps", "mps_driver", 7 << 20),
    ]
    assert all("max_bytes" not in e for e in g), "MPS has no peak counter"
    assert len(calls.log) == 3


def test_a_call_hooked_with_on_call_writes_the_figure_after_it(pipe_probe, with_torch):
    calls = Calls()
    cuda = fake_cuda(calls, [100])
    with_torch(fake_torch(cuda=cuda))
    probe = pipe_probe()

    class Pipe:
        def run(self):
            cuda.grow(0, 50)
            return None
    probe.on_call(Pipe, "run", "run")
    Pipe().run()
    g = gpu_events(probe.read_events())
    assert [(e["stage"], e["bytes"], e["max_bytes"]) for e in g] == [
        ("run", 100, 100), ("run", 150, 150)]


@pytest.mark.parametrize("mps", [None, types.SimpleNamespace()], ids=["no torch.mps", "torch 1.13 mps"])
def test_torch_without_the_device_apis_writes_nothing_and_calls_nothing(pipe_probe, with_torch, mps):
    calls = Calls()
    cuda = types.SimpleNamespace(
        is_available=lambda: False, is_initialized=forbidden(calls, "is_initialized"),
        memory_reserved=forbidden(calls, "memory_reserved"),
        reset_peak_memory_stats=forbidden(calls, "reset_peak_memory_stats"))
    t = fake_torch(cuda=cuda, mps=mps, mps_available=True)
    t.backends.mps.is_available = forbidden(calls, "mps.is_available")
    with_torch(t)
    probe = pipe_probe()
    probe.enter("a")
    probe.enter("b")
    assert gpu_events(probe.read_events()) == []
    assert calls.log == []


def test_no_torch_imported_writes_no_gpu_events(pipe_probe, monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    probe = pipe_probe()
    probe.enter("a")
    probe.enter("b")
    assert gpu_events(probe.read_events()) == []


# -- the sampler: device memory on the recorder's interval -----------------------

@pytest.fixture
def sampling(monkeypatch):
    """STAGEBENCH_INTERVAL as the recorder sets it; every sampler stopped after."""
    from stagebench_probe import devmem
    monkeypatch.setenv("STAGEBENCH_INTERVAL", "0.01")
    yield devmem
    devmem.stop_all()


class Meter:
    """A stand-in MPS driver figure whose reads can be waited for."""

    def __init__(self, level):
        self.level = level
        self.reads = 0
        self.cond = threading.Condition()

    def driver_allocated_memory(self):
        with self.cond:
            self.reads += 1
            self.cond.notify_all()
            return self.level

    def wait_reads(self, n):
        with self.cond:
            start = self.reads
            assert self.cond.wait_for(lambda: self.reads >= start + n, timeout=60)


def sampler_threads():
    return [t for t in threading.enumerate() if t.name == "stagebench-devmem"]


def test_a_bump_inside_a_stage_is_read_by_the_sampler_between_its_boundaries(
        pipe_probe, with_torch, sampling):
    m = Meter(50 << 20)
    mps = types.SimpleNamespace(driver_allocated_memory=m.driver_allocated_memory,
                                current_allocated_memory=lambda: m.level // 2)
    with_torch(fake_torch(mps=mps, mps_available=True))
    probe = pipe_probe()
    probe.enter("denoise")
    s = sampling.sampler(probe.events)
    assert s is not None and s.every == 0.01 and len(sampler_threads()) == 1
    m.level = 500 << 20   # the bump, between two boundaries
    m.wait_reads(3)       # the sampler read it (twice at least, whole readings)
    m.level = 50 << 20
    m.wait_reads(2)
    probe.enter("decode")
    ev = probe.read_events()
    s.stop()
    at = [i for i, e in enumerate(ev) if e["kind"] == "stage"]
    inside = [e for e in ev[at[0]:at[1]] if e["kind"] == "devmem"]
    assert max(e["bytes"] for e in inside) == 500 << 20
    assert all(e["device"] == "mps" and e["metric"] == "mps_driver" for e in inside)
    assert {e["allocated"] for e in inside} >= {250 << 20, 25 << 20}
    assert all(e["mono"] >= ev[at[0]]["mono"] for e in inside)
    # the boundaries' gpu events never saw it
    assert max(e["bytes"] for e in gpu_events(ev)) == 50 << 20


def test_cuda_readings_sum_the_devices_reserved_and_allocated(with_torch, sampling):
    calls = Calls()
    cuda = fake_cuda(calls, [100, 200])
    cuda.memory_allocated = lambda i: [60, 70][i]
    cuda.get_device_properties = lambda i: types.SimpleNamespace(total_memory=1000)
    with_torch(fake_torch(cuda=cuda))
    assert sampling.sample() == {"device": "cuda", "metric": "cuda_reserved",
                                 "bytes": 300, "allocated": 130}
    assert sampling.device_total() == 2000


@pytest.mark.parametrize("case", ["no device", "mps unused", "no interval", "events off"])
def test_no_device_in_use_no_thread_and_no_readings(pipe_probe, with_torch, sampling,
                                                    monkeypatch, case):
    m = Meter(0 if case == "mps unused" else 5 << 20)
    mps = types.SimpleNamespace(driver_allocated_memory=m.driver_allocated_memory)
    with_torch(fake_torch(mps=mps, mps_available=case != "no device"))
    if case == "no interval":
        monkeypatch.delenv("STAGEBENCH_INTERVAL")
    probe = pipe_probe()
    if case == "events off":
        probe.events.fd = None
    probe.enter("a")
    probe.enter("b")
    assert sampling.sampler(probe.events) is None and sampler_threads() == []
    if case != "events off":
        assert [e for e in probe.read_events() if e["kind"] == "devmem"] == []
