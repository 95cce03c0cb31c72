"""devmem.py -- device memory the recorder cannot see from outside (CUDA reserved, MPS driver)."""
import sys


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
