# Interleaved A/B of one process per pair (46 pairs), wall time from spawn to exit.
import json, os, subprocess, statistics, sys, time
bins = sys.argv[1:3]; rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
pairs = []
for tf in ["data/pairs/truth.json", "/work/shared/data/hard/truth.json"]:
    t = json.load(open(tf)); d = os.path.dirname(tf)
    for p in t["pairs"]:
        pairs.append((os.path.normpath(os.path.join(d, p["reference"])), os.path.normpath(os.path.join(d, p["query"]))))
times = {b: [[] for _ in pairs] for b in bins}
for r in range(rounds):
    for b in bins:
        for i, (ref, q) in enumerate(pairs):
            t = time.perf_counter()
            subprocess.run([b, "--json", "--backend", "cpu", ref, q], stdout=subprocess.DEVNULL)
            times[b][i].append(1e3 * (time.perf_counter() - t))
    print("round %d:" % (r + 1), "  ".join("%s total %.2f s" % (os.path.basename(b), sum(x[-1] for x in times[b]) / 1e3) for b in bins))
for b in bins:
    med = [statistics.median(x) for x in times[b]]
    print("%s: median of per-pair medians %.1f ms, sum of medians %.2f s" % (b, statistics.median(med), sum(med) / 1e3))
