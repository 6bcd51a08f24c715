#!/usr/bin/env python3
"""Score geohash-match on a truth file of image pairs (and on a video with known transforms).

    scripts/score_hard.py [--tool build/geohash-match] [--backend cpu] [--opencv auto|on|off]
                          [--video VIDEO_TRUTH.json] [--pairs] [-- EXTRA TOOL OPTIONS]
                          [TRUTH.json ...]

TRUTH.json is in the format of ../shared/data/hard/truth.json or data/pairs/truth.json: a list
"pairs" of {id, reference, query, difficulty, matrix (2x3, QUERY pixel -> REFERENCE), negative}.
Paths are relative to the truth file. A positive pair is correct when the four query corners
(0,0), (w-1,0), (w-1,h-1), (0,h-1) mapped by the tool's matrix are each within 2 % of the
reference diagonal of where the truth matrix puts them; on a negative pair (negative: true) any
match is a false match. Prints one row per class (difficulty), the totals, the false matches and
the median corner error over the corners of the correct pairs, and with --pairs one line per
pair. OpenCV's SIFT and ORB (ratio test, similarity fitted by RANSAC, a match needing 12
inliers) are scored beside it when cv2 can be imported (--opencv off skips them).

--video TRUTH.json (the format of ../shared/data/video/synthetic_textured_truth.json) runs the
tool on the video once and counts the frames placed by the same 2 % criterion.

Exit status 0; 2 when the tool could not be run.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

try:
    import cv2  # optional: only for the comparison columns
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    cv2 = None
    np = None

CLASS_ORDER = ["clutter", "extreme_scale", "heavy_occlusion", "low_quality", "repetitive",
               "photometric", "dev"]


def corners_of(size):
    w, h = size
    return [(0.0, 0.0), (w - 1.0, 0.0), (w - 1.0, h - 1.0), (0.0, h - 1.0)]


def apply(m, p):
    return (m[0][0] * p[0] + m[0][1] * p[1] + m[0][2], m[1][0] * p[0] + m[1][1] * p[1] + m[1][2])


def corner_errors(m_tool, m_truth, qsize):
    """Distances between the tool's and the truth's images of the four query corners."""
    errs = []
    for c in corners_of(qsize):
        a, b = apply(m_tool, c), apply(m_truth, c)
        errs.append(math.hypot(a[0] - b[0], a[1] - b[1]))
    return errs


def image_size(path):
    """Width and height of a PNG or JPEG, read from its header (no dependency)."""
    with open(path, "rb") as f:
        data = f.read(1 << 20)
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        seglen = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + seglen
    raise ValueError(f"{path}: cannot read the image size")


def run_tool(args, extra, ref, query):
    cmd = [args.tool, "--json", "--backend", args.backend] + extra + [ref, query]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.stderr.write(f"error: {' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}\n")
        sys.exit(2)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    m = out["transform"]["matrix"] if out.get("found") else None
    return m, out, wall


# ---------------------------------------------------------------- OpenCV comparison
def read_grey(path):
    img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if img is None:
        raise ValueError(f"{path}: OpenCV cannot read it")
    return img


def opencv_match(kind, ref_path, query_path):
    """Similarity QUERY -> REFERENCE by SIFT or ORB, ratio test and RANSAC; None if no match."""
    ref, qry = read_grey(ref_path), read_grey(query_path)
    if kind == "sift":
        det, norm, ratio = cv2.SIFT_create(), cv2.NORM_L2, 0.75
    else:
        det, norm, ratio = cv2.ORB_create(nfeatures=5000), cv2.NORM_HAMMING, 0.8
    kq, dq = det.detectAndCompute(qry, None)
    kr, dr = det.detectAndCompute(ref, None)
    if dq is None or dr is None or len(kq) < 2 or len(kr) < 2:
        return None
    good = []
    for pair in cv2.BFMatcher(norm).knnMatch(dq, dr, k=2):
        if len(pair) == 2 and pair[0].distance < ratio * pair[1].distance:
            good.append(pair[0])
    if len(good) < 4:
        return None
    src = np.float32([kq[g.queryIdx].pt for g in good])
    dst = np.float32([kr[g.trainIdx].pt for g in good])
    m, inl = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=5.0,
                                         maxIters=5000, confidence=0.999)
    if m is None or inl is None or int(inl.sum()) < 12:
        return None
    return m.tolist()


# ---------------------------------------------------------------- scoring
def score_pairs(args, extra, truth_path, methods):
    base = os.path.dirname(os.path.abspath(truth_path))
    with open(truth_path) as f:
        truth = json.load(f)
    rows = []
    for p in truth["pairs"]:
        ref = os.path.join(base, p["reference"])
        qry = os.path.join(base, p["query"])
        qsize = p.get("query_size") or image_size(qry)
        rsize = p.get("reference_size") or image_size(ref)
        diag = math.hypot(rsize[0], rsize[1])
        neg = bool(p.get("negative"))
        row = {"id": p["id"], "class": "negative" if neg else p.get("difficulty", "pairs"),
               "res": {}}
        for meth in methods:
            t0 = time.monotonic()
            if meth == "tool":
                m, out, _ = run_tool(args, extra, ref, qry)
                info = f"conf {out.get('confidence', 0):.3f} votes {out.get('votes', 0)}"
            else:
                m, info = opencv_match(meth, ref, qry), ""
            wall = time.monotonic() - t0
            if neg:
                ok, errs = m is None, None
            elif m is None:
                ok, errs = False, None
            else:
                errs = corner_errors(m, p["matrix"], qsize)
                ok = max(errs) <= 0.02 * diag
            row["res"][meth] = {"found": m is not None, "ok": ok, "errs": errs, "info": info,
                                "wall": wall}
        rows.append(row)
        if args.pairs:
            r = row["res"]["tool"]
            err = "-" if r["errs"] is None else f"{max(r['errs']):.2f}"
            others = " ".join(f"{k}={'ok' if v['ok'] else '--'}" for k, v in row["res"].items()
                              if k != "tool")
            print(f"  {p['id']:<8} {row['class']:<16} {'ok' if r['ok'] else '--'} "
                  f"found={int(r['found'])} maxerr {err:>8} {r['info']} "
                  f"{r['wall'] * 1000:.0f} ms {others}", flush=True)
    return rows


def print_table(rows, methods, title):
    names = {"tool": "geohash-match", "sift": "SIFT", "orb": "ORB"}
    classes = [c for c in CLASS_ORDER if any(r["class"] == c for r in rows)]
    classes += sorted({r["class"] for r in rows} - set(classes) - {"negative"})
    print(f"\n{title}")
    print("| class | pairs | " + " | ".join(names[m] for m in methods) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in methods) + " |")
    for c in classes:
        sel = [r for r in rows if r["class"] == c]
        print(f"| {c} | {len(sel)} | " +
              " | ".join(str(sum(r["res"][m]["ok"] for r in sel)) for m in methods) + " |")
    pos = [r for r in rows if r["class"] != "negative"]
    neg = [r for r in rows if r["class"] == "negative"]
    print(f"| **all positives** | {len(pos)} | " +
          " | ".join(f"**{sum(r['res'][m]['ok'] for r in pos)}**" for m in methods) + " |")
    if neg:
        print(f"| false matches on negatives | {len(neg)} | " +
              " | ".join(str(sum(r['res'][m]['found'] for r in neg)) for m in methods) + " |")
    med = []
    for m in methods:
        errs = [e for r in pos if r["res"][m]["ok"] for e in r["res"][m]["errs"]]
        med.append(f"{statistics.median(errs):.3f}" if errs else "-")
    print(f"| median corner error (px, correct pairs) | | " + " | ".join(med) + " |")
    walls = sorted(r["res"]["tool"]["wall"] for r in rows)
    print(f"geohash-match wall time per pair (process, includes loading and reference build): "
          f"median {statistics.median(walls) * 1000:.0f} ms, max {walls[-1] * 1000:.0f} ms")


def score_video(args, extra, truth_path):
    base = os.path.dirname(os.path.abspath(truth_path))
    with open(truth_path) as f:
        truth = json.load(f)
    ref = os.path.join(base, truth["reference"])
    video = os.path.join(base, truth["video"])
    diag = math.hypot(*truth["reference_size"])
    fsize = truth["frame_size"]
    cmd = [args.tool, "--json", "--backend", args.backend] + extra + [ref, video]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.stderr.write(f"error: {' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}\n")
        sys.exit(2)
    got = {}
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            o = json.loads(line)
            if "frame" in o:
                got[o["frame"]] = o["transform"]["matrix"] if o.get("found") else None
    placed, missed, errs = 0, [], []
    for t in truth["truth"]:
        m = got.get(t["frame"])
        if m is not None:
            e = corner_errors(m, t["matrix"], fsize)
            if max(e) <= 0.02 * diag:
                placed += 1
                errs.extend(e)
                continue
        missed.append(t["frame"])
    print(f"\nvideo {truth['video']}: {placed} of {len(truth['truth'])} frames placed "
          f"({wall:.1f} s); median corner error "
          f"{statistics.median(errs) if errs else float('nan'):.3f} px")
    if missed:
        print(f"  frames not placed: {compress(missed)}")


def compress(frames):
    out, start = [], None
    for i, f in enumerate(frames):
        if start is None:
            start = f
        if i + 1 == len(frames) or frames[i + 1] != f + 1:
            out.append(str(start) if start == f else f"{start}-{f}")
            start = None
    return ", ".join(out)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("truth", nargs="*", help="truth files of image pairs")
    ap.add_argument("--tool", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                   "geohash-match"))
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--opencv", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--video", action="append", default=[], help="video truth file")
    ap.add_argument("--pairs", action="store_true", help="one line per pair")
    args = ap.parse_args(argv)
    methods = ["tool"]
    if args.opencv != "off":
        if cv2 is None:
            if args.opencv == "on":
                sys.exit("error: --opencv on, but cv2 cannot be imported")
            print("(OpenCV not importable: SIFT and ORB columns left out)")
        else:
            methods += ["sift", "orb"]
    for t in args.truth:
        rows = score_pairs(args, extra, t, methods)
        print_table(rows, methods, f"{t} (geohash-match --backend {args.backend} "
                    f"{' '.join(extra)})".replace("  ", " "))
    for v in args.video:
        score_video(args, extra, v)


if __name__ == "__main__":
    main()
