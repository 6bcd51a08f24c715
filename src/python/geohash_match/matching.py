"""Image matching: where does a query picture sit inside a reference picture?

Images are file paths (PNG or JPEG, recognised by content) or NumPy uint8 arrays: (H, W) grey,
or (H, W, C) with C = 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA. Colour becomes grey exactly as the
library's PNG loader makes it, so an RGB array of a PNG file matches as the file does.
"""

import ctypes
import os
from dataclasses import dataclass

import numpy as np

from . import _lib
from ._lib import lib


@dataclass(frozen=True)
class MatchResult:
    """The best similarity transform found. matrix (2x3) maps a query pixel (x right, y down,
    origin at the centre of the top-left pixel) to its position in the reference:
    [xr, yr] = matrix[:, :2] @ [xq, yq] + matrix[:, 2]. When found is False the transform is
    the best candidate's, and confidence says how close it came to a match."""

    found: bool
    matrix: np.ndarray
    scale: float
    rotation_deg: float
    tx: float
    ty: float
    confidence: float
    votes: int
    inliers: int
    forward_share: float
    backward_share: float

    @classmethod
    def _from_c(cls, r):
        m = np.array([[r.matrix[i][j] for j in range(3)] for i in range(2)])
        m.setflags(write=False)
        return cls(found=bool(r.found), matrix=m, scale=r.scale, rotation_deg=r.rotation_deg,
                   tx=r.tx, ty=r.ty, confidence=r.confidence, votes=int(r.votes),
                   inliers=int(r.inliers), forward_share=r.forward_share,
                   backward_share=r.backward_share)

    def __bool__(self):
        return self.found


class _Image:
    """A GhmImage made from a path or an array; freed when the with-block ends."""

    def __init__(self, image):
        self.ptr = ctypes.POINTER(_lib.Image)()
        if isinstance(image, np.ndarray):
            self.name = "array"
            self._from_array(image)
        elif isinstance(image, (str, bytes, os.PathLike)):
            self.name = os.fsdecode(image)
            why = _lib.why_buffer()
            _lib.check(lib.ghm_image_load(_lib.fspath(image), ctypes.byref(self.ptr), why,
                                          len(why)), self.name, why)
        else:
            raise TypeError("an image is a path or a NumPy uint8 array, not %s"
                            % type(image).__name__)

    def _from_array(self, a):
        if a.dtype != np.uint8:
            raise TypeError("image arrays must be uint8, not %s" % a.dtype)
        if a.ndim == 2:
            a = a[:, :, None]
        if a.ndim != 3 or not 1 <= a.shape[2] <= 4:
            raise ValueError("an image array is (H, W) or (H, W, C) with C in 1..4, not %s"
                             % (a.shape,))
        a = np.ascontiguousarray(a)
        h, w, c = a.shape
        _lib.check(lib.ghm_image_from_pixels(a.ctypes.data, w, h, c, w * c,
                                             ctypes.byref(self.ptr)),
                   "image array of shape %s" % (a.shape,))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.ghm_image_free(ctypes.byref(self.ptr))


def load_image(path):
    """The grey image the library makes of a PNG or JPEG file, as a (H, W) uint8 array."""
    with _Image(path) as img:
        im = img.ptr.contents
        rows = np.ctypeslib.as_array(im.pixels, shape=(im.height, im.stride))
        return rows[:, :im.width].copy()


class Matcher(_lib.Handle):
    """The reference side (edges, bases, signature tables) built once, for many queries.

    Matcher(reference, backend="auto", threads=0, seed=1, context=None): reference is a path or
    an array. Matcher.load(path, ...) rebuilds one from a file that save(path) wrote (or that
    `geohash-match --save-ref` wrote) without analysing an image again. The same seed gives the
    same answers."""

    _free = "ghm_matcher_free"

    def __init__(self, reference, backend="auto", threads=0, seed=1, context=None):
        self._init_handle(_lib.context_for(context, backend, threads, seed))
        if reference is None:  # Matcher.load fills it in
            return
        params = lib.ghm_match_defaults()
        with _Image(reference) as img, self._ctx.lock:
            ret = lib.ghm_matcher_create(self._ctx.ptr, img.ptr, ctypes.byref(params),
                                         ctypes.byref(self._ptr))
            if ret == -9:  # GHM_ERR_TOO_LARGE
                im = img.ptr.contents
                raise _lib.GeohashError("%s: %dx%d is larger than image matching takes "
                                        "(16 megapixels)" % (img.name, im.width, im.height), ret)
            _lib.check(ret, "%s: cannot build the reference tables" % img.name)

    @classmethod
    def load(cls, path, backend="auto", threads=0, seed=1, context=None):
        """A matcher from a saved reference file (its own parameters and seed)."""
        m = cls(None, backend=backend, threads=threads, seed=seed, context=context)
        why = _lib.why_buffer()
        params = lib.ghm_match_defaults()
        with m._ctx.lock:
            _lib.check(lib.ghm_matcher_load(m._ctx.ptr, _lib.fspath(path), ctypes.byref(params),
                                            ctypes.byref(m._ptr), why, len(why)),
                       os.fsdecode(path), why)
        return m

    def save(self, path):
        """Writes the reference to path (atomically: a complete file or none)."""
        why = _lib.why_buffer()
        with self._ctx.lock:
            _lib.check(lib.ghm_matcher_save(self._handle(), _lib.fspath(path), why, len(why)),
                       os.fsdecode(path), why)

    @property
    def size(self):
        """(width, height) of the reference."""
        w, h = ctypes.c_int(), ctypes.c_int()
        lib.ghm_matcher_size(self._handle(), ctypes.byref(w), ctypes.byref(h))
        return w.value, h.value

    def match(self, query):
        """Finds query (a path or an array) in the reference: a MatchResult."""
        res = _lib.MatchResult()
        with _Image(query) as img, self._ctx.lock:
            ret = lib.ghm_matcher_match(self._handle(), img.ptr, ctypes.byref(res))
            if ret == -9:
                im = img.ptr.contents
                raise _lib.GeohashError("%s: %dx%d is larger than image matching takes "
                                        "(16 megapixels)" % (img.name, im.width, im.height), ret)
            _lib.check(ret, "%s: matching failed" % img.name)
        return MatchResult._from_c(res)

    def __repr__(self):
        return "Matcher(%dx%d, backend=%r)" % (*self.size, self._ctx.backend)


def match(reference, query, backend="auto", threads=0, seed=1, context=None):
    """Finds query inside reference (paths or arrays): a MatchResult. For many queries against
    one reference, a Matcher builds the reference's tables once."""
    with Matcher(reference, backend=backend, threads=threads, seed=seed, context=context) as m:
        return m.match(query)
