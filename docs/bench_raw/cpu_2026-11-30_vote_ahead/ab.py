import subprocess, time, statistics, sys, os
args = sys.argv[3:]
bins = {"old": sys.argv[1], "new": sys.argv[2]}
t = {k: [] for k in bins}
for i in range(int(os.environ.get("N", "60"))):
    for k, b in (bins.items() if i % 2 == 0 else reversed(list(bins.items()))):
        s = time.perf_counter(); subprocess.run([b] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); t[k].append(time.perf_counter() - s)
for k, v in t.items():
    v.sort(); print(k, "min %.2f p25 %.2f median %.2f ms" % (v[0]*1e3, v[len(v)//4]*1e3, statistics.median(v)*1e3))
