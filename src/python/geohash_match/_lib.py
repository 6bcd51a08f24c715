"""The shared library, its functions as ctypes sees them, errors, and contexts.

The binding is ctypes over libgeohash.so (the library CMake builds, shipped inside this
package), so there is no compiled extension: ctypes releases the GIL around every call, so the
library works while other Python threads run. Only the GHM_API functions of the public headers
are used. Structures that the library returns by value are read into buffers larger than the C
structure, so a field added to one in a later version never writes past our memory; the fields
read here are checked against the command-line program's output by the tests.
"""

import ctypes
import os
import contextlib
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))

NOT_FOUND = 0xFFFFFFFF  # GHM_NOT_FOUND: the value of an absent key

_BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
_ERR_INVALID = -4


class GeohashError(Exception):
    """An error reported by the library: str() is its message, .code the GHM_ERR_* value."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def _load():
    # GEOHASH_LIBRARY points at another build (a developer's); otherwise the one in the package.
    path = os.environ.get("GEOHASH_LIBRARY") or os.path.join(_HERE, "libgeohash.so")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise ImportError("geohash_match: cannot load the library %s: %s" % (path, e)) from None


lib = _load()

_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_u32p = ctypes.POINTER(ctypes.c_uint32)
_size = ctypes.c_size_t
_int = ctypes.c_int
_str = ctypes.c_char_p


class ContextOptions(ctypes.Structure):
    """GhmContextOptions (ghm_context.h), with room to spare (see the module's docstring)."""

    _fields_ = [("backend", _int), ("threads", _int), ("seed", ctypes.c_uint64),
                ("verbose", _int), ("device", _int), ("_spare", ctypes.c_ubyte * 256)]


class MapOptions(ctypes.Structure):
    """GhmMapOptions (ghm_map.h); Python sets load_factor and scheme, the rest keep the
    library's defaults (room is left for fields added later)."""

    _fields_ = [("load_factor", ctypes.c_double), ("layout", ctypes.c_int),
                ("hash_functions", ctypes.c_int), ("max_rebuilds", ctypes.c_int),
                ("scheme", ctypes.c_int), ("_rest", ctypes.c_ubyte * 512)]


class MatchParams(ctypes.Structure):
    """GhmMatchParams (ghm_match.h), opaque: the library's defaults are passed on unchanged."""

    _fields_ = [("_bytes", ctypes.c_ubyte * 2048)]


class MatchResult(ctypes.Structure):
    """GhmMatchResult (ghm_match.h): the fields the binding reports, then room to spare."""

    _fields_ = [("found", _int), ("votes", ctypes.c_uint32), ("confidence", ctypes.c_double),
                ("forward_share", ctypes.c_double), ("backward_share", ctypes.c_double),
                ("scale", ctypes.c_double), ("rotation_deg", ctypes.c_double),
                ("tx", ctypes.c_double), ("ty", ctypes.c_double),
                ("matrix", (ctypes.c_double * 3) * 2), ("inliers", _size),
                ("_spare", ctypes.c_ubyte * 1024)]


class Image(ctypes.Structure):
    """GhmImage (ghm_image.h): a public structure the library allocates."""

    _fields_ = [("width", _int), ("height", _int), ("stride", _int),
                ("pixels", ctypes.POINTER(ctypes.c_uint8))]


class VideoFrame(ctypes.Structure):
    """GhmVideoFrame (ghm_video.h), with room to spare."""

    _fields_ = [("image", ctypes.POINTER(Image)), ("index", ctypes.c_int64),
                ("pts", ctypes.c_double), ("_spare", ctypes.c_ubyte * 64)]


class PointCloud(ctypes.Structure):
    """GhmPointCloud (ghm_pointcloud.h): a public structure the library allocates."""

    _fields_ = [("n", _size), ("xyz", ctypes.POINTER(ctypes.c_float)),
                ("normals", ctypes.POINTER(ctypes.c_float)),
                ("rgb", ctypes.POINTER(ctypes.c_uint8))]


class VoxelOptions(ctypes.Structure):
    """GhmVoxelOptions (ghm_voxel.h): grid and voxel_size are set from Python, the rest kept."""

    _fields_ = [("grid", _int), ("voxel_size", ctypes.c_double),
                ("_rest", ctypes.c_ubyte * 256)]


class VoxelGrid(ctypes.Structure):
    """GhmVoxelGrid (ghm_voxel.h), with room to spare (the library writes it)."""

    _fields_ = [("origin", ctypes.c_double * 3), ("voxel_size", ctypes.c_double),
                ("dims", _int * 3), ("_spare", ctypes.c_ubyte * 64)]


class _VoxelGridExact(ctypes.Structure):
    _fields_ = VoxelGrid._fields_[:3]


class VoxelSide(ctypes.Structure):
    """GhmVoxelSide (ghm_voxel.h), read in a result the library allocated."""

    _fields_ = [("points", _size), ("voxels", _size), ("keys", _u32p),
                ("labels", ctypes.POINTER(ctypes.c_uint8)), ("counts", _u32p),
                ("normals", ctypes.POINTER(ctypes.c_float)), ("normals_estimated", _int),
                ("label_count", _size * 4), ("seeds", _size), ("conflicts", _size),
                ("radius", _int)]


class VoxelNormalsCheck(ctypes.Structure):
    """GhmVoxelNormalsCheck (ghm_voxel.h)."""

    _fields_ = [("verdict", _int), ("pairs", _size), ("disagree", ctypes.c_double),
                ("extremes_out", _int), ("extremes_in", _int)]


class VoxelResult(ctypes.Structure):
    """GhmVoxelResult (ghm_voxel.h), read in a result the library allocated."""

    _fields_ = [("grid", _VoxelGridExact), ("side", VoxelSide * 2), ("rounds", _int)]


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_imgp = ctypes.POINTER(Image)
_PROTOS = [
    ("ghm_version", _str),
    ("ghm_strerror", _str, _int),
    ("ghm_context_defaults", ContextOptions),
    ("ghm_context_create", _int, ctypes.POINTER(ContextOptions), _pp),
    ("ghm_context_free", None, _pp),
    ("ghm_context_backend_name", _str, _p),
    ("ghm_context_threads", _int, _p),
    ("ghm_context_device", _int, _p),
    ("ghm_cuda_device_count", _int),
    ("ghm_cuda_unavailable_reason", _str),
    ("ghm_context_wait_stream", _int, _p, ctypes.c_size_t),
    ("ghm_buffer_alloc", _int, _p, _size, _pp),
    ("ghm_buffer_free", None, _p, _pp),
    ("ghm_buffer_upload", _int, _p, _p, _p, _size),
    ("ghm_buffer_download", _int, _p, _p, _p, _size),
    ("ghm_image_load", _int, _str, ctypes.POINTER(_imgp), _str, _size),
    ("ghm_image_from_pixels", _int, _p, _int, _int, _int, _size, ctypes.POINTER(_imgp)),
    ("ghm_image_free", None, ctypes.POINTER(_imgp)),
    ("ghm_match_defaults", MatchParams),
    ("ghm_matcher_create", _int, _p, _imgp, ctypes.POINTER(MatchParams), _pp),
    ("ghm_matcher_create_for_one_query", _int, _p, _imgp, ctypes.POINTER(MatchParams), _pp),
    ("ghm_matcher_match", _int, _p, _imgp, ctypes.POINTER(MatchResult)),
    ("ghm_matcher_size", None, _p, ctypes.POINTER(_int), ctypes.POINTER(_int)),
    ("ghm_matcher_save", _int, _p, _str, _str, _size),
    ("ghm_matcher_load", _int, _p, _str, ctypes.POINTER(MatchParams), _pp, _str, _size),
    ("ghm_matcher_load_for_one_query", _int, _p, _str, ctypes.POINTER(MatchParams), _pp, _str,
     _size),
    ("ghm_matcher_clone", _int, _p, _p, _pp),
    ("ghm_matcher_free", None, _pp),
    ("ghm_video_open", _int, _str, _pp, _str, _size),
    ("ghm_video_select", _int, _p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64),
    ("ghm_video_set_decode_threads", _int, _p, _int),
    ("ghm_video_set_gpu_decoding", _int, _p, _int, _str, _size),
    ("ghm_video_read", _int, _p, ctypes.POINTER(VideoFrame), _str, _size),
    ("ghm_video_free", None, _pp),
    ("ghm_video_have_ffmpeg", _int),
    ("ghm_pointcloud_create", _int, _size, _int, _int, ctypes.POINTER(ctypes.POINTER(PointCloud))),
    ("ghm_pointcloud_load", _int, _str, ctypes.POINTER(ctypes.POINTER(PointCloud)), _str, _size),
    ("ghm_pointcloud_free", None, ctypes.POINTER(ctypes.POINTER(PointCloud))),
    ("ghm_voxel_defaults", VoxelOptions),
    ("ghm_voxel_grid_fit", _int, ctypes.POINTER(PointCloud), ctypes.POINTER(PointCloud), _p, _int,
     ctypes.POINTER(VoxelOptions), ctypes.POINTER(VoxelGrid), _str, _size),
    ("ghm_voxel_intersect", _int, _p, ctypes.POINTER(PointCloud), ctypes.POINTER(PointCloud), _p,
     ctypes.POINTER(VoxelGrid), ctypes.POINTER(VoxelOptions),
     ctypes.POINTER(ctypes.POINTER(VoxelResult))),
    ("ghm_voxel_centre", None, ctypes.POINTER(VoxelGrid), ctypes.c_uint32, ctypes.c_double * 3),
    ("ghm_voxel_result_free", None, ctypes.POINTER(ctypes.POINTER(VoxelResult))),
    ("ghm_voxel_normals_check", _int, ctypes.POINTER(_VoxelGridExact), ctypes.POINTER(VoxelSide),
     ctypes.POINTER(VoxelNormalsCheck)),
    ("ghm_map_defaults", MapOptions),
    ("ghm_map_create", _int, _p, ctypes.POINTER(MapOptions), _pp),
    ("ghm_map_scheme_from_name", _int, _str),
    ("ghm_map_build", _int, _p, _p, _p, _size),
    ("ghm_map_find", _int, _p, _p, _size, _p),
    ("ghm_map_free", None, _pp),
    ("ghm_set_create", _int, _p, ctypes.c_double, _pp),
    ("ghm_set_build", _int, _p, _p, _size),
    ("ghm_set_size", _size, _p),
    ("ghm_set_contains", _int, _p, _p, _size, _p),
    ("ghm_set_keys", _int, _p, _p),
    ("ghm_set_free", None, _pp),
    ("ghm_multimap_create", _int, _p, ctypes.c_double, _pp),
    ("ghm_multimap_build", _int, _p, _p, _p, _size),
    ("ghm_multimap_find", _int, _p, _p, _size, _p, _p),
    ("ghm_multimap_retrieve", _int, _p, _p, _size, _p, _p, _size, ctypes.POINTER(_size)),
    ("ghm_multimap_keys", _size, _p),
    ("ghm_multimap_free", None, _pp),
    ("ghm_index_create", _int, _p, ctypes.c_double, _pp),
    ("ghm_index_build", _int, _p, _p, _size),
    ("ghm_index_size", _size, _p),
    ("ghm_index_ids", _int, _p, _p, _size, _p),
    ("ghm_index_keys", _int, _p, _p, _size, _p),
    ("ghm_index_free", None, _pp),
]
for _entry in _PROTOS:
    _proto(*_entry)


def strerror(code):
    return lib.ghm_strerror(code).decode()


def check(ret, subject=None, why=None):
    """Raises GeohashError for a negative status: "subject: why" (the library's own words)."""
    if ret >= 0:
        return ret
    message = why.value.decode(errors="replace") if why is not None and why.value else strerror(ret)
    raise GeohashError("%s: %s" % (subject, message) if subject else message, ret)


def why_buffer():
    return ctypes.create_string_buffer(512)


def fspath(path):
    """A path as the bytes the C library opens (os.fsencode: any file name round-trips)."""
    return os.fsencode(os.fspath(path))


class Context:
    """A GhmContext: the backend ("auto", "cpu" or "cuda"), CPU threads (0 = all cores), the
    seed of every random choice and the CUDA device (0 .. cuda_device_count() - 1; the CPU
    ignores it). Tables and matchers keep their context alive. One call at
    a time goes into a context (a lock), since the library's objects serve one thread at a
    time; use one context per thread to work in parallel. close() frees it at once: only when
    no table or matcher made in it is used any more (otherwise leave it to the collector)."""

    def __init__(self, backend="auto", threads=0, seed=1, device=0):
        if backend not in _BACKENDS:
            raise ValueError("backend must be one of auto, cpu, cuda, not %r" % (backend,))
        if int(threads) < 0:
            raise ValueError("threads must be 0 (all cores) or more, not %r" % (threads,))
        if int(device) < 0:
            raise ValueError("device must be 0 or more, not %r" % (device,))
        opt = lib.ghm_context_defaults()
        opt.backend = _BACKENDS[backend]
        opt.threads = int(threads)
        opt.seed = int(seed)
        opt.device = int(device)
        self._ptr = ctypes.c_void_p()
        self.lock = threading.Lock()
        self.seed = int(seed)
        ret = lib.ghm_context_create(ctypes.byref(opt), ctypes.byref(self._ptr))
        if ret == -6 and device and lib.ghm_cuda_device_count() > 0:
            raise GeohashError("backend cuda: no usable CUDA device %d (%d found)"
                               % (device, lib.ghm_cuda_device_count()), ret)
        if ret == -6:  # GHM_ERR_NO_DEVICE: say why, as the command line does
            raise GeohashError("backend cuda: %s" % lib.ghm_cuda_unavailable_reason().decode(),
                               ret)
        check(ret, "cannot start the %s backend" % backend)

    @property
    def ptr(self):
        if not self._ptr:
            raise ValueError("the context was closed")
        return self._ptr

    @property
    def backend(self):
        """The backend in use: "cpu" or "cuda"."""
        return lib.ghm_context_backend_name(self.ptr).decode()

    @property
    def threads(self):
        """The CPU threads actually used."""
        return lib.ghm_context_threads(self.ptr)

    @property
    def device(self):
        """The CUDA device of a CUDA context; None on the CPU."""
        d = lib.ghm_context_device(self.ptr)
        return None if d < 0 else d

    def close(self):
        if getattr(self, "_ptr", None):
            lib.ghm_context_free(ctypes.byref(self._ptr))

    __del__ = close

    def __repr__(self):
        return "Context(backend=%r, threads=%d)" % (self.backend, self.threads)


def context_for(context, backend, threads, seed):
    """The context an object works in: the one given, or a new one for backend/threads/seed."""
    if context is not None:
        if not isinstance(context, Context):
            raise TypeError("context must be a geohash_match.Context")
        return context
    return Context(backend=backend, threads=threads, seed=seed)


@contextlib.contextmanager
def locked(*contexts):
    """The locks of the contexts (each once), taken in one order whatever the caller's, so that
    two threads that lock the same two contexts cannot wait on each other."""
    held = []
    try:
        for c in sorted({id(c): c for c in contexts}.values(), key=id):
            c.lock.acquire()
            held.append(c)
        yield
    finally:
        for c in reversed(held):
            c.lock.release()


class Handle:
    """Owns one library object (a C pointer freed by its ghm_*_free) and the context it lives
    in. Subclasses set _free to the free function's name."""

    _free = None

    def _init_handle(self, ctx):
        self._ctx = ctx
        self._ptr = ctypes.c_void_p()

    @property
    def context(self):
        return self._ctx

    def _handle(self):
        if not self._ptr:
            raise ValueError("%s was closed" % type(self).__name__)
        return self._ptr

    def close(self):
        """Frees the library's memory now rather than when the object is collected."""
        if getattr(self, "_ptr", None):
            getattr(lib, self._free)(ctypes.byref(self._ptr))

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
