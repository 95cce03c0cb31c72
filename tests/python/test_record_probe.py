"""test_record_probe.py -- `stagebench record` activates the probe as `compare` does: plain,
with --adapter [--staged], and with --pipeline/--variant; the caller's PYTHONPATH comes last."""
import json
import os
import shutil
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
    (["--variant", "x", "--", "true"], "need '--pipeline FILE'"),
])
def test_probe_options_without_what_they_need_are_usage_errors(tmp_path, args, msg):
    rc, out, err = record(tmp_path, args)
    assert rc == 2 and msg in err


def test_staged_without_an_adapter_learns_first_and_fails_when_nothing_is_learned(tmp_path):
    # record --staged with no adapter learns a plan from one eager run first; a command
    # that builds no model leaves no plan: a failed run (3) that says so, no staged run
    rc, out, err = record(tmp_path, ["--staged", "--", "true"])
    assert rc == 3 and "the eager run that learns the plan wrote no plan" in err, err
    assert not list(tmp_path.glob("*.plan.py"))


# -- the line protocol: STAGEBENCH_FD stays set for the pipeline and its children -------------

def trace_events(tmp_path):
    lines = (tmp_path / "t.trace.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("type") == "event"]


WRITE_OWN = textwrap.dedent("""
    import json, os, time
    fd = int(os.environ["STAGEBENCH_FD"])
    os.write(fd, (json.dumps({"kind": "stage", "stage": "%s",
                              "mono": time.clock_gettime(time.CLOCK_MONOTONIC)}) + "\\n").encode())
""")


def test_a_python_script_that_writes_its_own_events_finds_the_fd(tmp_path):
    rc, out, err = record(tmp_path, ["--", sys.executable, "-c", WRITE_OWN % "own"])
    assert rc == 0, err
    assert [e["stage"] for e in trace_events(tmp_path) if e["kind"] == "stage"] == ["own"]


C_CHILD = r"""
#include "stagebench_probe.h"
int main(void)
{
	sbp_stage("c_stage");
	return sbp_mark("from C") ? 1 : 0;
}
"""


def test_a_c_child_of_a_python_pipeline_writes_into_the_trace(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    (tmp_path / "child.c").write_text(C_CHILD)
    subprocess.run([cc, "-std=gnu99", "-I", PROBE, "-o", str(tmp_path / "child"),
                    str(tmp_path / "child.c")], check=True)
    # subprocess's default close_fds=True: the probe hands the pipe on
    app = ("import subprocess, sys\n"
           "subprocess.run([%r], check=True)\n"
           "subprocess.run([%r, '-c', %r], check=True)\n"
           % (str(tmp_path / "child"), sys.executable, WRITE_OWN % "py_child"))
    rc, out, err = record(tmp_path, ["--", sys.executable, "-c", app])
    assert rc == 0, err
    ev = trace_events(tmp_path)
    assert [e["stage"] for e in ev if e["kind"] == "stage"] == ["c_stage", "py_child"], err
    assert "from C" in [e.get("note") for e in ev if e["kind"] == "mark"]


FORKING_APP = textwrap.dedent("""
    import multiprocessing as mp
    import os
    import sys

    def load():
        return 1

    def work(x):
        return x * 2

    def main():
        load()
        pid = os.fork()
        if pid == 0:
            sys.exit(0)           # at exit before any stage: the parent's run is not judged here
        os.waitpid(pid, 0)
        pid = os.fork()
        if pid == 0:
            work(1)               # a hooked stage method in a forked child
            sys.exit(0)
        os.waitpid(pid, 0)
        with mp.get_context("fork").Pool(2) as pool:
            pool.map(work, [1, 2, 3])
        p = mp.get_context("spawn").Process(target=work, args=(1,))
        p.start()
        p.join()
        work(3)
        print("done", p.exitcode, flush=True)

    if __name__ == "__main__":
        main()
""")

FORKING_ADAPTER = textwrap.dedent("""
    import functools
    def install(probe):
        probe.register("m", lambda: [1], ["work"])
        probe.when_imported("app", functools.partial(patch, probe))
    def patch(probe, app):
        probe.on_call(app, "work", "work")
""")


def test_forked_and_multiprocessing_children_leave_a_staged_run_as_it_is(tmp_path):
    (tmp_path / "app.py").write_text(FORKING_APP)
    (tmp_path / "ad.py").write_text(FORKING_ADAPTER)
    rc, out, err = record(tmp_path, ["--adapter", "ad.py", "--staged", "--",
                                     sys.executable, "app.py"])
    assert rc == 0 and "done 0" in out, err
    assert "never engaged" not in err and "probe: failed" not in err
    ev = trace_events(tmp_path)
    assert not [e for e in ev if e["kind"] == "mark" and "failed" in e["note"]]
    # the parent's one entry into "work"; the children's entries write nothing
    assert [e["stage"] for e in ev if e["kind"] == "stage"] == ["work"]
    assert [e["name"] for e in ev if e["kind"] == "load"] == []


# -- the pipe is the probe's own: a pipeline that closes or reuses fd 3 ---------------------

CLOSES_LOW = textwrap.dedent("""
    import os, stagebench_probe
    p = stagebench_probe.get_probe()
    p.enter("first")
    os.closerange(3, 10)  # the inherited descriptors it knows of
    with open("a.txt", "w") as a, open("own.txt", "w") as f:  # fd 3, 4: no event lands here
        p.enter("second")
        f.write("mine\\n")
    p.enter("third")
""")

CLOSES_ALL = textwrap.dedent("""
    import os, stagebench_probe
    p = stagebench_probe.get_probe()
    p.enter("first")
    os.closerange(3, 65536)  # every inherited descriptor, the probe's own copy too
    f = open("own.txt", "w")
    p.enter("second")
    f.write("mine\\n")
    f.close()
""")


def test_a_pipeline_that_closes_its_low_descriptors_leaves_the_events_whole(tmp_path):
    rc, out, err = record(tmp_path, ["--", sys.executable, "-c", CLOSES_LOW])
    assert rc == 0, err
    assert (tmp_path / "own.txt").read_text() == "mine\n"
    assert [e["stage"] for e in trace_events(tmp_path)
            if e["kind"] == "stage"] == ["first", "second", "third"]


def test_a_pipeline_that_closes_every_descriptor_fails_loudly(tmp_path):
    rc, out, err = record(tmp_path, ["--", sys.executable, "-c", CLOSES_ALL])
    assert (tmp_path / "own.txt").read_text() == "mine\n"
    assert "the events pipe" in err and "closed or replaced" in err, err
    assert rc == 3, err
