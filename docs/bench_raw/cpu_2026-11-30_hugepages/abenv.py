import os, subprocess, sys, time, statistics
# usage: abenv.py N 'ENV_A' 'ENV_B' -- cmd...   (ENV like "K=V K2=V2" or "-")
n = int(sys.argv[1]); envs = [sys.argv[2], sys.argv[3]]; cmd = sys.argv[5:]
def envof(s):
    e = dict(os.environ)
    if s != '-':
        for kv in s.split():
            k, v = kv.split('=', 1); e[k] = v
    return e
E = [envof(s) for s in envs]; T = [[], []]
for i in range(n):
    for j in (0, 1) if i % 2 == 0 else (1, 0):
        t0 = time.perf_counter(); subprocess.run(cmd, env=E[j], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); T[j].append(time.perf_counter() - t0)
for j in (0, 1):
    t = sorted(T[j]); print("%-40s min %.2f p25 %.2f median %.2f ms" % (envs[j], 1e3*t[0], 1e3*t[len(t)//4], 1e3*statistics.median(t)))
