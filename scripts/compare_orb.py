#!/usr/bin/env python3
"""Time geohash-match against OpenCV ORB + RANSAC on the same image pairs, in one run.

    scripts/compare_orb.py [--tool build/geohash-match] [--backend cpu] [--repeat 5]
                           [--orb-features 5000] [--json] [-- EXTRA TOOL OPTIONS] [TRUTH.json ...]

Three methods on every pair of the truth files (default: data/pairs/truth.json and
../shared/data/hard/truth.json when it exists; the format of scripts/score_hard.py):
  gm-process  one `geohash-match --json REF QUERY` process per pair, timed from spawn to exit
              (start-up, decoding, the reference's tables, the query);
  gm-batch    one `geohash-match --json REF QUERY...` process per reference with all of its
              queries (tables built once); a pair's time is the run's wall time divided by the
              number of its queries;
  orb         in this process (cv2 imported once): read both images, cv2.ORB_create
              (nfeatures), BFMatcher Hamming knnMatch with Lowe's ratio 0.8,
              cv2.estimateAffinePartial2D with RANSAC (5 px), a match needing 12 inliers
              (scripts/score_hard.py's settings).
The methods run interleaved, repeat after repeat, so that the machine's noise falls on all of
them alike; each time is the median over the repeats. A positive pair is correct when the four
query corners mapped by the found matrix are within 2 % of the reference diagonal of the
truth's; a negative pair when nothing is found.

Output: one tab-separated row per pair and method (header line first), then lines beginning
with '#': per method the median of the pairs' times and the correct count, and the machine's
load. --json prints one JSON object instead. Exit 0; 2 on bad input, a failing tool, or no cv2.

On a machine that other processes keep busy, OpenMP's spinning waits (libgomp's default) made
one geohash-match pair 5-10x slower on 2 cores (2026-11-24: 2.2 s against 0.40 s with
OMP_WAIT_POLICY=passive and 0.46 s with `-- --threads 1`, load 7-10); since 2026-11-29
geohash-match sets the passive policy for itself unless the environment chooses one. The
machine line reports the load, OMP_WAIT_POLICY and the tool options, so that runs are compared
alike.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from score_hard import corner_errors, image_size  # noqa: E402 (the shared scoring rules)

try:
    import cv2
    import numpy as np
except ImportError:
    cv2 = None

METHODS = ["gm-process", "gm-batch", "orb"]


def fail(msg):
    sys.stderr.write("compare_orb: %s\n" % msg)
    sys.exit(2)


def load_pairs(truth_paths):
    pairs = []
    for path in truth_paths:
        try:
            with open(path) as f:
                truth = json.load(f)
        except (OSError, ValueError) as e:
            fail("%s: %s" % (path, e))
        base = os.path.dirname(os.path.abspath(path))
        for p in truth["pairs"]:
            ref, query = os.path.join(base, p["reference"]), os.path.join(base, p["query"])
            w, h = image_size(ref)
            pairs.append({"id": p["id"], "class": p.get("difficulty", "-"), "reference": ref,
                          "query": query, "matrix": p.get("matrix"),
                          "negative": bool(p.get("negative")) or p.get("matrix") is None,
                          "qsize": image_size(query), "diag": (w * w + h * h) ** 0.5})
    return pairs


def judge(pair, matrix):
    """(correct, largest corner error in px or None)."""
    if matrix is None:
        return pair["negative"], None
    if pair["negative"]:
        return False, None
    err = max(corner_errors(matrix, pair["matrix"], pair["qsize"]))
    return err <= 0.02 * pair["diag"], err


def run_tool(args, refs_queries):
    """Runs the tool on one reference and its queries: (wall seconds, {query path: matrix})."""
    ref, queries = refs_queries
    cmd = [args.tool, "--json", "--backend", args.backend] + args.extra + [ref] + queries
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        fail("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    found = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            o = json.loads(line)
            q = os.path.abspath(o["query"]["path"])
            found[q] = o["transform"]["matrix"] if o.get("found") else None
    missing = [q for q in queries if os.path.abspath(q) not in found]
    if missing:
        fail("%s: no result for %s" % (" ".join(cmd), missing[0]))
    return wall, found


def orb_match(nfeatures, ref_path, query_path):
    """Similarity QUERY -> REFERENCE by ORB, ratio test and RANSAC, from the files; or None."""
    ref = cv2.imread(ref_path, cv2.IMREAD_GRAYSCALE)
    qry = cv2.imread(query_path, cv2.IMREAD_GRAYSCALE)
    if ref is None or qry is None:
        fail("OpenCV cannot read %s or %s" % (ref_path, query_path))
    det = cv2.ORB_create(nfeatures=nfeatures)
    kq, dq = det.detectAndCompute(qry, None)
    kr, dr = det.detectAndCompute(ref, None)
    if dq is None or dr is None or len(kq) < 2 or len(kr) < 2:
        return None
    good = [m[0] for m in cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(dq, dr, k=2)
            if len(m) == 2 and m[0].distance < 0.8 * m[1].distance]
    if len(good) < 4:
        return None
    src = np.float32([kq[g.queryIdx].pt for g in good])
    dst = np.float32([kr[g.trainIdx].pt for g in good])
    m, inl = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=5.0,
                                         maxIters=5000, confidence=0.999)
    if m is None or inl is None or int(inl.sum()) < 12:
        return None
    return m.tolist()


def measure(args, pairs):
    """times[method][pair id] = list of seconds; matrices[method][pair id] = last answer."""
    times = {m: {p["id"]: [] for p in pairs} for m in METHODS}
    answers = {m: {} for m in METHODS}
    groups = {}
    for p in pairs:
        groups.setdefault(p["reference"], []).append(p)
    for _ in range(args.repeat):
        for p in pairs:
            wall, found = run_tool(args, (p["reference"], [p["query"]]))
            times["gm-process"][p["id"]].append(wall)
            answers["gm-process"][p["id"]] = found[os.path.abspath(p["query"])]
            t0 = time.monotonic()
            answers["orb"][p["id"]] = orb_match(args.orb_features, p["reference"], p["query"])
            times["orb"][p["id"]].append(time.monotonic() - t0)
        for ref, members in groups.items():
            wall, found = run_tool(args, (ref, [p["query"] for p in members]))
            for p in members:
                times["gm-batch"][p["id"]].append(wall / len(members))
                answers["gm-batch"][p["id"]] = found[os.path.abspath(p["query"])]
    return times, answers


def report(args, pairs, times, answers):
    rows, summary = [], {}
    for m in METHODS:
        meds, correct = [], 0
        for p in pairs:
            med = statistics.median(times[m][p["id"]])
            ok, err = judge(p, answers[m][p["id"]])
            correct += ok
            meds.append(med)
            rows.append({"pair": p["id"], "class": p["class"], "method": m,
                         "median_ms": round(med * 1000, 2),
                         "found": answers[m][p["id"]] is not None, "correct": ok,
                         "corner_error_px": None if err is None else round(err, 3)})
        summary[m] = {"median_ms": round(statistics.median(meds) * 1000, 2),
                      "total_s": round(sum(meds), 3), "correct": correct, "pairs": len(pairs)}
    load = os.getloadavg()
    machine = {"cores": os.cpu_count(), "loadavg": [round(x, 2) for x in load],
               "backend": args.backend, "repeat": args.repeat,
               "orb_features": args.orb_features, "opencv": cv2.__version__,
               "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "-"),
               "tool_options": " ".join(args.extra) or "-"}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary, "machine": machine}))
        return
    cols = ["pair", "class", "method", "median_ms", "found", "correct", "corner_error_px"]
    print("\t".join(cols))
    for r in rows:
        print("\t".join("-" if r[c] is None else str(r[c]).lower() if isinstance(r[c], bool)
                        else str(r[c]) for c in cols))
    for m, s in summary.items():
        print("# %s\tmedian_ms %.2f\ttotal_s %.3f\tcorrect %d/%d"
              % (m, s["median_ms"], s["total_s"], s["correct"], s["pairs"]))
    print("# machine\tcores %d\tloadavg %s\tbackend %s\trepeat %d\topencv %s"
          "\tOMP_WAIT_POLICY %s\ttool_options %s"
          % (machine["cores"], "/".join(map(str, machine["loadavg"])), args.backend,
             args.repeat, machine["opencv"], machine["omp_wait_policy"],
             machine["tool_options"]))


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("truth", nargs="*", help="truth files of image pairs")
    ap.add_argument("--tool", default=os.path.join(HERE, "..", "build", "geohash-match"))
    ap.add_argument("--backend", default="cpu", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--orb-features", type=int, default=5000)
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args(argv)
    args.extra = extra
    if cv2 is None:
        fail("OpenCV's Python module (cv2) is missing: pip install opencv-python-headless "
             "(e.g. into build-py/venv) and run this script with that Python")
    if args.repeat < 1 or args.orb_features < 1:
        fail("--repeat and --orb-features must be at least 1")
    if not os.access(args.tool, os.X_OK):
        fail("%s: not an executable (build it, or pass --tool)" % args.tool)
    truth = args.truth or [p for p in (os.path.join(HERE, "..", "data", "pairs", "truth.json"),
                                       os.path.join(HERE, "..", "..", "shared", "data", "hard",
                                                    "truth.json")) if os.path.exists(p)]
    pairs = load_pairs(truth)
    if not pairs:
        fail("no pairs in %s" % ", ".join(truth))
    times, answers = measure(args, pairs)
    report(args, pairs, times, answers)


if __name__ == "__main__":
    main()
