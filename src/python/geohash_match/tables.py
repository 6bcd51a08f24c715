"""The hash tables on NumPy arrays: Map, Set, Multimap, Index.

Keys and values are 32-bit unsigned integers; any integer array whose values fit is accepted
(others raise ValueError rather than wrap around), and results have the shape of the keys
asked for. Every table is built in one call from arrays, on the backend of its context, and
gives the same answers on both backends.
"""

import ctypes

import numpy as np

from . import _lib
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


def _pairs(keys, values):
    k = _u32(keys, "keys").ravel()
    v = _u32(values, "values").ravel()
    if k.size != v.size:
        raise ValueError("keys and values differ in length (%d and %d)" % (k.size, v.size))
    return k, v


def _load_factor(load_factor):
    lf = float(load_factor)
    if not (lf == 0.0 or 0.0 < lf <= 0.99):
        raise ValueError("load_factor must be in (0, 0.99], or 0 for the default, not %r" % lf)
    return lf


class _Table(_lib.Handle):
    """What the four tables share: the context, creation with a load factor, a locked call."""

    _kind = None

    def _create(self, context, backend, threads, seed, load_factor):
        self._init_handle(_lib.context_for(context, backend, threads, seed))
        with self._ctx.lock:
            _lib.check(getattr(lib, "ghm_%s_create" % self._kind)(
                self._ctx.ptr, ctypes.c_double(_load_factor(load_factor)),
                ctypes.byref(self._ptr)), "cannot create the %s" % self._kind)

    def _call(self, name, *args):
        with self._ctx.lock:
            return _lib.check(getattr(lib, "ghm_%s_%s" % (self._kind, name))(self._handle(),
                                                                             *args),
                              "%s %s" % (self._kind, name))


class Map(_lib.Handle):
    """One value per key. Duplicate keys keep their smallest value. find() gives NOT_FOUND
    (0xFFFFFFFF) for an absent key; NOT_FOUND is also a legal value, so use a Set to tell the
    two apart when it matters. scheme picks the table family (ghm_map.h): "cuckoo" (default),
    "linear", "quadratic", "double", "robin-hood" (coherent), "robin-hood-random"; every
    scheme gives the same answers.

        m = gm.Map(keys, values)
        m = gm.Map(keys, values, scheme="robin-hood", load_factor=0.99)
        found = m.find(queries)      # uint32, NOT_FOUND where absent
    """

    _free = "ghm_map_free"

    def __init__(self, keys, values, load_factor=0.0, backend="auto", threads=0, seed=1,
                 context=None, scheme="cuckoo"):
        k, v = _pairs(keys, values)
        opt = lib.ghm_map_defaults()
        opt.load_factor = _load_factor(load_factor)
        opt.scheme = lib.ghm_map_scheme_from_name(str(scheme).encode())
        if opt.scheme < 0:
            raise ValueError("scheme must be one of cuckoo, linear, quadratic, double, "
                             "robin-hood, robin-hood-random, not %r" % (scheme,))
        self._init_handle(_lib.context_for(context, backend, threads, seed))
        with self._ctx.lock:
            _lib.check(lib.ghm_map_create(self._ctx.ptr, ctypes.byref(opt),
                                          ctypes.byref(self._ptr)), "cannot create the map")
            _lib.check(lib.ghm_map_build(self._ptr, k.ctypes.data, v.ctypes.data, k.size),
                       "cannot build the map")

    def find(self, keys):
        q = _u32(keys, "keys")
        out = np.empty(q.shape, dtype=np.uint32)
        with self._ctx.lock:
            _lib.check(lib.ghm_map_find(self._handle(), q.ctypes.data, q.size, out.ctypes.data),
                       "map find")
        return out

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
        k = _u32(keys, "keys").ravel()
        self._create(context, backend, threads, seed, load_factor)
        self._call("build", k.ctypes.data, k.size)

    def __len__(self):
        return lib.ghm_set_size(self._handle())

    def contains(self, keys):
        q = _u32(keys, "keys")
        out = np.empty(q.shape, dtype=np.uint8)
        self._call("contains", q.ctypes.data, q.size, out.ctypes.data)
        return out.astype(bool)

    def __contains__(self, key):
        return bool(self.contains(np.array([key]))[0])

    def keys(self):
        """The distinct keys, ascending."""
        out = np.empty(len(self), dtype=np.uint32)
        self._call("keys", out.ctypes.data)
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
        k, v = _pairs(keys, values)
        self._create(context, backend, threads, seed, load_factor)
        self._call("build", k.ctypes.data, v.ctypes.data, k.size)

    def __len__(self):
        """The number of distinct keys."""
        return lib.ghm_multimap_keys(self._handle())

    def count(self, keys):
        """How many values each key has (0 when absent), in the shape of keys."""
        q = _u32(keys, "keys")
        count = np.empty(q.shape, dtype=np.uint32)
        self._call("find", q.ctypes.data, q.size, None, count.ctypes.data)
        return count

    def retrieve(self, keys):
        """(offsets, values): the values of keys[i] are values[offsets[i]:offsets[i + 1]]."""
        q = _u32(keys, "keys").ravel()
        offsets = np.empty(q.size + 1, dtype=np.uint32)
        total = ctypes.c_size_t()
        # First the sizes (capacity 0 writes no value), then the values into an exact buffer.
        with self._ctx.lock:
            ret = lib.ghm_multimap_retrieve(self._handle(), q.ctypes.data, q.size,
                                            offsets.ctypes.data, None, 0, ctypes.byref(total))
            if ret != -9 or total.value == 0:  # GHM_ERR_TOO_LARGE asks for a buffer
                _lib.check(ret, "multimap retrieve")
            values = np.empty(total.value, dtype=np.uint32)
            if total.value:
                _lib.check(lib.ghm_multimap_retrieve(
                    self._ptr, q.ctypes.data, q.size, offsets.ctypes.data, values.ctypes.data,
                    values.size, ctypes.byref(total)), "multimap retrieve")
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
        k = _u32(keys, "keys").ravel()
        self._create(context, backend, threads, seed, load_factor)
        self._call("build", k.ctypes.data, k.size)

    def __len__(self):
        return lib.ghm_index_size(self._handle())

    def ids(self, keys):
        q = _u32(keys, "keys")
        out = np.empty(q.shape, dtype=np.uint32)
        self._call("ids", q.ctypes.data, q.size, out.ctypes.data)
        return out

    def keys(self, ids=None):
        """The keys of ids (all K keys, ascending, when ids is None); ValueError-like
        GeohashError for an id >= K."""
        q = np.arange(len(self), dtype=np.uint32) if ids is None else _u32(ids, "ids")
        out = np.empty(q.shape, dtype=np.uint32)
        self._call("keys", q.ctypes.data, q.size, out.ctypes.data)
        return out
