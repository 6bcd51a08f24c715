# ab.py A B ROUNDS [OPTS...]: one process per pair (46), A B B A in a row; median over pairs
# of B/A, and the median pair times. OPTS go to both (e.g. --backend cpu --threads 2).
import json, os, statistics, subprocess, sys, time
a, b = sys.argv[1:3]; rounds = int(sys.argv[3]); extra = sys.argv[4:]
pairs = []
for tf in ["data/pairs/truth.json", ".dev/c72/hard/truth.json"]:
    t = json.load(open(tf)); d = os.path.dirname(tf)
    for p in t["pairs"]:
        pairs.append((os.path.normpath(os.path.join(d, p["reference"])), os.path.normpath(os.path.join(d, p["query"]))))
def run(bn, r, q):
    t = time.perf_counter()
    subprocess.run([bn, "--json"] + extra + [r, q], stdout=subprocess.DEVNULL)
    return 1e3 * (time.perf_counter() - t)
ratios = [[] for _ in pairs]; ta = [[] for _ in pairs]; tb = [[] for _ in pairs]
for k in range(rounds):
    for i, (r, q) in enumerate(pairs):
        x1 = run(a, r, q); y1 = run(b, r, q); y2 = run(b, r, q); x2 = run(a, r, q)
        ratios[i].append((y1 + y2) / (x1 + x2)); ta[i] += [x1, x2]; tb[i] += [y1, y2]
    print("round %d: median ratio B/A %.3f" % (k + 1, statistics.median(r[-1] for r in ratios)))
med = [statistics.median(r) for r in ratios]
q = statistics.quantiles(med, n=4)
print("median over pairs of B/A %.3f (quartiles %.3f %.3f); A median pair %.1f ms, B %.1f ms" % (
    statistics.median(med), q[0], q[2], statistics.median(statistics.median(x) for x in ta),
    statistics.median(statistics.median(x) for x in tb)))
