import re, sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    m = re.match(r"round (\d+) (\w): (.*)", line)
    if not m:
        continue
    for i, part in enumerate(m.group(3).split(" | ")):
        mm = re.match(r"(\w+) ([\d.]+) \(fill ([\d.]+) edit ([\d.]+)\)", part)
        d.setdefault((i, mm.group(1), "step"), {}).setdefault(m.group(2), []).append(float(mm.group(2)))
        d.setdefault((i, mm.group(1), "edit"), {}).setdefault(m.group(2), []).append(float(mm.group(4)))
for k, v in d.items():
    print("%d %s %-4s" % k, "  ".join("%s %.2f (%.2f-%.2f)" % (x, st.median(v[x]), min(v[x]), max(v[x])) for x in sorted(v)))
