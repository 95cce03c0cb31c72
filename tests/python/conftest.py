"""conftest.py -- shared helpers for the probe and demo tests: paths, pipes, subprocess runs."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROBE = os.path.join(ROOT, "probe")
SITE = os.path.join(PROBE, "site")
DEMO = os.path.join(ROOT, "demo")

if PROBE not in sys.path:
    sys.path.insert(0, PROBE)


def read_all(fd):
    chunks = []
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(fd)
    return b"".join(chunks)


def parse_events(data):
    """The JSON objects of an event stream; every line must be one."""
    text = data.decode("utf-8")
    assert text == "" or text.endswith("\n"), "event stream ends mid-line"
    return [json.loads(line) for line in text.splitlines()]


def run_probed(argv, env_extra, cwd=None, with_fd=True, timeout=120, extra_path=()):
    """Run argv the way the runner does: PYTHONPATH = probe/site, probe/, demo/,
    STAGEBENCH_FD = the write end of a pipe. Returns (returncode, events, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGEBENCH_")}
    env["PYTHONPATH"] = os.pathsep.join([SITE, PROBE, DEMO] + list(extra_path))
    env.update(env_extra)
    pass_fds = ()
    r = w = None
    if with_fd:
        r, w = os.pipe()
        env["STAGEBENCH_FD"] = str(w)
        pass_fds = (w,)
    p = subprocess.Popen(argv, env=env, cwd=cwd, pass_fds=pass_fds,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if w is not None:
        os.close(w)
        data = read_all(r)
    else:
        data = b""
    out, err = p.communicate(timeout=timeout)
    return p.returncode, parse_events(data), out.decode(), err.decode()


@pytest.fixture
def pipe_probe():
    """A Probe writing to a pipe; call .events() to close it and read what was written."""
    from stagebench_probe import Probe

    made = []

    def make(**kw):
        r, w = os.pipe()
        probe = Probe(fd=w, **kw)
        made.append((probe, r, w))

        def events():
            os.close(w)
            probe.events.fd = None
            return parse_events(read_all(r))
        probe.read_events = events
        return probe
    yield make
    for probe, r, w in made:
        if probe.events.fd is not None:
            for fd in (r, w):
                try:
                    os.close(fd)
                except OSError:
                    pass
