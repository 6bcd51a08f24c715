#!/usr/bin/env python3
"""voxel_edit_truth.py - ground truth for `geohash-match voxel edit` against a closed mesh.

Reads the sets that `voxel edit -o` wrote (PLY, binary or ascii, one vertex per voxel with x y z =
voxel centre and the grid in a comment) and judges one edit by the cloud whose closed mesh is
--mesh (bunny_mesh.off for bunny.ply):

  subtract  BEFORE AFTER   a voxel of BEFORE is kept in AFTER exactly when it lies outside the mesh
  intersect BEFORE AFTER   a voxel of BEFORE is kept in AFTER exactly when it lies inside the mesh
  add       AFTER          a voxel of the grid (within the mesh's bounding box) is in AFTER exactly
                           when it lies inside the mesh (AFTER = `voxel edit MESH_CLOUD -o AFTER`)

skipping voxels whose centre lies within --skip voxels (1.5) of the mesh surface, where a voxel
straddles the surface and either answer is fair. AFTER must hold no voxel that BEFORE lacks
(subtract, intersect). Inside is ray parity along z and along x (a closed mesh); a voxel whose
two rays disagree (one grazed an edge) is skipped too.

The set before must be on AFTER's grid, which voxel edit fits around every cloud it reads: the
difference and the intersection of one set with one cloud are on one grid, and their union is
the set before (each voxel lies inside the cloud or not; the cut voxels are in both):

  geohash-match voxel edit kitten.ply --subtract bunny.ply -o diff.ply
  geohash-match voxel edit kitten.ply --intersect bunny.ply -o inter.ply
  python3 scripts/voxel_edit_truth.py subtract diff.ply --before diff.ply --before inter.ply \
      --mesh data/pointclouds/bunny_mesh.off

Needs numpy and scipy. Exit status 0 when the agreement reaches --goal (0.99), 1 below it or when
AFTER has voxels BEFORE lacks, 2 on errors.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from voxel_truth import grid_of, read_off, read_ply, surface_samples  # noqa: E402


def read_set(path):
    """(sorted voxel keys, origin, voxel size, dims) of a set written by voxel edit -o."""
    vox, comments = read_ply(path)
    origin, size, dims = grid_of(comments)
    centres = np.stack([vox["x"], vox["y"], vox["z"]], axis=1).astype(np.float64)
    ijk = np.rint((centres - origin) / size - 0.5).astype(np.int64)
    keys = ijk[:, 0] + dims[0] * (ijk[:, 1] + dims[1] * ijk[:, 2])
    return np.unique(keys), origin, size, dims


def crossings(verts, tris, origin, size, dims, axis):
    """Per ray through the voxel centres along `axis`, the sorted coordinates where it crosses
    the mesh: a dict from the ray's (u, v) voxel indices to an array of crossing coordinates."""
    u_ax, v_ax = [a for a in range(3) if a != axis]
    P = verts[tris]  # (T, 3, 3)
    lo = np.floor((P[:, :, [u_ax, v_ax]].min(1) - origin[[u_ax, v_ax]]) / size - 0.5).astype(int)
    hi = np.floor((P[:, :, [u_ax, v_ax]].max(1) - origin[[u_ax, v_ax]]) / size - 0.5).astype(int)
    lo = np.maximum(lo + 1, 0)
    nu, nv = hi[:, 0] - lo[:, 0] + 1, hi[:, 1] - lo[:, 1] + 1
    k = np.where((nu > 0) & (nv > 0), nu * nv, 0)  # rays through each triangle's bounding box
    t_idx = np.repeat(np.arange(len(tris)), k)
    j = np.arange(k.sum()) - np.repeat(np.cumsum(k) - k, k)
    cu = lo[t_idx, 0] + j % nu[t_idx]
    cv = lo[t_idx, 1] + j // nu[t_idx]
    pu = origin[u_ax] + (cu + 0.5) * size
    pv = origin[v_ax] + (cv + 0.5) * size
    a, b, c = P[t_idx, 0], P[t_idx, 1], P[t_idx, 2]
    # barycentric coordinates of (pu, pv) in the triangle's projection
    d = (b[:, v_ax] - c[:, v_ax]) * (a[:, u_ax] - c[:, u_ax]) + \
        (c[:, u_ax] - b[:, u_ax]) * (a[:, v_ax] - c[:, v_ax])
    ok = np.abs(d) > 1e-30
    d = np.where(ok, d, 1.0)
    du, dv = pu - c[:, u_ax], pv - c[:, v_ax]
    l1 = ((b[:, v_ax] - c[:, v_ax]) * du + (c[:, u_ax] - b[:, u_ax]) * dv) / d
    l2 = ((c[:, v_ax] - a[:, v_ax]) * du + (a[:, u_ax] - c[:, u_ax]) * dv) / d
    l3 = 1 - l1 - l2
    hit = ok & (l1 >= 0) & (l2 >= 0) & (l3 >= 0)
    w = l1 * a[:, axis] + l2 * b[:, axis] + l3 * c[:, axis]
    out = {}
    ray = cu[hit] + dims[u_ax] * cv[hit]
    order = np.lexsort((w[hit], ray))
    ray, w = ray[order], w[hit][order]
    starts = np.r_[0, np.nonzero(np.diff(ray))[0] + 1]
    for s, e in zip(starts, np.r_[starts[1:], len(ray)]):
        out[int(ray[s])] = w[s:e]
    return out


