"""test_devmem_record.py -- `stagebench record` with a stand-in MPS device (mps_bump.py):
the probe's device readings on the interval reach the trace as samples, `analyze` reports
each stage's peak from them, and the guard stops a run on device memory (--max-device)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

SB = os.environ.get("SB_BIN") or os.path.join(ROOT, "stagebench")
BUMP = os.path.join(os.path.dirname(__file__), "mps_bump.py")
MB = 1 << 20
pytestmark = pytest.mark.skipif(not os.access(SB, os.X_OK), reason="no stagebench binary")


def run(tmp_path, args, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGEBENCH_")}
    env["STAGEBENCH_HOME"] = ROOT
    return subprocess.run([SB] + args, env=env, cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=timeout)


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_500_mb_bump_inside_denoise_is_sampled_and_is_denoises_mps_peak(tmp_path):
    trace = tmp_path / "t.trace.jsonl"
    p = run(tmp_path, ["record", "-q", "--interval", "200ms", "-o", str(trace), "--",
                       sys.executable, BUMP, "3", "1"])
    assert p.returncode == 0, p.stderr
    recs = records(trace)
    stages = {e["stage"]: e["t"] for e in recs if e.get("kind") == "stage"}
    dev = [s for s in recs if s["type"] == "sample" and "devmem" in s]
    assert all("footprint" not in s for s in dev)  # samples of their own, at the probe's t
    bump = [s["t"] for s in dev if s["devmem"] == 500 * MB]
    assert bump and all(stages["denoise"] < t < stages["decode"] for t in bump)
    assert {s["devmem_allocated"] for s in dev} == {25 * MB, 250 * MB}
    # the boundaries' gpu events never see it
    assert max(e["bytes"] for e in recs if e.get("kind") == "gpu") == 50 * MB

    p = run(tmp_path, ["analyze", "--json", str(trace)])
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    a = a["runs"][0] if isinstance(a, dict) and "runs" in a else a
    a = a[0] if isinstance(a, list) else a
    peaks = {s["name"]: s["device_peak_bytes"] for s in a["stages"]}
    assert peaks["denoise"] == 500 * MB
    assert peaks["encode"] == peaks["decode"] == 50 * MB
    assert a["device"]["label"] == "MPS driver" and a["device"]["sampled"]
    p = run(tmp_path, ["analyze", str(trace)])
    assert "MPS driver peak 500 MB" in p.stdout and "record with a shorter --interval" in p.stdout
    row = [line for line in p.stdout.splitlines() if line.split()[:1] == ["denoise"]]
    assert "500 MB" in row[0], p.stdout


@pytest.mark.parametrize("cap,words", [("200M", "over the cap 200 MB"),
                                       ("30%", "over the cap 307 MB (30% of 1.0 GB)")])
def test_the_guard_stops_a_run_whose_device_memory_passes_max_device(tmp_path, cap, words):
    trace = tmp_path / "g.trace.jsonl"
    p = run(tmp_path, ["record", "--max-device", cap, "--poll", "50ms", "--grace", "1s",
                       "--interval", "50ms", "-o", str(trace), "--",
                       sys.executable, BUMP, "0.2", "0", "hold"])
    assert p.returncode == 3, p.stderr
    assert "guard: stopping: device memory 500 MB " + words in p.stderr, p.stderr
    stop = [e for e in records(trace) if e.get("kind") == "guard" and e["action"] == "stop"]
    assert len(stop) == 1 and stop[0]["devmem"] == 500 * MB


def test_max_device_takes_a_size_or_a_percentage(tmp_path):
    for bad in ("0", "0%", "101%", "x%", "%", "0x10%", " 50%", "1e-300%", "+5%"):
        p = run(tmp_path, ["guard", "--max-device", bad, "--", "true"])
        assert p.returncode == 2 and "--max-device" in p.stderr, (bad, p.stderr)


def test_a_percentage_cap_without_the_devices_size_is_said_and_not_checked(tmp_path):
    # torch.mps without recommended_max_memory (torch < 2.5): no size, no percentage
    script = tmp_path / "nosize.py"
    script.write_text(open(BUMP).read().replace("recommended_max_memory=lambda: 1 << 30", ""))
    p = run(tmp_path, ["record", "--max-device", "1%", "--poll", "50ms", "--interval", "50ms",
                       "-o", str(tmp_path / "n.trace.jsonl"), "--",
                       sys.executable, str(script), "0.4", "0.2"])
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("--max-device 1%: the probe reports no device size") == 1, p.stderr


# A stand-in probe that writes devmem lines itself: each argument is a line's
# JSON (without "kind" and "mono"; "ahead": seconds added to its mono), "hold=SECONDS" the last one again every 20 ms
# for that long; it then writes "done" to stdout (it was not stopped).
WRITER = r'''
import json, os, sys, time
fd = int(os.environ["STAGEBENCH_FD"])
def line(o):
    o = dict(o, type="event", kind="devmem", mono=time.monotonic() + o.pop("ahead", 0))
    os.write(fd, (json.dumps(o) + "\n").encode())
last = None
for a in sys.argv[1:]:
    if a.startswith("hold="):
        end = time.monotonic() + float(a[5:])
        while time.monotonic() < end:
            line(last)
            time.sleep(0.02)
    else:
        last = json.loads(a)
        line(last)
print("done", flush=True)
'''
GB = 1 << 30


def devmem_run(tmp_path, cap, *lines):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    trace = tmp_path / "d.trace.jsonl"
    p = run(tmp_path, ["record", "--max-device", cap, "--poll", "50ms", "--grace", "1s",
                       "--interval", "50ms", "-o", str(trace), "--", sys.executable,
                       str(script)] + [a if isinstance(a, str) else json.dumps(a)
                                       for a in lines])
    return p, records(trace)


def stops(recs):
    return [e for e in recs if e.get("kind") == "guard" and e["action"] == "stop"]


def test_a_device_reading_without_total_is_judged_against_the_devices_last_total(tmp_path):
    # 1 GB of a 10 GB device (its size said once), then 9 GB for 3 s without "total"
    p, recs = devmem_run(tmp_path, "80%",
                         {"device": "cuda:0", "bytes": GB, "total": 10 * GB},
                         {"device": "cuda:0", "bytes": 9 * GB}, "hold=3")
    assert p.returncode == 3 and "done" not in p.stdout, (p.returncode, p.stderr)
    assert ("guard: stopping: device memory 9.0 GB over the cap 8.0 GB (80% of 10.0 GB) "
            "on 'cuda:0'") in p.stderr, p.stderr
    stop = stops(recs)
    assert len(stop) == 1 and stop[0]["devmem"] == 9 * GB
    # stopped while the 9 GB readings came: after the first, before the last
    nine = [s["t"] for s in recs if s["type"] == "sample" and s.get("devmem") == 9 * GB]
    assert nine and nine[0] <= stop[0]["t"] <= nine[-1] + 0.1, (nine[0], stop[0]["t"], nine[-1])


def test_each_device_and_writer_keeps_its_own_reading(tmp_path):
    # cuda:0 at 9 of 10 GB once, then only cuda:1 (a device of 80 GB) and a second writer
    # of cuda:0 report, small: the last line does not stand for every device
    for later in ({"device": "cuda:1", "bytes": GB, "total": 80 * GB},
                  {"device": "cuda:0", "bytes": GB // 4, "pid": 4242}):
        p, recs = devmem_run(tmp_path, "80%",
                             {"device": "cuda:0", "bytes": 9 * GB, "total": 10 * GB},
                             later, "hold=3")
        assert p.returncode == 3 and "done" not in p.stdout, (later, p.stderr)
        assert "device memory 9.0 GB over the cap 8.0 GB (80% of 10.0 GB) on 'cuda:0'" \
            in p.stderr, p.stderr
    # a size cap judges every device's reading too
    p, recs = devmem_run(tmp_path, "5G", {"device": "cuda:0", "bytes": 6 * GB},
                         {"device": "cuda:1", "bytes": GB}, "hold=3")
    assert p.returncode == 3 and "over the cap 5.0 GB on 'cuda:0'" in p.stderr, p.stderr


def test_devices_under_the_cap_are_not_stopped(tmp_path):
    p, recs = devmem_run(tmp_path, "80%",
                         {"device": "cuda:0", "bytes": 7 * GB, "total": 10 * GB},
                         {"device": "cuda:1", "bytes": 60 * GB, "total": 80 * GB}, "hold=0.5")
    assert p.returncode == 0 and "done" in p.stdout, p.stderr
    assert not stops(recs)


def test_readings_timed_before_the_start_or_ahead_of_now_are_dropped_with_a_warning(tmp_path):
    # one before the run started, one 99,999 s ahead: neither is kept nor judged
    p, recs = devmem_run(tmp_path, "5G",
                         {"device": "cuda:0", "bytes": 9 * GB, "ahead": -3600},
                         {"device": "cuda:0", "bytes": 8 * GB, "ahead": 99999},
                         {"device": "cuda:0", "bytes": GB}, "hold=0.2")
    assert p.returncode == 0 and "done" in p.stdout, p.stderr
    assert p.stderr.count("dropping a device-memory reading timed at t = ") == 1, p.stderr
    assert "before the run started" in p.stderr, p.stderr
    dev = [s for s in recs if s["type"] == "sample" and "devmem" in s]
    assert dev and {s["devmem"] for s in dev} == {GB}, dev
    assert all(0 <= s["t"] < 60 for s in dev)
    assert not stops(recs)
