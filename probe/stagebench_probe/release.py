"""release.py -- free a module's weights for good: parameters and buffers go to the meta device."""
import ctypes
import ctypes.util
import gc
import sys


class StageReleasedError(RuntimeError):
    """Raised when a module released by the probe is called again."""


def _storage_key(t):
    try:
        s = t.untyped_storage()  # torch 2.x
    except AttributeError:
        s = t.storage()  # torch 1.13: TypedStorage
    try:
        nbytes = s.nbytes()
    except AttributeError:
        nbytes = s.size() * t.element_size()
    return (str(t.device), s.data_ptr()), nbytes


def _excluded_modules(exclude):
    ids = set()
    for m in exclude or ():
        for sub in m.modules():
            ids.add(id(sub))
    return ids


def _own_tensors(module, exclude=()):
    """(owner module, kind, key, tensor) for every parameter and buffer of
    `module` outside the modules in `exclude` (and their children)."""
    skip = _excluded_modules(exclude)
    for mod in module.modules():
        if id(mod) in skip:
            continue
        for key, p in list(mod._parameters.items()):
            if p is not None:
                yield mod, "_parameters", key, p
        for key, b in list(mod._buffers.items()):
            if b is not None:
                yield mod, "_buffers", key, b


def module_nbytes(module, exclude=()):
    """Bytes of storage held by the parameters and buffers of `module` (each
    storage counted once; meta tensors count 0), leaving out `exclude`."""
    seen = {}
    for _, _, _, t in _own_tensors(module, exclude):
        if t.device.type == "meta":
            continue
        key, nbytes = _storage_key(t)
        seen[key] = nbytes
    return sum(seen.values())


def is_module(obj):
    """Whether obj is a torch.nn.Module (False while torch is not imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def built_nbytes(module, base=None):
    """The bytes a build brought (its load event's nbytes): those of `module`,
    less those of `base` (the backbone it was built on) when base is another
    module; 0 for an object that is not a module."""
    if not is_module(module):
        return 0
    if is_module(base) and base is not module:
        return module_nbytes(module, exclude=[base])
    return module_nbytes(module)


def _raise_released(module, args):
    raise StageReleasedError(module._stagebench_released)


def _released_message(name, stage):
    if stage:
        return ("%s was released when stage '%s' started; it is not listed for '%s'"
                % (name, stage, stage))
    return "%s was released by stagebench_probe.release(); build it again to use it" % name


_libc = None


def _malloc_trim():
    # glibc keeps freed heap pages below its mmap threshold; give them back so
    # the process's resident size shows the release.
    global _libc
    if not sys.platform.startswith("linux"):
        return
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _libc = False
    if _libc:
        _libc.malloc_trim(0)


def flush_allocators():
    """gc, then hand cached memory back: glibc heap, CUDA and MPS caches."""
    gc.collect()
    _malloc_trim()
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()
    except Exception:
        pass
    mps = getattr(torch, "mps", None)
    if mps is not None and hasattr(mps, "empty_cache"):
        try:
            if torch.backends.mps.is_available():
                mps.empty_cache()
        except Exception:
            pass


def release(module, name=None, stage=None, exclude=(), flush=True):
    """Move every parameter and buffer of `module` to the meta device.

    The old tensors' storage is freed even when other code still holds the
    module or its parameters: each old tensor is emptied in place (its data
    replaced by a 0-element tensor), and the module gets meta tensors of the
    same shape and dtype. Afterwards calling the module, or any of its
    submodules, raises StageReleasedError naming `name` (default: the class
    name) and `stage`. Modules in `exclude` (e.g. a shared backbone) are left
    alone. flush=True runs gc and empties the allocator caches.
    Returns the bytes that were resident (see module_nbytes)."""
    import torch

    label = name or type(module).__name__
    nbytes = module_nbytes(module, exclude)
    new_for = {}
    skip = _excluded_modules(exclude)
    with torch.no_grad():
        for mod, kind, key, t in _own_tensors(module, exclude):
            if id(t) in new_for:  # tied weights stay tied
                getattr(mod, kind)[key] = new_for[id(t)]
                continue
            meta = torch.empty(t.shape, dtype=t.dtype, device="meta")
            if isinstance(t, torch.nn.Parameter):
                meta = torch.nn.Parameter(meta, requires_grad=t.requires_grad)
            if t.device.type != "meta":
                try:
                    t.grad = None
                    t.data = torch.empty(0, dtype=t.dtype, device=t.device)
                except RuntimeError as e:
                    sys.stderr.write("stagebench_probe: %s: cannot empty %s.%s in place "
                                     "(%s); it is freed only when nothing else holds it\n"
                                     % (label, type(mod).__name__, key, e))
            new_for[id(t)] = meta
            getattr(mod, kind)[key] = meta
        message = _released_message(label, stage)
        for mod in module.modules():
            if id(mod) in skip:
                continue
            if "_stagebench_released" not in mod.__dict__:
                mod.register_forward_pre_hook(_raise_released)
            mod.__dict__["_stagebench_released"] = message
    del new_for
    if flush:
        flush_allocators()
    return nbytes


def is_released(module):
    return "_stagebench_released" in getattr(module, "__dict__", {})
