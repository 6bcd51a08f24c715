import subprocess, statistics, sys, re
bins = sys.argv[1:3]; args = sys.argv[3:]
t = {b: [] for b in bins}
for i in range(30):
    for b in (bins if i % 2 == 0 else bins[::-1]):
        e = subprocess.run([b, "--verbose"] + args, capture_output=True, text=True).stderr
        t[b].append(float(re.search(r"reference: build ([0-9.]+) ms", e).group(1)))
for b in bins:
    v = sorted(t[b]); print(b, "ref build min %.1f p25 %.1f median %.1f ms" % (v[0], v[len(v)//4], statistics.median(v)))
