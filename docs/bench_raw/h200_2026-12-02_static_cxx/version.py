# version.py A B N: wall time of `--version`, A and B in turns, N each; medians in ms
import statistics, subprocess, sys, time
a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3]); ts = {a: [], b: []}
for _ in range(n):
    for bn in (a, b):
        t = time.perf_counter(); subprocess.run([bn, "--version"], stdout=subprocess.DEVNULL)
        ts[bn].append(1e3 * (time.perf_counter() - t))
print("--version median: A %.2f ms, B %.2f ms" % (statistics.median(ts[a]), statistics.median(ts[b])))
