"""Image matching: where does a query picture sit inside a reference picture?

Images are file paths (PNG or JPEG, recognised by content) or NumPy uint8 arrays: (H, W) grey,
or (H, W, C) with C = 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA. Colour becomes grey exactly as the
library's PNG loader makes it, so an RGB array of a PNG file matches as the file does.
"""

import ctypes
import os
from dataclasses import dataclass
from typing import Optional

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
            # guessing a scale (floats in [0, 1] or [0, 255], 16-bit data) would hide a mistake
            raise TypeError("image arrays must be uint8 (0-255), not %s: convert first, e.g. "
                            "(a * 255).round().astype(np.uint8) for floats in [0, 1], "
                            "(a >> 8).astype(np.uint8) for 16-bit" % a.dtype)
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

    Matcher(reference, backend="auto", threads=0, seed=1, context=None, one_query=False):
    reference is a path or an array. Matcher.load(path, ...) rebuilds one from a file that
    save(path) wrote (or that `geohash-match --save-ref` wrote) without analysing an image again.
    The same seed gives the same answers. one_query=True is for a reference that answers one
    query (match() makes such): on the CPU its signature table is not built, and each query
    computes the reference's signatures again instead of reading the table (the same answers,
    one query sooner, several slower)."""

    _free = "ghm_matcher_free"

    def __init__(self, reference, backend="auto", threads=0, seed=1, context=None,
                 one_query=False):
        self._init_handle(_lib.context_for(context, backend, threads, seed))
        if reference is None:  # Matcher.load fills it in
            return
        params = lib.ghm_match_defaults()
        with _Image(reference) as img, self._ctx.lock:
            create = lib.ghm_matcher_create_for_one_query if one_query else lib.ghm_matcher_create
            ret = create(self._ctx.ptr, img.ptr, ctypes.byref(params), ctypes.byref(self._ptr))
            if ret == -9:  # GHM_ERR_TOO_LARGE
                im = img.ptr.contents
                raise _lib.GeohashError("%s: %dx%d is larger than image matching takes "
                                        "(16 megapixels)" % (img.name, im.width, im.height), ret)
            _lib.check(ret, "%s: cannot build the reference tables" % img.name)

    @classmethod
    def load(cls, path, backend="auto", threads=0, seed=1, context=None, one_query=False):
        """A matcher from a saved reference file (its own parameters and seed); one_query as
        for Matcher()."""
        m = cls(None, backend=backend, threads=threads, seed=seed, context=context)
        why = _lib.why_buffer()
        params = lib.ghm_match_defaults()
        load = lib.ghm_matcher_load_for_one_query if one_query else lib.ghm_matcher_load
        with m._ctx.lock:
            _lib.check(load(m._ctx.ptr, _lib.fspath(path), ctypes.byref(params),
                            ctypes.byref(m._ptr), why, len(why)),
                       os.fsdecode(path), why)
        return m

    def save(self, path):
        """Writes the reference to path (atomically: a complete file or none)."""
        why = _lib.why_buffer()
        with self._ctx.lock:
            _lib.check(lib.ghm_matcher_save(self._handle(), _lib.fspath(path), why, len(why)),
                       os.fsdecode(path), why)

    def clone(self, threads=0, context=None):
        """A copy of this matcher in another context, to match from another thread at the same
        time (a context serves one call at a time): a new context of this one's backend, device
        and seed with `threads` CPU threads (0: all cores), unless `context` is given. The tables
        are copied, not built again (about a millisecond on the CPU); with the same seed the
        answers are this matcher's."""
        src = self._ctx
        if context is None:
            context = _lib.Context(backend=src.backend, threads=threads, seed=src.seed,
                                   device=src.device or 0)
        c = Matcher(None, context=context)
        with _lib.locked(src, c._ctx):
            _lib.check(lib.ghm_matcher_clone(c._ctx.ptr, self._handle(), ctypes.byref(c._ptr)),
                       "cannot clone the matcher")
        return c

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


@dataclass(frozen=True)
class FrameResult:
    """One selected frame of a video: its number (from 0, presentation order), its time in
    seconds from the first frame (nan when unknown), and the MatchResult of the frame as the
    query (None when the decoder rejected the frame: damaged then says why)."""

    frame: int
    pts: float
    result: Optional[MatchResult]
    damaged: Optional[str] = None

    @property
    def found(self):
        return self.result is not None and self.result.found


