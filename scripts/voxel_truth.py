#!/usr/bin/env python3
"""voxel_truth.py - ground truth for `geohash-match voxel` labels against a closed mesh.

Reads the tool's -o output (PLY, binary or ascii: one vertex per occupied voxel with x y z =
voxel centre, cloud, label), and for every voxel of one cloud (default: B, cloud 1) computes:

  intersection  the voxel holds points of both clouds (the same key appears for cloud 0 and 1)
  inside        otherwise, when the voxel centre has generalized winding number > 0.5 with
                respect to the closed mesh of the other cloud (the bunny for bunny vs kitten)
  outside       otherwise
  skipped       a non-intersection voxel whose centre lies within --skip voxels (1.5) of the
                mesh surface: there the voxel straddles the surface and either label is fair

and compares with the tool's label (unknown is always wrong). Prints per-label accuracy.
Winding numbers cost a pass over every triangle per voxel (hours for the millions of voxels of
a 1024^3 grid); --method parity counts the crossings of rays along z instead (seconds), and
checks itself against winding numbers on 200 of the voxels.

  geohash-match voxel -o out.ply data/pointclouds/bunny.ply data/pointclouds/kitten.ply
  python3 scripts/voxel_truth.py out.ply --mesh data/pointclouds/bunny_mesh.off

Needs numpy and scipy (pip install numpy scipy). Exit status 0 when the accuracy reaches
--goal (default 0.99), 1 below it, 2 on errors.
"""
import argparse
import json
import sys

import numpy as np

LABELS = ["outside", "inside", "intersection", "unknown"]
PLY_TYPES = {"char": "i1", "uchar": "u1", "short": "i2", "ushort": "u2", "int": "i4",
             "uint": "u4", "float": "f4", "double": "f8", "int8": "i1", "uint8": "u1",
             "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4", "float32": "f4",
             "float64": "f8"}


