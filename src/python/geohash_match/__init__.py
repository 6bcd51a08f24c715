"""geohash_match: geometric-hashing image matching and parallel hash tables, on NumPy arrays.

    import geohash_match as gm
    r = gm.match("scene.png", "logo.png")          # paths or NumPy uint8 arrays
    if r.found:
        print(r.scale, r.rotation_deg, r.tx, r.ty, r.matrix)

    m = gm.Matcher("scene.png", backend="cpu")     # the reference's tables, built once
    results = [m.match(q) for q in queries]
    m.save("scene.ghm"); m2 = gm.Matcher.load("scene.ghm")

    for f in gm.match_video("scene.png", "clip.mp4"):   # one FrameResult per frame
        print(f.frame, f.pts, f.found and f.result.matrix)

    s = gm.Set(keys); s.contains(queries)           # Map, Set, Multimap, Index on uint32 arrays

    v = gm.voxel_intersect(points_a, points_b, grid=64)   # (N, 3) arrays or PLY/XYZ paths
    v.centres, v.cloud, v.labels, v.counts["B"]["inside"]

backend= ("auto", "cpu", "cuda"), threads= (0 = all cores) and seed= are those of the command
line; context=gm.Context(...) shares one context between objects. Errors raise GeohashError
with the library's message. The library runs with the GIL released.
"""

from ._lib import NOT_FOUND, Context, GeohashError, lib as _cdll
from .matching import (FrameResult, Matcher, MatchResult, have_ffmpeg, load_image, match,
                       match_video)
from .tables import Index, Map, Multimap, Set
from .voxels import LABELS, NormalsWarning, VoxelResult, voxel_intersect

__version__ = _cdll.ghm_version().decode()


def cuda_device_count():
    """The CUDA devices a Context(backend="cuda", device=...) may name (0 without CUDA)."""
    return _cdll.ghm_cuda_device_count()


__all__ = ["LABELS", "NOT_FOUND", "Context", "FrameResult", "GeohashError", "Index", "Map",
           "MatchResult", "Matcher", "Multimap", "NormalsWarning", "Set", "VoxelResult",
           "cuda_device_count", "have_ffmpeg", "load_image", "match", "match_video", "voxel_intersect", "__version__"]
