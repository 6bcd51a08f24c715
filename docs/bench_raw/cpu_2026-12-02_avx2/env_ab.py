# Wall and CPU time of one-shot pairs under OpenMP wait settings, interleaved per pair.
import json, os, resource, statistics, subprocess, sys, time
bn = sys.argv[1]; rounds = int(sys.argv[2]); settings = sys.argv[3:]
pairs = []
for tf in ["/work/main/data/pairs/truth.json", "/work/shared/data/hard/truth.json"]:
    t = json.load(open(tf)); d = os.path.dirname(tf)
    for p in t["pairs"]:
        pairs.append((os.path.join(d, p["reference"]), os.path.join(d, p["query"])))
def run(env, r, q):
    e = dict(os.environ); e.update(env)
    s = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.perf_counter()
    subprocess.run([bn, "--json", "--backend", "cpu", r, q], stdout=subprocess.DEVNULL, env=e)
    w = time.perf_counter() - t; f = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1e3 * w, 1e3 * (f.ru_utime - s.ru_utime + f.ru_stime - s.ru_stime)
envs = []
for s in settings:
    k, v = s.split("=")
    envs.append((s, {k: v}))
wall = {s: [] for s, _ in envs}; cpu = {s: [] for s, _ in envs}
for k in range(rounds):
    for r, q in pairs:
        for s, e in envs + envs[::-1]:
            w, c = run(e, r, q); wall[s].append(w); cpu[s].append(c)
    base = envs[0][0]
    print("round %d: " % (k + 1) + "  ".join("%s wall %.3f cpu %.3f" % (s, sum(wall[s]) / sum(wall[base]), sum(cpu[s]) / sum(cpu[base])) for s, _ in envs))
for s, _ in envs:
    print("%s: wall sum %.0f ms, cpu sum %.0f ms" % (s, sum(wall[s]), sum(cpu[s])))
