"""test_guard_inputs.py -- the guard never fails open: each input it reads, missing, malformed
or contradictory, either still stops a run over its cap or says that it cannot judge
(docs/guard-inputs.md lists them, each row naming its test)."""
import os
import subprocess

import pytest

from conftest import ROOT

SB = os.environ.get("SB_BIN") or os.path.join(ROOT, "stagebench")
pytestmark = pytest.mark.skipif(not os.access(SB, os.X_OK), reason="no stagebench binary")


def run(tmp_path, args, meter=None, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGEBENCH_")}
    env["STAGEBENCH_HOME"] = ROOT
    if meter is not None:
        script = tmp_path / "meter.txt"
        script.write_text(meter)
        env["STAGEBENCH_METER"] = "fake:" + str(script)
    return subprocess.run([SB] + args, env=env, cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=timeout)


def test_system_figures_unreadable_mid_run_leave_the_footprint_cap_in_force(tmp_path):
    # the scripted meter: admission reads 80% available, then the system's figures cannot be
    # read (no level=) while the command's tree holds 2 GB: --max-footprint 1G still stops it
    p = run(tmp_path, ["record", "--max-footprint", "1G", "--poll", "50ms", "--grace", "1s",
                       "-o", str(tmp_path / "f.trace.jsonl"), "--", "sleep", "20"],
            meter="level=80 footprint=100M\nfootprint=2G\n")
    assert p.returncode == 3, p.stderr
    assert "guard: stopping: footprint 2.0 GB over the cap 1.0 GB, available 80%" in p.stderr
    assert p.stderr.count("cannot read the system's memory figures: judging by the last ones "
                          "read (available 80%)") == 1, p.stderr


def test_system_figures_unreadable_at_admission_start_nothing(tmp_path):
    p = run(tmp_path, ["guard", "--", "sh", "-c", "echo ran"], meter="footprint=1G\n")
    assert p.returncode == 3 and "ran" not in p.stdout, (p.returncode, p.stderr)
    assert "cannot read the system's memory figures" in p.stderr, p.stderr


def test_max_device_without_any_device_reading_says_it_judged_nothing(tmp_path):
    p = run(tmp_path, ["guard", "--max-device", "1G", "--", "true"])
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("--max-device: the command's probe sent no device reading") == 1


def test_a_malformed_devmem_line_is_said_and_skipped_and_the_next_judged(tmp_path):
    from test_devmem_record import GB, devmem_run
    # bytes as text: not a reading (said once); the next line, whole, is over the cap
    p, recs = devmem_run(tmp_path, "5G", {"device": "cuda:0", "bytes": "9G"},
                         {"device": "cuda:0", "bytes": 6 * GB}, "hold=3")
    assert p.returncode == 3 and "done" not in p.stdout, p.stderr
    assert p.stderr.count("ignoring a malformed line from the command's probe pipe") == 1
    assert "device memory 6.0 GB over the cap 5.0 GB on 'cuda:0'" in p.stderr, p.stderr
