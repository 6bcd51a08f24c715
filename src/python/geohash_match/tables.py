"""The hash tables on NumPy arrays, and on device arrays: Map, Set, Multimap, Index.

Keys and values are 32-bit unsigned integers; any integer array whose values fit is accepted
(others raise ValueError rather than wrap around), and results have the shape of the keys
asked for. Every table is built in one call from arrays, on the backend of its context, and
gives the same answers on both backends.

Device arrays (CuPy, or anything with __cuda_array_interface__) are used in place on the CUDA
backend, with no copy to the host (_device.py): they must be uint32 and C-contiguous. Results
live where the query keys live (CuPy arrays, or DeviceArray without CuPy); the results of
Set.keys() and Index.keys() live where the build's keys lived.
"""

import ctypes

import numpy as np

from . import _device, _lib
from ._lib import lib


def _u32(a, what):
    """a as a contiguous uint32 array, refusing values that do not fit."""
    a = np.asarray(a)
    if a.dtype == np.uint32:
        return np.ascontiguousarray(a)
    if a.size == 0:
        return np.zeros(a.shape, dtype=np.uint32)
    if a.dtype.kind not in "iu":
        raise TypeError("%s must be an integer array, not %s" % (what, a.dtype))
    if a.min() < 0 or a.max() > 0xFFFFFFFF:
        raise ValueError("%s must lie in 0 .. 2**32 - 1" % what)
    return np.ascontiguousarray(a, dtype=np.uint32)


class _HostArg:
    """A host array for the library: uint32, contiguous, held while the call runs."""

    device = False
    stream = None

    def __init__(self, a, what):
        self.keep = _u32(a, what)
        self.shape = self.keep.shape
        self.size = self.keep.size
        self.ptr = self.keep.ctypes.data


def _arg(table, a, what):
    """One array argument of a table's call, host or device (checked against the backend)."""
    if _device.is_device(a):
        _device.require_cuda(table._ctx, "this %s" % type(table).__name__)
        return _device.DeviceArg(a, what)
    return _HostArg(a, what)


def _ptr(a):
    """The data pointer of a result array (NumPy, CuPy or DeviceArray)."""
    if _device.is_device(a):
        return a.__cuda_array_interface__["data"][0] or None
    return a.ctypes.data


def _result(table, on_device, shape, dtype):
    """(array, stream to wait for) for a result: device memory when on_device, else NumPy."""
    if on_device:
        return _device.empty(table._ctx, shape, dtype)
    return np.empty(shape, dtype=dtype), None


def _pairs(table, keys, values):
    k = _arg(table, keys, "keys")
    v = _arg(table, values, "values")
    if k.size != v.size:
        raise ValueError("keys and values differ in length (%d and %d)" % (k.size, v.size))
    return k, v


def _load_factor(load_factor):
    lf = float(load_factor)
    if not (lf == 0.0 or 0.0 < lf <= 0.99):
        raise ValueError("load_factor must be in (0, 0.99], or 0 for the default, not %r" % lf)
    return lf


class _Table(_lib.Handle):
    """What the four tables share: the context, creation with a load factor, a locked call
    that first orders the context after the streams of device arrays, and whether the last
    build's keys were device memory."""

    _kind = None
    _device_built = False

    def _create(self, context, backend, threads, seed, load_factor):
        self._init_handle(_lib.context_for(context, backend, threads, seed))
        with self._ctx.lock:
            _lib.check(getattr(lib, "ghm_%s_create" % self._kind)(
                self._ctx.ptr, ctypes.c_double(_load_factor(load_factor)),
                ctypes.byref(self._ptr)), "cannot create the %s" % self._kind)

    def _call(self, name, *args, waits=()):
        with self._ctx.lock:
            _device.wait_for(self._ctx, waits)
            return _lib.check(getattr(lib, "ghm_%s_%s" % (self._kind, name))(self._handle(),
                                                                             *args),
                              "%s %s" % (self._kind, name))

    def _query(self, name, keys, dtype, what="keys"):
        """A call that writes one dtype result per key, in the keys' shape and memory."""
        q = _arg(self, keys, what)
        out, stream = _result(self, q.device, q.shape, dtype)
        if q.size:
            self._call(name, q.ptr, q.size, _ptr(out), waits=(q.stream, stream))
        return out

    def _build(self, *arrays):
        self._device_built = any(a.device for a in arrays)
        self._call("build", *[a.ptr for a in arrays], arrays[0].size,
                   waits=[a.stream for a in arrays])


