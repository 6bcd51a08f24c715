# A/B by CPU time (user + sys of the child) over the 46 pairs, A B B A per pair, rounds.
import json, os, resource, statistics, subprocess, sys, time
a, b = sys.argv[1:3]; rounds = int(sys.argv[3])
pairs = []
for tf in ["/work/main/data/pairs/truth.json", "/work/shared/data/hard/truth.json"]:
    t = json.load(open(tf)); d = os.path.dirname(tf)
    for p in t["pairs"]:
        pairs.append((os.path.join(d, p["reference"]), os.path.join(d, p["query"])))
def run(bn, r, q):
    s = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.perf_counter()
    subprocess.run([bn, "--json", "--backend", "cpu", r, q], stdout=subprocess.DEVNULL)
    w = time.perf_counter() - t; e = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1e3 * (e.ru_utime - s.ru_utime + e.ru_stime - s.ru_stime), 1e3 * w
ca, cb, wa, wb = [], [], [], []
for k in range(rounds):
    for r, q in pairs:
        x1 = run(a, r, q); y1 = run(b, r, q); y2 = run(b, r, q); x2 = run(a, r, q)
        ca += [x1[0], x2[0]]; cb += [y1[0], y2[0]]; wa += [x1[1], x2[1]]; wb += [y1[1], y2[1]]
    print("round %d: cpu B/A %.3f wall B/A %.3f" % (k + 1, sum(cb) / sum(ca), sum(wb) / sum(wa)))
print("total cpu A %.0f ms B %.0f ms (B/A %.3f); wall A %.0f B %.0f (B/A %.3f)" % (
    sum(ca), sum(cb), sum(cb) / sum(ca), sum(wa), sum(wb), sum(wb) / sum(wa)))
