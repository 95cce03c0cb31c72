"""flushed.py -- the records of a trace as far as it was flushed, for the e2e scripts' queries
(`zstdcat TRACE | PYTHONPATH=tests/e2e python3 -c 'import flushed ...'`): a line cut short
by the recorder still writing is skipped."""
import json


def load(stream):
    """(samples with a footprint, events) of the JSON lines of stream, in order."""
    recs = []
    for line in stream:
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
    samples = [r for r in recs if r["type"] == "sample" and "footprint" in r]
    events = [r for r in recs if r["type"] == "event"]
    return samples, events


def from_stage(samples, events, stage):
    """The samples from the first stage event of stage on (none when there is no such event)."""
    t = [e["t"] for e in events if e["kind"] == "stage" and e["stage"] == stage]
    return [s for s in samples if t and s["t"] >= t[0]]
