"""rng.py -- save and restore every random generator around a model build."""
import random


class RngState:
    """A snapshot of torch CPU, CUDA (all devices), MPS, Python random and the
    NumPy global generator. Generators whose library is not installed (or whose
    device is absent) are skipped."""

    def __init__(self):
        self.python = random.getstate()
        self.numpy = None
        try:
            import numpy
            self.numpy = numpy.random.get_state()
        except ImportError:
            pass
        self.torch_cpu = self.cuda = self.mps = None
        try:
            import torch
        except ImportError:
            return
        self.torch_cpu = torch.get_rng_state()
        try:
            if torch.cuda.is_available():
                # Initialises CUDA if needed: a build that would initialise it
                # would draw from the lazily seeded generators too.
                self.cuda = torch.cuda.get_rng_state_all()
        except Exception:
            self.cuda = None
        mps = getattr(torch, "mps", None)
        try:
            if (mps is not None and hasattr(mps, "get_rng_state")
                    and torch.backends.mps.is_available()):
                self.mps = mps.get_rng_state()
        except Exception:
            self.mps = None

    def restore(self):
        random.setstate(self.python)
        if self.numpy is not None:
            import numpy
            numpy.random.set_state(self.numpy)
        if self.torch_cpu is None:
            return
        import torch
        torch.set_rng_state(self.torch_cpu)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)
        if self.mps is not None:
            torch.mps.set_rng_state(self.mps)


def fingerprint():
    """What every generator's state is now, cheap to compare: two fingerprints are equal
    when no generator was drawn from between them. CUDA's generators count only once
    CUDA is initialised (asking would initialise it); MPS's are not read."""
    parts = [hash(random.getstate())]
    try:
        import numpy
        st = numpy.random.get_state()
        parts.append((st[0], st[1].tobytes(), st[2:]))
    except ImportError:
        pass
    try:
        import torch
    except ImportError:
        return tuple(parts)
    parts.append(bytes(torch.get_rng_state().numpy()))
    try:
        if torch.cuda.is_initialized():
            parts.extend(bytes(t.numpy()) for t in torch.cuda.get_rng_state_all())
    except Exception:
        pass
    return tuple(parts)


class preserved_rng:
    """Context manager: generators are as they were on entry when the block
    exits (also when it raises). enabled=False makes it do nothing."""

    def __init__(self, enabled=True):
        self.enabled = enabled
        self.state = None

    def __enter__(self):
        if self.enabled:
            self.state = RngState()
        return self

    def __exit__(self, *exc):
        if self.state is not None:
            self.state.restore()
        return False
