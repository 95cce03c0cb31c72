"""mps_bump.py -- a stand-in MPS pipeline for the device sampler: torch.mps's driver
memory is 50 MB, except for BUMP seconds in the middle of a DENOISE-second `denoise`
stage, where it is 500 MB. Run under `stagebench record` (the probe is activated by
probe/site); argv: DENOISE BUMP (seconds, default 3 1) [hold | real]
  hold: the bump never ends (until the guard stops the run);
  real: the process holds the bytes the stand-in reports (as macOS counts Metal buffers
        in the footprint), beside 300 MB of its own (the pipeline's CPU side): docs/memory.md's chart.
Metal's recommended maximum (the device's size) is 1 GiB. Each part of denoise lasts its
seconds and then until the probe's sampler thread has read the level at least once (a
handshake: a loaded machine cannot make the test miss the bump)."""
import sys
import threading
import time
import types

MB = 1 << 20
level = [50 * MB]
held = []
mode = sys.argv[3] if len(sys.argv) > 3 else ""
seen = threading.Condition()
sampled = [0]  # reads of the current level by a thread other than the main one


def set_level(nbytes):
    with seen:
        level[0] = nbytes
        sampled[0] = 0
    if mode == "real":
        held[:] = [b"\x01" * nbytes]  # every page written: resident


def driver_allocated_memory():
    with seen:
        if threading.current_thread() is not threading.main_thread():
            sampled[0] += 1
            seen.notify_all()
        return level[0]


def hold(seconds):
    """seconds, then until the sampler has read the level (a minute at most)."""
    time.sleep(seconds)
    with seen:
        seen.wait_for(lambda: sampled[0] > 0, timeout=60)  # no sampler: the test fails


mps = types.SimpleNamespace(driver_allocated_memory=driver_allocated_memory,
                            current_allocated_memory=lambda: level[0] // 2,
                            recommended_max_memory=lambda: 1 << 30)
cuda = types.SimpleNamespace(is_available=lambda: False, is_initialized=lambda: False)
backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: True))
sys.modules["torch"] = types.SimpleNamespace(mps=mps, cuda=cuda, backends=backends)

import stagebench_probe  # noqa: E402

denoise, bump = (float(a) for a in (sys.argv[1:3] if len(sys.argv) > 2 else (3, 1)))
cpu_side = b"\x01" * (300 * MB) if mode == "real" else b""
set_level(50 * MB)
probe = stagebench_probe.get_probe()
probe.enter("encode")
time.sleep(0.3)
probe.enter("denoise")
hold((denoise - bump) / 2)
set_level(500 * MB)
hold(bump)
while mode == "hold":  # until the guard stops it
    time.sleep(1)
set_level(50 * MB)
hold((denoise - bump) / 2)
probe.enter("decode")
time.sleep(0.3)
