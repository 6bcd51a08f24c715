"""geohash_match.voxel_intersect: arrays and files agree, the result is consistent with itself
and with the library's own voxel centres, and bad input raises clear errors."""

import ctypes
import warnings

import numpy as np
import pytest

import geohash_match as gm
from geohash_match import _lib

CPU = dict(backend="cpu")


def read_ply(path):
    """(points, normals) of the sample PLY files (x y z nx ny nz floats, ascii or binary LE)."""
    raw = open(path, "rb").read()
    head, body = raw.split(b"end_header\n", 1)
    n = int(next(l.split()[2] for l in head.decode().splitlines() if l.startswith("element")))
    if b"format ascii" in head:
        a = np.loadtxt(body.decode().splitlines(), dtype=np.float32).reshape(n, 6)
    else:
        a = np.frombuffer(body, dtype="<f4", count=6 * n).reshape(n, 6)
    return a[:, :3], a[:, 3:]


@pytest.fixture
def clouds(data):
    return data("pointclouds", "bunny.ply"), data("pointclouds", "kitten.ply")


def test_arrays_give_what_files_give(clouds):
    (pa, na), (pb, nb) = read_ply(clouds[0]), read_ply(clouds[1])
    files = gm.voxel_intersect(*clouds, grid=64, **CPU)
    arrays = gm.voxel_intersect(pa, pb, normals_a=na, normals_b=nb, grid=64, **CPU)
    for f in ("centres", "cloud", "labels", "points"):
        assert np.array_equal(getattr(files, f), getattr(arrays, f)), f
    assert files.counts == arrays.counts and files.dims == arrays.dims
    assert files.counts["A"]["points"] == 40000 and files.counts["B"]["points"] == 5210
    assert files.counts["A"]["normals"] == "file"


def test_result_consistent(clouds):
    v = gm.voxel_intersect(*clouds, grid=64, **CPU)
    assert v.centres.shape == (v.cloud.size, 3) and v.labels.size == v.points.size == v.cloud.size
    for i, name in enumerate("AB"):
        c = v.counts[name]
        mine = v.cloud == i
        assert c["voxels"] == mine.sum() and c["points"] == v.points[mine].sum()
        per_label = np.bincount(v.labels[mine], minlength=4).tolist()
        assert [c[label] for label in gm.LABELS] == per_label
    assert v.counts["A"]["intersection"] > 0 and v.counts["B"]["inside"] > 0
    # an intersection voxel is occupied by both clouds: the same centres on both sides
    both = [{tuple(x) for x in v.centres[(v.cloud == i) & (v.labels == 2)]} for i in (0, 1)]
    assert both[0] == both[1]
    # centres as the library computes them, inside the grid
    lo = np.array(v.origin)
    hi = lo + np.array(v.dims) * v.voxel_size
    assert np.all(v.centres > lo) and np.all(v.centres < hi)
    g = _lib.VoxelGrid(origin=(ctypes.c_double * 3)(*v.origin), voxel_size=v.voxel_size,
                       dims=(ctypes.c_int * 3)(*v.dims))
    idx = np.floor((v.centres[[0, 100, -1]] - lo) / v.voxel_size).astype(int)
    for (x, y, z), want in zip(idx, v.centres[[0, 100, -1]]):
        out = (ctypes.c_double * 3)()
        _lib.lib.ghm_voxel_centre(ctypes.byref(g), int(x + v.dims[0] * (y + v.dims[1] * z)), out)
        assert np.allclose(list(out), want, atol=1e-9)


def test_estimated_normals_and_threads(clouds):
    (pa, _), (pb, nb) = read_ply(clouds[0]), read_ply(clouds[1])
    one = gm.voxel_intersect(pa, pb, normals_b=nb, grid=48, backend="cpu", threads=1)
    two = gm.voxel_intersect(pa, pb, normals_b=nb, grid=48, backend="cpu", threads=2)
    assert one.counts["A"]["normals"] == "estimated" and one.counts["B"]["normals"] == "file"
    assert np.array_equal(one.labels, two.labels) and one.counts == two.counts


def test_bad_input(clouds, data):
    good = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"points_a must be an \(N, 3\)"):
        gm.voxel_intersect(np.zeros((4, 2)), good, **CPU)
    with pytest.raises(ValueError, match="not finite"):
        gm.voxel_intersect(good, np.array([[0, 0, np.nan]]), **CPU)
    with pytest.raises(ValueError, match="normals_b has shape"):
        gm.voxel_intersect(good, good, normals_b=np.zeros((3, 3)), **CPU)
    with pytest.raises(gm.GeohashError, match=r"nan_coordinates\.ply: line 12: vertex 1: x is nan"):
        gm.voxel_intersect(data("bad", "nan_coordinates.ply"), clouds[1], **CPU)
    with pytest.raises(gm.GeohashError, match="at most 4096 per axis"):
        gm.voxel_intersect(*clouds, voxel_size=1e-9, **CPU)
    with pytest.raises(gm.GeohashError, match=r"grid 0 is out of range \(1 to 4096"):
        gm.voxel_intersect(*clouds, grid=0, **CPU)
    with pytest.raises(gm.GeohashError, match=r"voxel size -1 is not a finite size"):
        gm.voxel_intersect(*clouds, voxel_size=-1, **CPU)


def test_normals_checked(clouds):
    """Normals turned inward (or either way) are reported in the counts and by a
    NormalsWarning: the other cloud's labels follow them. Normals given right give neither."""
    (pa, na), (pb, nb) = read_ply(clouds[0]), read_ply(clouds[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        good = gm.voxel_intersect(pa, pb, normals_a=na, normals_b=nb, grid=64, **CPU)
    assert good.counts["A"]["normals_check"] == good.counts["B"]["normals_check"] == "consistent"
    with pytest.warns(gm.NormalsWarning, match="B's normals point inward"):
        bad = gm.voxel_intersect(pa, pb, normals_a=na, normals_b=-nb, grid=64, **CPU)
    assert bad.counts["B"]["normals_check"] == "inward"
    assert bad.counts["A"]["inside"] > 2 * good.counts["A"]["inside"]
    signs = np.where(np.arange(len(na)) % 2 == 0, 1, -1).astype(np.float32)[:, None]
    with pytest.warns(gm.NormalsWarning, match="A's normals point either way"):
        mixed = gm.voxel_intersect(pa, pb, normals_a=na * signs, normals_b=nb, grid=64, **CPU)
    assert mixed.counts["A"]["normals_check"] == "mixed"
    estimated = gm.voxel_intersect(pa, pb, normals_b=nb, grid=64, **CPU)
    assert "normals_check" not in estimated.counts["A"]
