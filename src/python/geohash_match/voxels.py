"""Voxel Boolean intersection of two point clouds, as `geohash-match voxel` computes it.

Clouds are (N, 3) float arrays of points (with optional (N, 3) normals; without them normals are
estimated per voxel) or paths of PLY / XYZ files. Both are voxelized on one grid, and every
occupied voxel of each is labelled outside, inside or on (intersection) the other cloud's
surface, or unknown.
"""

import ctypes
import os
import warnings
from dataclasses import dataclass

import numpy as np

from . import _lib
from ._lib import lib

LABELS = ("outside", "inside", "intersection", "unknown")  # label values 0, 1, 2, 3
NORMALS_VERDICTS = ("consistent", "inward", "mixed", "unchecked")  # GhmVoxelNormalsVerdict


class NormalsWarning(UserWarning):
    """A cloud's normals point inward or either way: the other cloud's labels follow them."""


@dataclass(frozen=True)
class VoxelResult:
    """One voxel per row, A's then B's, each cloud's in ascending key order: centres (V, 3)
    float64, cloud (V,) uint8 (0 = A, 1 = B), labels (V,) uint8 (0 outside, 1 inside,
    2 intersection, 3 unknown: LABELS[i] names them), points (V,) uint32 points per voxel.
    counts["A"] and counts["B"]: points, voxels, each label's voxel count, "normals" ("file" or
    "estimated") and, for normals given, "normals_check": "consistent", "inward", "mixed"
    (pointing either way) or "unchecked" (too few voxels to tell); inward or mixed normals make
    the other cloud's labels wrong, and a NormalsWarning says so. The grid: origin (corner of
    voxel (0, 0, 0)), voxel_size, dims."""

    centres: np.ndarray
    cloud: np.ndarray
    labels: np.ndarray
    points: np.ndarray
    counts: dict
    origin: tuple
    voxel_size: float
    dims: tuple


class _Cloud:
    """A GhmPointCloud made from arrays or read from a file; freed when the with-block ends."""

    def __init__(self, points, normals, name):
        self.ptr = ctypes.POINTER(_lib.PointCloud)()
        if isinstance(points, (str, bytes, os.PathLike)):
            if normals is not None:
                raise ValueError("normals_%s goes with an array of points, not a file" % name)
            why = _lib.why_buffer()
            _lib.check(lib.ghm_pointcloud_load(_lib.fspath(points), ctypes.byref(self.ptr), why,
                                               len(why)), os.fsdecode(points), why)
            return
        xyz = self._array(points, "points_%s" % name)
        nrm = None if normals is None else self._array(normals, "normals_%s" % name)
        if nrm is not None and nrm.shape != xyz.shape:
            raise ValueError("normals_%s has shape %s, points_%s %s"
                             % (name, nrm.shape, name, xyz.shape))
        _lib.check(lib.ghm_pointcloud_create(xyz.shape[0], int(nrm is not None), 0,
                                             ctypes.byref(self.ptr)), "points_%s" % name)
        pc = self.ptr.contents
        ctypes.memmove(pc.xyz, xyz.ctypes.data, xyz.nbytes)
        if nrm is not None:
            ctypes.memmove(pc.normals, nrm.ctypes.data, nrm.nbytes)

    @staticmethod
    def _array(a, what):
        a = np.asarray(a)
        if a.ndim != 2 or a.shape[1] != 3 or a.dtype.kind not in "fiu":
            raise ValueError("%s must be an (N, 3) array of numbers, not %s %s"
                             % (what, a.shape, a.dtype))
        a = np.ascontiguousarray(a, dtype=np.float32)
        if not np.all(np.isfinite(a)):
            raise ValueError("%s holds a value that is not finite" % what)
        return a

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.ghm_pointcloud_free(ctypes.byref(self.ptr))