def read_ply(path):
    """Returns (vertex record array, comment lines) of a PLY with one vertex element."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.find(b"end_header\n")
    if not data.startswith(b"ply\n") or end < 0:
        raise ValueError(f"{path}: not a PLY file")
    header = data[:end].decode("ascii").splitlines()
    body = data[end + len(b"end_header\n"):]
    fmt, count, props, comments = None, 0, [], []
    for line in header[1:]:
        w = line.split()
        if w[0] == "format":
            fmt = w[1]
        elif w[0] == "comment":
            comments.append(line[8:])
        elif w[0] == "element":
            if w[1] != "vertex":
                raise ValueError(f"{path}: unexpected element {w[1]}")
            count = int(w[2])
        elif w[0] == "property":
            props.append((w[2], PLY_TYPES[w[1]]))
    if fmt == "ascii":
        rows = np.loadtxt(body.decode("ascii").splitlines(), ndmin=2)
        out = np.zeros(count, dtype=[(n, t) for n, t in props])
        for i, (n, _) in enumerate(props):
            out[n] = rows[:, i]
        return out, comments
    order = "<" if fmt == "binary_little_endian" else ">"
    dtype = np.dtype([(n, order + t) for n, t in props])
    return np.frombuffer(body, dtype=dtype, count=count), comments


def read_off(path):
    words = open(path).read().split()
    if not words or words[0] != "OFF":
        raise ValueError(f"{path}: not an OFF file")
    nv, nf = int(words[1]), int(words[2])
    pos = 4
    verts = np.array(words[pos:pos + 3 * nv], dtype=np.float64).reshape(nv, 3)
    pos += 3 * nv
    tris = []
    for _ in range(nf):
        k = int(words[pos])
        idx = [int(x) for x in words[pos + 1:pos + 1 + k]]
        pos += 1 + k
        tris.extend([idx[0], idx[i], idx[i + 1]] for i in range(1, k - 1))
    return verts, np.array(tris, dtype=np.int64)


def grid_of(comments):
    for c in comments:
        w = c.split()
        if w and w[0] == "grid":
            return np.array([float(x) for x in w[2:5]]), float(w[6]), [int(x) for x in w[8:11]]
    raise ValueError("no 'grid' comment in the PLY (not written by geohash-match voxel?)")


def surface_samples(verts, tris, spacing, rng):
    """Area-uniform points on the mesh, about one per spacing^2 of area, plus its vertices."""
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    n = int(min(4_000_000, max(10_000, area.sum() / spacing ** 2)))
    pick = rng.choice(len(tris), size=n, p=area / area.sum())
    r1, r2 = rng.random(n), rng.random(n)
    s = np.sqrt(r1)
    pts = (1 - s)[:, None] * a[pick] + (s * (1 - r2))[:, None] * b[pick] + (s * r2)[:, None] * c[pick]
    return np.vstack([pts, verts])


def winding_numbers(points, verts, tris, chunk=24):
    """Generalized winding number (Jacobson et al. 2013) of each point, by solid angles."""
    A, B, C = (verts[tris[:, k]].astype(np.float64) for k in range(3))
    out = np.empty(len(points))
    for i in range(0, len(points), chunk):
        p = points[i:i + chunk, None, :]
        a, b, c = A[None] - p, B[None] - p, C[None] - p
        la, lb, lc = (np.sqrt((v * v).sum(-1)) for v in (a, b, c))
        det = (a * np.cross(b, c)).sum(-1)
        den = la * lb * lc + (a * b).sum(-1) * lc + (b * c).sum(-1) * la + (c * a).sum(-1) * lb
        out[i:i + chunk] = np.arctan2(det, den).sum(-1) / (2 * np.pi)
    return out


def parity_inside(points, verts, tris, origin, size, dims):
    """Inside by ray parity: the crossings of the closed mesh by a ray along +z from below the
    grid through the centre of each voxel column (nudged off the centre by a fraction of a voxel
    so that no ray meets an edge or a vertex exactly), counted below each point. Linear in the
    triangles and the points: the fast truth for fine grids, where winding numbers take hours."""
    nudge = np.array([0.0123456789, 0.0234567891]) * size
    uv = (verts[:, :2] - origin[:2] - nudge) / size - 0.5  # column (i, j) centre at integers
    t = uv[tris]  # F x 3 x 2
    lo = np.ceil(t.min(1)).astype(np.int64)
    hi = np.floor(t.max(1)).astype(np.int64)
    ni, nj = np.maximum(hi[:, 0] - lo[:, 0] + 1, 0), np.maximum(hi[:, 1] - lo[:, 1] + 1, 0)
    zv = (verts[:, 2] - origin[2]) / size
    col_keys, col_z = [], []
    per = ni * nj
    starts = np.concatenate([[0], np.cumsum(per)])
    for f0 in range(0, len(tris), 4096):
        f1 = min(f0 + 4096, len(tris))
        cnt = per[f0:f1]
        f = np.repeat(np.arange(f0, f1), cnt)
        r = np.arange(starts[f1] - starts[f0]) - np.repeat(starts[f0:f1] - starts[f0], cnt)
        i, j = lo[f, 0] + r % ni[f], lo[f, 1] + r // ni[f]
        a, b, c = t[f, 0], t[f, 1], t[f, 2]
        den = (b[:, 1] - c[:, 1]) * (a[:, 0] - c[:, 0]) + (c[:, 0] - b[:, 0]) * (a[:, 1] - c[:, 1])
        l1 = ((b[:, 1] - c[:, 1]) * (i - c[:, 0]) + (c[:, 0] - b[:, 0]) * (j - c[:, 1])) / den
        l2 = ((c[:, 1] - a[:, 1]) * (i - c[:, 0]) + (a[:, 0] - c[:, 0]) * (j - c[:, 1])) / den
        l3 = 1 - l1 - l2
        hit = (den != 0) & (l1 >= 0) & (l2 >= 0) & (l3 >= 0)
        tf = tris[f[hit]]
        z = l1[hit] * zv[tf[:, 0]] + l2[hit] * zv[tf[:, 1]] + l3[hit] * zv[tf[:, 2]]
        col_keys.append(i[hit] + dims[0] * 4 * j[hit])  # columns past the grid stay apart
        col_z.append(z)
    ck, cz = np.concatenate(col_keys), np.concatenate(col_z)
    span = 4.0 * dims[2] + 8  # z in voxels lies in (-span / 2, span / 2)
    cross = np.sort(ck * span + cz)
    pij = np.rint((points[:, :2] - origin[:2]) / size - 0.5).astype(np.int64)
    pk = pij[:, 0] + dims[0] * 4 * pij[:, 1]
    pz = (points[:, 2] - origin[2]) / size
    below = np.searchsorted(cross, pk * span + pz) - np.searchsorted(cross, pk * span - span / 2)
    return below % 2 == 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ply", help="output of geohash-match voxel -o")
    ap.add_argument("--mesh", default="data/pointclouds/bunny_mesh.off",
                    help="closed mesh of the other cloud (OFF)")
    ap.add_argument("--cloud", type=int, default=1, help="cloud whose voxels are judged (0 A, 1 B)")
    ap.add_argument("--skip", type=float, default=1.5, help="skip band around the mesh, in voxels")
    ap.add_argument("--goal", type=float, default=0.99)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--method", choices=("winding", "parity"), default="winding",
                    help="inside test: winding numbers (robust, slow), or ray parity along z "
                    "(closed meshes; fast enough for 1024^3), checked against winding numbers "
                    "on a sample of the voxels")
    ap.add_argument("--bad", help="write the wrongly labelled voxels here (x y z truth label)")
    args = ap.parse_args()
    try:
        vox, comments = read_ply(args.ply)
        origin, size, dims = grid_of(comments)
        verts, tris = read_off(args.mesh)
    except (OSError, ValueError, KeyError) as e:
        print(f"voxel_truth.py: {e}", file=sys.stderr)
        return 2
    from scipy.spatial import cKDTree

    centres = np.stack([vox["x"], vox["y"], vox["z"]], axis=1).astype(np.float64)
    ijk = np.rint((centres - origin) / size - 0.5).astype(np.int64)
    keys = ijk[:, 0] + dims[0] * (ijk[:, 1] + dims[1] * ijk[:, 2])
    mine = vox["cloud"] == args.cloud
    other_keys = set(keys[~mine].tolist())
    c, lab, k = centres[mine], vox["label"][mine].astype(int), keys[mine]

    truth = np.full(len(c), -1)  # -1 skipped
    inter = np.array([x in other_keys for x in k.tolist()], dtype=bool)
    truth[inter] = 2
    samples = surface_samples(verts, tris, size / 10, np.random.default_rng(1))
    # the bound keeps far voxels cheap: a k-d tree search from far away visits most of its cells
    dist, _ = cKDTree(samples).query(c, distance_upper_bound=args.skip * size)
    judge = ~inter & (dist >= args.skip * size)
    if args.method == "winding":
        truth[judge] = np.where(winding_numbers(c[judge], verts, tris) > 0.5, 1, 0)
    else:
        inside = parity_inside(c[judge], verts, tris, origin, size, dims)
        pick = np.random.default_rng(2).permutation(int(judge.sum()))[:200]
        check = winding_numbers(c[judge][pick], verts, tris) > 0.5
        if (check != inside[pick]).any():
            print(f"voxel_truth.py: ray parity disagrees with winding numbers on "
                  f"{int((check != inside[pick]).sum())} of {len(pick)} voxels", file=sys.stderr)
            return 2
        truth[judge] = np.where(inside, 1, 0)

    report = {"voxels": int(len(c)), "skipped": int((truth < 0).sum()), "per_label": {}}
    right = total = 0
    for t in (0, 1, 2):
        sel = truth == t
        n, ok = int(sel.sum()), int((lab[sel] == t).sum())
        given = {LABELS[g]: int((lab[sel] == g).sum()) for g in range(4) if (lab[sel] == g).any()}
        report["per_label"][LABELS[t]] = {"voxels": n, "right": ok,
                                         "accuracy": ok / n if n else None, "labelled_as": given}
        right += ok
        total += n
    report["judged"] = total
    if args.bad:
        wrong = (truth >= 0) & (lab != truth)
        np.savetxt(args.bad, np.hstack([c[wrong], truth[wrong, None], lab[wrong, None]]),
                   fmt="%.6f %.6f %.6f %d %d")
    report["accuracy"] = right / total if total else None
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{args.ply}: cloud {args.cloud}: {len(c)} voxels, {report['skipped']} skipped "
              f"(within {args.skip} voxels of the mesh), {total} judged")
        for name, r in report["per_label"].items():
            acc = "n/a" if r["accuracy"] is None else f"{100 * r['accuracy']:.2f}%"
            print(f"  truth {name:12s} {r['voxels']:6d} voxels, {r['right']:6d} right ({acc}); "
                  f"labelled as {r['labelled_as']}")
        acc = report["accuracy"]
        print(f"  overall {100 * acc:.2f}% right" if acc is not None else "  nothing judged")
    return 0 if report["accuracy"] is not None and report["accuracy"] >= args.goal else 1


if __name__ == "__main__":
    sys.exit(main())
