"""latents.py -- fingerprint an array: sha256 of its raw little-endian bytes plus a .npy copy."""
import hashlib
import os
import re

DTYPES = {"float16": "float16", "float32": "float32", "float64": "float64",
          "bfloat16": "bfloat16"}


def to_numpy(value):
    """(numpy array, dtype name) for a torch tensor or numpy array.
    bfloat16 comes back as its raw bits in uint16 with the name "bfloat16"."""
    import numpy
    name = None
    if hasattr(value, "detach"):  # torch.Tensor
        import torch
        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        t = t.contiguous()
        if t.dtype == torch.bfloat16:
            arr = t.view(torch.int16).numpy().view(numpy.uint16)
            name = "bfloat16"
        else:
            arr = t.numpy()
    else:
        arr = numpy.asarray(value)
    arr = numpy.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and
                                      numpy.little_endian is False):
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    if name is None and arr.dtype.kind in "biu":
        # class indices, masks, token ids: the latent reader compares floats, so
        # they are kept as float64 (exact up to 2^53)
        arr = arr.astype("<f8")
    if name is None:
        name = arr.dtype.name
    return arr, name


def digest(arr):
    """sha256 hex of the array's raw bytes in C order (little-endian)."""
    import numpy
    return hashlib.sha256(numpy.ascontiguousarray(arr).tobytes()).hexdigest()


_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(name):
    """A file name made of the latent's name: other characters become '_'."""
    s = _SAFE.sub("_", name).lstrip(".")
    return s or "latent"