def _video_frames(path, start, end, step, threads, gpu=-1):
    """Yields (status, frame, why) for the selected frames of the video at path (threads > 0
    bounds the decoder's threads, as --threads does; gpu >= 0 decodes on that CUDA device's
    video engines), frame.image freed after each step; raises GeohashError for a video that
    cannot be read on."""
    name = os.fsdecode(path)
    why = _lib.why_buffer()
    video = ctypes.c_void_p()
    _lib.check(lib.ghm_video_open(_lib.fspath(path), ctypes.byref(video), why, len(why)),
               name, why)
    frame = _lib.VideoFrame()
    try:
        _lib.check(lib.ghm_video_select(video, int(start), -1 if end is None else int(end),
                                        int(step)), "%s: frame selection" % name)
        if threads > 0:
            _lib.check(lib.ghm_video_set_decode_threads(video, int(threads)),
                       "%s: decoder threads" % name)
        if gpu >= 0:
            _lib.check(lib.ghm_video_set_gpu_decoding(video, int(gpu), why, len(why)), name, why)
        while True:
            ret = lib.ghm_video_read(video, ctypes.byref(frame), why, len(why))
            if ret == 1:  # GHM_VIDEO_END
                return
            _lib.check(ret, name, why)
            try:
                yield ret, frame, why.value.decode(errors="replace")
            finally:
                lib.ghm_image_free(ctypes.byref(frame.image))
    finally:
        lib.ghm_video_free(ctypes.byref(video))


def match_video(reference, path, start=0, end=None, step=1, backend="auto", threads=0, seed=1,
                context=None, decode="cpu"):
    """Iterates over the frames of the video at path (any file FFmpeg decodes), each matched
    as the query against reference (a path, an array, or a Matcher to reuse): FrameResult
    objects in frame order. start, end (inclusive; None = the last) and step choose frames by
    number; a start past frame 0 is reached from the key frame before it where the file's
    timestamps number its frames (most MP4, MKV, MPEG-TS), not by decoding from the first frame,
    with the same numbers and pixels. A damaged frame gives a FrameResult with damaged set, and reading goes on; a file
    that ends before the frames it declares raises GeohashError after the frames it has. The
    matrix maps frame pixels into the reference, as on the command line without --swap.
    threads > 0 bounds the decoder's threads too (else 16 frame threads, on any machine).
    decode="gpu" decodes on the video engines (NVDEC) of the matcher's CUDA device, as
    --decode gpu does (one reader here): the same frames for H.264, HEVC, VP9 and AV1; it pays
    where the CPU has few cores. It needs the CUDA backend."""
    if decode not in ("cpu", "gpu"):
        raise ValueError("decode must be 'cpu' or 'gpu', not %r" % (decode,))
    own = not isinstance(reference, Matcher)
    m = Matcher(reference, backend=backend, threads=threads, seed=seed,
                context=context) if own else reference
    try:
        gpu = -1
        if decode == "gpu":
            if m._ctx.device is None:
                raise _lib.GeohashError("decode='gpu' needs the CUDA backend (this matcher "
                                        "uses the CPU)", _lib._ERR_INVALID)
            gpu = m._ctx.device
        for status, frame, why in _video_frames(path, start, end, step, int(threads), gpu):
            if status == 2:  # GHM_VIDEO_DAMAGED
                yield FrameResult(int(frame.index), frame.pts, None, why)
                continue
            res = _lib.MatchResult()
            with m._ctx.lock:
                _lib.check(lib.ghm_matcher_match(m._handle(), frame.image, ctypes.byref(res)),
                           "%s: frame %d: matching failed" % (os.fsdecode(path), frame.index))
            yield FrameResult(int(frame.index), frame.pts, MatchResult._from_c(res))
    finally:
        if own:
            m.close()


def have_ffmpeg():
    """True when the library decodes video files through FFmpeg (else YUV4MPEG2 only)."""
    return bool(lib.ghm_video_have_ffmpeg())


def match(reference, query, backend="auto", threads=0, seed=1, context=None):
    """Finds query inside reference (paths or arrays): a MatchResult. For many queries against
    one reference, a Matcher builds the reference's tables once."""
    with Matcher(reference, backend=backend, threads=threads, seed=seed, context=context,
                 one_query=True) as m:
        return m.match(query)
