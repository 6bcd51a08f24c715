#!/usr/bin/env python3
"""voxel_pair.py - a pair of dense scans of a closed mesh for the voxel truth tests.

Samples --points area-uniform points on the closed mesh (OFF) with interpolated vertex normals
(area-weighted face normals, so outward for an outward mesh), twice with independent draws:

  A.ply   the mesh as it is (stretched first by --stretch SX SY SZ, its axes scaled: a long or
          flat shape from a round one)
  B.ply   the mesh turned by --angle degrees about z, scaled by --scale and moved by --shift
          (times the mesh's longest side), so that the two surfaces cross: part of B lies inside A
  B.off   (with --mesh-out) the mesh moved as B, the truth for A's voxels
  A.off   (with --mesh-a-out) the mesh as A, the truth for B's voxels (the input unless
          stretched)

Binary little-endian PLY, float x y z nx ny nz. Deterministic for a --seed (NumPy's PCG64), so a
test can make the pair when it runs instead of storing megabytes in data/.

  python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 2000000 A.ply B.ply
  geohash-match voxel --grid 1024 -o out.ply A.ply B.ply
  python3 scripts/voxel_truth.py out.ply --mesh data/pointclouds/bunny_mesh.off --method parity

Needs numpy. Exit status 0, or 2 on errors (one line on stderr).
"""
import argparse
import sys

import numpy as np


def read_off(path):
    words = open(path).read().split()
    if not words or words[0] != "OFF":
        raise ValueError(f"{path}: not an OFF file")
    nv, nf = int(words[1]), int(words[2])
    verts = np.array(words[4:4 + 3 * nv], dtype=np.float64).reshape(nv, 3)
    faces = np.array(words[4 + 3 * nv:4 + 3 * nv + 4 * nf], dtype=np.int64).reshape(nf, 4)
    if (faces[:, 0] != 3).any():
        raise ValueError(f"{path}: only triangle meshes are supported")
    return verts, faces[:, 1:]


def vertex_normals(verts, tris):
    a, b, c = (verts[tris[:, k]] for k in range(3))
    face = np.cross(b - a, c - a)  # length = twice the area: area weighting
    vn = np.zeros_like(verts)
    for k in range(3):
        np.add.at(vn, tris[:, k], face)
    return vn / np.maximum(np.linalg.norm(vn, axis=1, keepdims=True), 1e-300)


def sample(verts, tris, vn, n, rng):
    a, b, c = (verts[tris[:, k]] for k in range(3))
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    pick = rng.choice(len(tris), size=n, p=area / area.sum())
    s, r2 = np.sqrt(rng.random(n)), rng.random(n)
    w = np.stack([1 - s, s * (1 - r2), s * r2], axis=1)
    t = tris[pick]
    pts = sum(w[:, k, None] * verts[t[:, k]] for k in range(3))
    nrm = sum(w[:, k, None] * vn[t[:, k]] for k in range(3))
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-300)
    return pts, nrm


def pose(angle_deg, scale, shift):
    t = np.radians(angle_deg)
    rot = np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    return scale * rot, np.asarray(shift, dtype=np.float64)


def write_ply(path, pts, nrm):
    body = np.hstack([pts, nrm]).astype("<f4")
    head = ("ply\nformat binary_little_endian 1.0\ncomment made by scripts/voxel_pair.py\n"
            f"element vertex {len(pts)}\n" +
            "".join(f"property float {p}\n" for p in ("x", "y", "z", "nx", "ny", "nz")) +
            "end_header\n")
    with open(path, "wb") as f:
        f.write(head.encode("ascii"))
        f.write(body.tobytes())


def write_off(path, verts, tris):
    with open(path, "w") as f:
        f.write(f"OFF\n{len(verts)} {len(tris)} 0\n")
        np.savetxt(f, verts, fmt="%.9g")
        np.savetxt(f, np.hstack([np.full((len(tris), 1), 3), tris]), fmt="%d")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mesh", help="closed, outward-oriented triangle mesh (OFF)")
    ap.add_argument("a_out")
    ap.add_argument("b_out")
    ap.add_argument("--points", type=int, default=2_000_000, help="points per cloud")
    ap.add_argument("--angle", type=float, default=35.0, help="B's turn about z, degrees")
    ap.add_argument("--scale", type=float, default=0.8)
    ap.add_argument("--shift", type=float, nargs=3, default=[0.3, 0.15, 0.1],
                    help="B's move, in units of the mesh's longest side")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stretch", type=float, nargs=3, default=[1.0, 1.0, 1.0],
                    help="scale the mesh's x, y and z by these first")
    ap.add_argument("--mesh-out", help="write the mesh moved as B here (OFF)")
    ap.add_argument("--mesh-a-out", help="write the mesh as A here (OFF)")
    args = ap.parse_args()
    try:
        if args.points < 1:
            raise ValueError(f"--points {args.points}: must be positive")
        if not all(k > 0 for k in args.stretch):
            raise ValueError(f"--stretch {args.stretch}: factors must be positive")
        verts, tris = read_off(args.mesh)
        verts = verts * np.asarray(args.stretch)
        vn = vertex_normals(verts, tris)
        rng = np.random.default_rng(args.seed)
        pa, na = sample(verts, tris, vn, args.points, rng)
        pb, nb = sample(verts, tris, vn, args.points, rng)
        m, t = pose(args.angle, args.scale, args.shift)
        t = t * (verts.max(0) - verts.min(0)).max()
        write_ply(args.a_out, pa, na)
        write_ply(args.b_out, pb @ m.T + t, nb @ (m / args.scale).T)
        if args.mesh_out:
            write_off(args.mesh_out, verts @ m.T + t, tris)
        if args.mesh_a_out:
            write_off(args.mesh_a_out, verts, tris)
    except (OSError, ValueError) as e:
        print(f"voxel_pair.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