def inside(keys, verts, tris, origin, size, dims):
    """Per voxel key: 1 inside, 0 outside, -1 when the rays along z and x disagree."""
    ijk = np.stack([keys % dims[0], (keys // dims[0]) % dims[1], keys // dims[0] // dims[1]], 1)
    centre = origin + (ijk + 0.5) * size
    votes = []
    for axis in (2, 0):
        u_ax, v_ax = [a for a in range(3) if a != axis]
        cross = crossings(verts, tris, origin, size, dims, axis)
        ray = ijk[:, u_ax] + dims[u_ax] * ijk[:, v_ax]
        odd = np.zeros(len(keys), dtype=bool)
        order = np.argsort(ray, kind="stable")
        starts = np.r_[0, np.nonzero(np.diff(ray[order]))[0] + 1]
        for s, e in zip(starts, np.r_[starts[1:], len(order)]):
            w = cross.get(int(ray[order[s]]))
            if w is not None:
                sel = order[s:e]
                odd[sel] = np.searchsorted(w, centre[sel, axis]) % 2 == 1
        votes.append(odd)
    return np.where(votes[0] == votes[1], votes[0].astype(int), -1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("op", choices=["subtract", "intersect", "add"])
    ap.add_argument("after", help="the set after the edit (voxel edit -o)")
    ap.add_argument("--before", action="append", default=[],
                    help="the set before it (subtract, intersect); several: their union")
    ap.add_argument("--mesh", default="data/pointclouds/bunny_mesh.off")
    ap.add_argument("--skip", type=float, default=1.5, help="band around the mesh, in voxels")
    ap.add_argument("--goal", type=float, default=0.99)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if (args.op == "add") != (not args.before):
        ap.error("subtract and intersect need --before, add takes none")
    try:
        sets = [read_set(p) for p in args.before + [args.after]]
        verts, tris = read_off(args.mesh)
    except (OSError, ValueError, KeyError) as e:
        print(f"voxel_edit_truth.py: {e}", file=sys.stderr)
        return 2
    after, origin, size, dims = sets[-1]
    if any(s[3] != dims or s[2] != size or (s[1] != origin).any() for s in sets):
        print("voxel_edit_truth.py: the sets are on different grids", file=sys.stderr)
        return 2
    from scipy.spatial import cKDTree

    if args.op == "add":  # every voxel of the grid within the mesh's bounding box
        lo = np.maximum(np.floor((verts.min(0) - origin) / size).astype(int) - 1, 0)
        hi = np.minimum(np.floor((verts.max(0) - origin) / size).astype(int) + 1,
                        np.array(dims) - 1)
        g = np.mgrid[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1, lo[2]:hi[2] + 1].reshape(3, -1)
        judged_keys = g[0] + dims[0] * (g[1] + dims[1] * g[2])
        extra = 0
    else:
        judged_keys = np.unique(np.concatenate([s[0] for s in sets[:-1]]))
        extra = int((~np.isin(after, judged_keys)).sum())
    ijk = np.stack([judged_keys % dims[0], (judged_keys // dims[0]) % dims[1],
                    judged_keys // dims[0] // dims[1]], 1)
    # only whether a centre is within the band matters: bounded, a query far from the surface
    # ends at once (unbounded, the interior of a 3.4 M-voxel set took most of an hour)
    band = args.skip * size
    dist, _ = cKDTree(surface_samples(verts, tris, size / 4, np.random.default_rng(1))).query(
        origin + (ijk + 0.5) * size, distance_upper_bound=band)
    far = dist >= band
    ins = inside(judged_keys[far], verts, tris, origin, size, dims)
    keys, ins = judged_keys[far][ins >= 0], ins[ins >= 0]
    truth = ins == 1 if args.op in ("intersect", "add") else ins == 0
    got = np.isin(keys, after)
    right = int((got == truth).sum())
    report = {"op": args.op, "judged": int(len(keys)), "right": right,
              "accuracy": right / len(keys) if len(keys) else None,
              "skipped": int(len(judged_keys) - len(keys)),
              "kept_wrongly": int((got & ~truth).sum()), "lost_wrongly": int((~got & truth).sum()),
              "voxels_not_in_before": extra}
    if args.json:
        print(json.dumps(report))
    else:
        acc = report["accuracy"]
        print(f"{args.op}: {report['judged']} voxels judged ({report['skipped']} skipped near the "
              f"mesh), {right} right ({100 * acc:.2f}%); wrongly kept {report['kept_wrongly']}, "
              f"wrongly left out {report['lost_wrongly']}; {extra} voxels not in BEFORE"
              if acc is not None else f"{args.op}: nothing judged")
    good = report["accuracy"] is not None and report["accuracy"] >= args.goal and extra == 0
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
