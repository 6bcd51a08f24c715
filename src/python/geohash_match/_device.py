"""Arrays in GPU memory: CuPy's, or any object with __cuda_array_interface__ (version 2 or 3).

The library's tables take device pointers on the CUDA backend and use them in place (their
headers' memory rules), so a device array goes to the library as its pointer: no copy to the
host, no conversion. Hence the strict checks: uint32 (or the exact dtype a result needs), C
contiguous, no mask. Ordering: the library queues its work on its context's own stream, so
before a call the context waits (on the device, not the host) for the stream each array was
produced on (the interface's "stream", version 3), and for CuPy's current stream when CuPy
allocated the results; every call returns when its results are written, so a result may be
used on any stream at once.

Results are CuPy arrays when CuPy is importable, else DeviceArray (memory of the context).
"""

import ctypes

import numpy as np

from . import _lib
from ._lib import lib

try:
    import cupy
except ImportError:  # results are then DeviceArray
    cupy = None


def is_device(a):
    """True for an array in GPU memory (it exposes __cuda_array_interface__)."""
    return hasattr(a, "__cuda_array_interface__")


class DeviceArg:
    """A device array checked for the library: its pointer, shape, size and producer stream.
    Holds a reference to the array so that its memory outlives the call."""

    def __init__(self, a, what, typestr="<u4"):
        cai = a.__cuda_array_interface__
        dtype = np.dtype(cai["typestr"])
        if dtype != np.dtype(typestr):
            raise TypeError("%s: a device array must be %s (nothing is converted on the device), "
                            "not %s" % (what, np.dtype(typestr), dtype))
        if cai.get("mask") is not None:
            raise ValueError("%s: masked device arrays are not supported" % what)
        self.shape = tuple(int(d) for d in cai["shape"])
        self.size = int(np.prod(self.shape, dtype=np.int64))
        strides = cai.get("strides")
        if strides is not None and self.size > 1 and not _c_contiguous(self.shape, strides,
                                                                      dtype.itemsize):
            raise ValueError("%s: the device array must be C-contiguous (strides %s for shape "
                             "%s); pass cupy.ascontiguousarray(a)" % (what, tuple(strides),
                                                                      self.shape))
        device = getattr(getattr(a, "device", None), "id", 0)
        if device != 0:
            raise ValueError("%s: the device array is on GPU %d; the library works on GPU 0"
                             % (what, device))
        self.ptr = int(cai["data"][0]) if self.size else None
        self.stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
        self.keep = a
        self.device = True


def _c_contiguous(shape, strides, itemsize):
    want = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != want:
            return False
        want *= extent
    return True


def require_cuda(ctx, owner):
    """Raises ValueError unless ctx runs on CUDA (the CPU backend cannot read device memory)."""
    if ctx.backend != "cuda":
        raise ValueError("%s runs on the %s backend, which cannot read device arrays: pass "
                         "NumPy arrays, or make it with backend=\"cuda\"" % (owner, ctx.backend))


def empty(ctx, shape, dtype):
    """A result array in device memory: CuPy's when CuPy is importable, else a DeviceArray.
    Returns (array, stream the library must wait for before writing it, or None)."""
    if cupy is not None:
        out = cupy.empty(shape, dtype=dtype)
        # CuPy's pool may hand out memory that work queued on its stream still uses.
        return out, cupy.cuda.get_current_stream().ptr or 1
    return DeviceArray(ctx, shape, dtype), None


def arange(ctx, n):
    """0 .. n-1 as uint32 in device memory (the ids of a whole Index)."""
    if cupy is not None:
        return cupy.arange(n, dtype=np.uint32)
    out = DeviceArray(ctx, (n,), np.uint32)
    host = np.arange(n, dtype=np.uint32)
    with ctx.lock:
        _lib.check(lib.ghm_buffer_upload(ctx.ptr, out.ptr, host.ctypes.data, host.nbytes),
                   "device upload")
    return out


def wait_for(ctx, streams):
    """Makes ctx's stream wait for each producer stream (None: nothing to wait for). Call with
    ctx.lock held."""
    for s in set(streams):
        if s is not None:
            _lib.check(lib.ghm_context_wait_stream(ctx.ptr, int(s)), "wait for stream %#x" % s)


class DeviceArray:
    """Device memory of a context, holding one result when CuPy is not installed. It exposes
    __cuda_array_interface__ (version 3, no stream: the data is written when the call that made
    it returns), so Numba, PyTorch or CuPy take it without a copy; get() copies it to a NumPy
    array. Keep it alive while work on another stream reads it."""

    def __init__(self, ctx, shape, dtype):
        self._ctx = ctx
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self._p = ctypes.c_void_p()
        with ctx.lock:
            _lib.check(lib.ghm_buffer_alloc(ctx.ptr, self.nbytes, ctypes.byref(self._p)),
                       "device allocation")

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def ptr(self):
        return self._p.value

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self.ptr if self.size else 0, False), "version": 3, "strides": None,
                "stream": None}

    def __len__(self):
        return self.shape[0]

    def get(self):
        """A NumPy copy of the data."""
        host = np.empty(self.shape, dtype=self.dtype)
        if self.size:
            with self._ctx.lock:
                _lib.check(lib.ghm_buffer_download(self._ctx.ptr, host.ctypes.data, self.ptr,
                                                   self.nbytes), "device download")
        return host

    def close(self):
        if getattr(self, "_p", None) and self._p.value and self._ctx._ptr:
            with self._ctx.lock:
                lib.ghm_buffer_free(self._ctx.ptr, ctypes.byref(self._p))

    __del__ = close

    def __repr__(self):
        return "DeviceArray(shape=%s, dtype=%s)" % (self.shape, self.dtype)
