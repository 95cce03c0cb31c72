"""devmem.py -- device memory the recorder cannot see from outside (CUDA reserved, MPS driver):
read at stage boundaries (read(), the `gpu` events) and, once a device is in use, on the
recorder's interval by a sampler thread (the `devmem` lines the recorder writes as samples)."""
import atexit
import os
import sys
import threading

def read():
    """[(device, metric, bytes, max_bytes)] for each device in use; [] when none.
    max_bytes is None where the device has no peak counter (MPS).
    CUDA devices count only once CUDA is initialised (nothing is on them before)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    out = []
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            for i in range(torch.cuda.device_count()):
                out.append(("cuda:%d" % i, "cuda_reserved",
                            int(torch.cuda.memory_reserved(i)),
                            int(torch.cuda.max_memory_reserved(i))))
    except Exception:
        pass
    mps = getattr(torch, "mps", None)
    if mps is not None and hasattr(mps, "driver_allocated_memory"):
        try:
            if torch.backends.mps.is_available():
                b = int(mps.driver_allocated_memory())
                out.append(("mps", "mps_driver", b, None))  # no peak counter
        except Exception:
            pass
    return out


def reset_peaks():
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            for i in range(torch.cuda.device_count()):
                torch.cuda.reset_peak_memory_stats(i)
    except Exception:
        pass


# -- the sampler ----------------------------------------------------------------

def in_use(readings):
    """A device holds the pipeline's memory: CUDA initialised, or MPS driver
    memory above 0 (MPS is available on every Apple silicon Mac, used or not)."""
    return any(metric != "mps_driver" or nbytes > 0 for _, metric, nbytes, _ in readings)


def _cuda_reading(torch):
    n = torch.cuda.device_count()
    reserved = sum(int(torch.cuda.memory_reserved(i)) for i in range(n))
    allocated = sum(int(torch.cuda.memory_allocated(i)) for i in range(n))
    return {"device": "cuda:0" if n == 1 else "cuda", "metric": "cuda_reserved",
            "bytes": reserved, "allocated": allocated}


def _cuda_total(torch):
    return sum(int(torch.cuda.get_device_properties(i).total_memory)
               for i in range(torch.cuda.device_count()))


def sample():
    """One reading of the device in use, summed over CUDA's devices: {"device",
    "metric", "bytes" (CUDA reserved / MPS driver memory), "allocated" (the
    tensors' share)}; None when no device is in use. A figure the torch at
    hand lacks is left out."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return _cuda_reading(torch)
    except Exception:
        pass
    mps = getattr(torch, "mps", None)
    try:
        b = int(mps.driver_allocated_memory())
    except Exception:
        return None
    out = {"device": "mps", "metric": "mps_driver", "bytes": b}
    try:
        out["allocated"] = int(mps.current_allocated_memory())
    except Exception:
        pass
    return out


def device_total():
    """The device's size in bytes (CUDA: all devices' memory; MPS: what Metal
    recommends at most, torch >= 2.5), or None."""
    torch = sys.modules.get("torch")
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return _cuda_total(torch)
    except Exception:
        pass
    try:
        return int(torch.mps.recommended_max_memory())
    except Exception:
        return None


def interval(environ=None):
    """The recorder's sampling interval (STAGEBENCH_INTERVAL, seconds), None
    when it names none (not run by the recorder: no sampler)."""
    env = os.environ if environ is None else environ
    try:
        v = float(env.get("STAGEBENCH_INTERVAL") or "nan")
    except ValueError:
        return None
    return v if 0 < v < 86400 else None


class Sampler:
    """Reads the device on the interval and writes each reading as a `devmem`
    line. The thread holds the GIL only to read and write: it waits on an
    Event (the GIL released) between readings."""

    def __init__(self, emitter, every):
        self.emitter = emitter
        self.every = every
        self.readings = 0
        self._stop = threading.Event()
        self._total = None
        self.thread = threading.Thread(target=self._run, name="stagebench-devmem", daemon=True)

    def _run(self):
        self._total = device_total()
        while not self._stop.wait(self.every):
            self.read_once()

    def read_once(self):
        r = sample()
        if r is None or not self.emitter.on:
            return
        if self._total:
            r["total"] = self._total
        if self.emitter.emit("devmem", **r) is not None:
            self.readings += 1

    def stop(self):
        self._stop.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout=5)


_samplers = {}  # id(emitter) -> Sampler: one thread per probe's pipe


def watch(emitter, readings, environ=None):
    """Called with each boundary's readings: start the sampler once a device is
    in use, events are on and the recorder named its interval; nothing (no
    thread) otherwise. Returns it."""
    s = _samplers.get(id(emitter))
    if s is not None and s.emitter is emitter:
        return s
    every = interval(environ)
    if every is None or not emitter.on or not in_use(readings):
        return None
    s = _samplers[id(emitter)] = Sampler(emitter, every)
    s.thread.start()
    return s


def sampler(emitter):
    """The emitter's running sampler, or None."""
    s = _samplers.get(id(emitter))
    return s if s is not None and s.emitter is emitter else None


def stop_all():
    for s in list(_samplers.values()):
        s.stop()
    _samplers.clear()


atexit.register(stop_all)