def _normals_check(side, grid, name):
    """The verdict on a side's file normals (ghm_voxel_normals_check); warns on a fault."""
    check = _lib.VoxelNormalsCheck()
    _lib.check(lib.ghm_voxel_normals_check(ctypes.byref(grid), ctypes.byref(side),
                                           ctypes.byref(check)), "normals check")
    verdict = NORMALS_VERDICTS[check.verdict]
    other = "B" if name == "A" else "A"
    if verdict == "inward":
        warnings.warn("%s's normals point inward (toward the middle at %d of the 26 voxels "
                      "farthest out): %s's labels take %s's outside for its inside"
                      % (name, check.extremes_in, other, name), NormalsWarning, stacklevel=3)
    elif verdict == "mixed":
        warnings.warn("%s's normals point either way (%.0f %% of neighbouring voxels' normals "
                      "opposed): %s's labels are unreliable; orient them, or pass no normals "
                      "to have them estimated" % (name, 100 * check.disagree, other),
                      NormalsWarning, stacklevel=3)
    return verdict


def _side(side, grid, name):
    """One cloud's voxels: centres, labels, points per voxel, and its counts."""
    k = side.voxels
    keys = np.ctypeslib.as_array(side.keys, (k,)).astype(np.int64) if k else np.zeros(0, np.int64)
    nx, ny, _ = grid.dims
    idx = np.stack([keys % nx, keys // nx % ny, keys // (nx * ny)], axis=1)
    centres = np.asarray(grid.origin[:]) + (idx + 0.5) * grid.voxel_size
    labels = np.ctypeslib.as_array(side.labels, (k,)).copy() if k else np.zeros(0, np.uint8)
    points = np.ctypeslib.as_array(side.counts, (k,)).copy() if k else np.zeros(0, np.uint32)
    counts = {"points": int(side.points), "voxels": int(k),
              "normals": "estimated" if side.normals_estimated else "file"}
    counts.update({label: int(side.label_count[i]) for i, label in enumerate(LABELS)})
    if not side.normals_estimated:
        counts["normals_check"] = _normals_check(side, grid, name)
    return centres, labels, points, counts


def voxel_intersect(points_a, points_b, normals_a=None, normals_b=None, grid=128,
                    voxel_size=None, backend="auto", threads=0, seed=1, context=None):
    """Voxelizes clouds A and B on one grid (grid cells along the longest side of their joint
    bounding box, or cubes of voxel_size) and labels every occupied voxel of each against the
    other's surface: a VoxelResult. Raises GeohashError with the library's message (a grid
    too fine, a file that cannot be read)."""
    ctx = _lib.context_for(context, backend, threads, seed)
    opt = lib.ghm_voxel_defaults()
    opt.grid = int(grid)
    if voxel_size is not None:
        opt.voxel_size = float(voxel_size)
    g = _lib.VoxelGrid()
    res = ctypes.POINTER(_lib.VoxelResult)()
    why = _lib.why_buffer()
    with _Cloud(points_a, normals_a, "a") as a, _Cloud(points_b, normals_b, "b") as b, ctx.lock:
        _lib.check(lib.ghm_voxel_grid_fit(a.ptr, b.ptr, None, 0, ctypes.byref(opt),
                                          ctypes.byref(g), why, len(why)), "voxel grid", why)
        _lib.check(lib.ghm_voxel_intersect(ctx.ptr, a.ptr, b.ptr, None, ctypes.byref(g),
                                           ctypes.byref(opt), ctypes.byref(res)),
                   "voxel intersection")
    try:
        r = res.contents
        sides = [_side(r.side[i], r.grid, "AB"[i]) for i in range(2)]
    finally:
        lib.ghm_voxel_result_free(ctypes.byref(res))
    return VoxelResult(
        centres=np.concatenate([s[0] for s in sides]).reshape(-1, 3),
        cloud=np.concatenate([np.full(len(s[1]), i, np.uint8) for i, s in enumerate(sides)]),
        labels=np.concatenate([s[1] for s in sides]),
        points=np.concatenate([s[2] for s in sides]),
        counts={"A": sides[0][3], "B": sides[1][3]},
        origin=tuple(g.origin), voxel_size=g.voxel_size, dims=tuple(g.dims))
