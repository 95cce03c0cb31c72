"""test_record_probe.py -- `stagebench record` activates the probe as `compare` does: plain,
with --adapter [--staged], and with --pipeline/--variant; the caller's PYTHONPATH comes last."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import PROBE, ROOT, SITE

SB = os.environ.get("SB_BIN") or os.path.join(ROOT, "stagebench")
pytestmark = pytest.mark.skipif(not os.access(SB, os.X_OK), reason="no stagebench binary")

SHOW = ("import os, json; print(json.dumps({k: os.environ.get(k) for k in "
        "('PYTHONPATH', 'STAGEBENCH_ADAPTER', 'STAGEBENCH_STAGED', 'STAGEBENCH_MODE')}))")


def record(tmp_path, args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGEBENCH_")}
    env["PYTHONPATH"] = "/callers/own"
    env["STAGEBENCH_HOME"] = ROOT
    env.update(env_extra or {})
    p = subprocess.run([SB, "record", "-q", "--interval", "50ms",
                        "-o", str(tmp_path / "t.trace.jsonl")] + args,
                       env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def shown(out):
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def test_plain_record_puts_the_probe_first_and_keeps_the_callers_path(tmp_path):
    # the probe hides STAGEBENCH_ADAPTER from children; a plain run never had one
    rc, out, err = record(tmp_path, ["--", sys.executable, "-c", SHOW])
    assert rc == 0, err
    assert shown(out)["PYTHONPATH"] == "%s:%s:/callers/own" % (SITE, PROBE)


def test_adapter_and_staged_activate_the_probe_and_a_staged_run_that_never_engages_fails(
        tmp_path):
    (tmp_path / "ad.py").write_text(textwrap.dedent("""
        import os
        def install(probe):
            print("adapter sees", os.environ.get("PYTHONPATH"), probe.staged, flush=True)
    """))
    rc, out, err = record(tmp_path, ["--adapter", "ad.py", "--staged", "--",
                                     sys.executable, "-c", "pass"])
    assert "adapter sees %s:%s:%s:/callers/own True" % (SITE, PROBE, tmp_path) in out, err
    assert rc == 3
    assert "staged loading never engaged" in err and "no stage was ever entered" in err


def test_pipeline_and_variant_run_the_files_command_with_its_env(tmp_path):
    (tmp_path / "show.py").write_text(SHOW.replace("; ", "\n") + "\n")
    (tmp_path / "pipeline.json").write_text(json.dumps({
        "name": "tiny", "command": ["{python}", "{pipeline_dir}/show.py", "{word}"],
        "defaults": {"word": "x"}, "pythonpath": ["{pipeline_dir}/lib"],
        "variants": {"eager": {"env": {}}, "staged": {"env": {"STAGEBENCH_STAGED": "1"}}}}))
    rc, out, err = record(tmp_path, ["--pipeline", "pipeline.json", "--variant", "staged",
                                     "--set", "word=y"])
    got = shown(out)
    assert got["PYTHONPATH"] == "%s:%s:%s/lib:/callers/own" % (SITE, PROBE, tmp_path)
    assert got["STAGEBENCH_STAGED"] == "1" and got["STAGEBENCH_MODE"] == "staged"
    # a staged variant without an adapter cannot be staged: a failed run, not an eager one
    assert rc == 3 and "no adapter was given (STAGEBENCH_ADAPTER)" in err
    rc, out, err = record(tmp_path, ["--pipeline", "pipeline.json", "--variant", "eager"])
    assert rc == 0 and shown(out)["STAGEBENCH_MODE"] == "eager", err
    rc, out, err = record(tmp_path, ["--pipeline", "pipeline.json"])
    assert rc == 2 and "option '--variant' is needed" in err and "eager, staged" in err


@pytest.mark.parametrize("args,msg", [
    (["--staged", "--", "true"], "'--staged' needs '--adapter'"),
    (["--variant", "x", "--", "true"], "need '--pipeline FILE'"),
])
def test_probe_options_without_what_they_need_are_usage_errors(tmp_path, args, msg):
    rc, out, err = record(tmp_path, args)
    assert rc == 2 and msg in err