class Map(_Table):
    """One value per key. Duplicate keys keep their smallest value. find() gives NOT_FOUND
    (0xFFFFFFFF) for an absent key; NOT_FOUND is also a legal value, so use a Set to tell the
    two apart when it matters. scheme picks the table family (ghm_map.h): "cuckoo" (default),
    "linear", "quadratic", "double", "robin-hood" (coherent), "robin-hood-random"; every
    scheme gives the same answers. Keys, values and queries may be CuPy arrays on the CUDA
    backend (the answers are then a CuPy array).

        m = gm.Map(keys, values)
        m = gm.Map(keys, values, scheme="robin-hood", load_factor=0.99)
        found = m.find(queries)      # uint32, NOT_FOUND where absent
    """

    _kind = "map"
    _free = "ghm_map_free"

    def __init__(self, keys, values, load_factor=0.0, backend="auto", threads=0, seed=1,
                 context=None, scheme="cuckoo"):
        opt = lib.ghm_map_defaults()
        opt.load_factor = _load_factor(load_factor)
        opt.scheme = lib.ghm_map_scheme_from_name(str(scheme).encode())
        if opt.scheme < 0:
            raise ValueError("scheme must be one of cuckoo, linear, quadratic, double, "
                             "robin-hood, robin-hood-random, not %r" % (scheme,))
        self._init_handle(_lib.context_for(context, backend, threads, seed))
        k, v = _pairs(self, keys, values)
        with self._ctx.lock:
            _lib.check(lib.ghm_map_create(self._ctx.ptr, ctypes.byref(opt),
                                          ctypes.byref(self._ptr)), "cannot create the map")
        self._build(k, v)

    def find(self, keys):
        return self._query("find", keys, np.uint32)

    def __getitem__(self, key):
        """The value of one key; KeyError when absent (or when the value is NOT_FOUND)."""
        v = int(self.find(np.array([key]))[0])
        if v == _lib.NOT_FOUND:
            raise KeyError(key)
        return v


class Set(_Table):
    """Keys only, duplicates removed.

        s = gm.Set(keys)
        s.contains(queries)          # bool array
    """

    _kind = "set"
    _free = "ghm_set_free"

    def __init__(self, keys, load_factor=0.0, backend="auto", threads=0, seed=1, context=None):
        self._create(context, backend, threads, seed, load_factor)
        self._build(_arg(self, keys, "keys"))

    def __len__(self):
        return lib.ghm_set_size(self._handle())

    def contains(self, keys):
        # The library writes bytes 0 and 1: exactly NumPy's and CuPy's bool.
        return self._query("contains", keys, np.bool_)

    def __contains__(self, key):
        return bool(self.contains(np.array([key]))[0])

    def keys(self):
        """The distinct keys, ascending (in device memory when the set was built from it)."""
        out, stream = _result(self, self._device_built, (len(self),), np.uint32)
        if out.size:
            self._call("keys", _ptr(out), waits=(stream,))
        return out


class Multimap(_Table):
    """All values of each key, in input order (sort-based, stored contiguously).

        mm = gm.Multimap(keys, values)
        offsets, vals = mm.retrieve(queries)   # vals[offsets[i]:offsets[i+1]] for queries[i]
        mm[key]                                # the values of one key (empty when absent)
    """

    _kind = "multimap"
    _free = "ghm_multimap_free"

    def __init__(self, keys, values, load_factor=0.0, backend="auto", threads=0, seed=1,
                 context=None):
        self._create(context, backend, threads, seed, load_factor)
        self._build(*_pairs(self, keys, values))

    def __len__(self):
        """The number of distinct keys."""
        return lib.ghm_multimap_keys(self._handle())

    def count(self, keys):
        """How many values each key has (0 when absent), in the shape of keys."""
        q = _arg(self, keys, "keys")
        count, stream = _result(self, q.device, q.shape, np.uint32)
        if q.size:
            self._call("find", q.ptr, q.size, None, _ptr(count), waits=(q.stream, stream))
        return count

    def retrieve(self, keys):
        """(offsets, values): the values of keys[i] are values[offsets[i]:offsets[i + 1]]."""
        q = _arg(self, keys, "keys")
        offsets, stream = _result(self, q.device, (q.size + 1,), np.uint32)
        total = ctypes.c_size_t()
        # First the sizes (capacity 0 writes no value), then the values into an exact buffer.
        with self._ctx.lock:
            _device.wait_for(self._ctx, (q.stream, stream))
            ret = lib.ghm_multimap_retrieve(self._handle(), q.ptr, q.size, _ptr(offsets), None,
                                            0, ctypes.byref(total))
        if ret != -9 or total.value == 0:  # GHM_ERR_TOO_LARGE asks for a buffer
            _lib.check(ret, "multimap retrieve")
        values, stream = _result(self, q.device, (total.value,), np.uint32)
        if total.value:
            with self._ctx.lock:
                _device.wait_for(self._ctx, (stream,))
                _lib.check(lib.ghm_multimap_retrieve(
                    self._handle(), q.ptr, q.size, _ptr(offsets), _ptr(values), total.value,
                    ctypes.byref(total)), "multimap retrieve")
        return offsets, values

    def __getitem__(self, key):
        offsets, values = self.retrieve(np.array([key]))
        return values


class Index(_Table):
    """The two-way index between the K distinct keys and dense ids 0..K-1 (ids in ascending
    key order, the same on both backends).

        ix = gm.Index(keys)
        ids = ix.ids(keys)           # NOT_FOUND for keys not in it
        back = ix.keys(ids)          # id -> key
    """

    _kind = "index"
    _free = "ghm_index_free"

    def __init__(self, keys, load_factor=0.0, backend="auto", threads=0, seed=1, context=None):
        self._create(context, backend, threads, seed, load_factor)
        self._build(_arg(self, keys, "keys"))

    def __len__(self):
        return lib.ghm_index_size(self._handle())

    def ids(self, keys):
        return self._query("ids", keys, np.uint32)

    def keys(self, ids=None):
        """The keys of ids (all K keys, ascending, when ids is None: in device memory when the
        index was built from it); ValueError-like GeohashError for an id >= K."""
        if ids is None:
            ids = (_device.arange(self._ctx, len(self)) if self._device_built
                   else np.arange(len(self), dtype=np.uint32))
        return self._query("keys", ids, np.uint32, what="ids")
