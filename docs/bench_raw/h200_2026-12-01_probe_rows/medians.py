import re, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"round (\d+) (\w)( [\w ]+)?: (.*)", line.strip())
    if not m:
        continue
    v, kind, body = m.group(2), (m.group(3) or " seven").strip(), m.group(4)
    if kind == "voxel mode":
        for k, val in re.findall(r"(\w+) ([\d.]+)", body):
            rows.setdefault((kind, k), {}).setdefault(v, []).append(float(val))
        continue
    for i, part in enumerate(body.split(" | ")):
        mm = re.match(r"(\w+) ([\d.]+) \((.*)\)", part)
        rows.setdefault((kind, "%d %s" % (i, mm.group(1))), {}).setdefault(v, []).append(float(mm.group(2)))
        for k, val in re.findall(r"(\w+) ([\d.]+)", mm.group(3)):
            rows.setdefault((kind, "%d %s %s" % (i, mm.group(1), k)), {}).setdefault(v, []).append(float(val))
for key, d in rows.items():
    print("%-40s" % " / ".join(key), "  ".join("%s %.2f (%.2f-%.2f)" % (v, st.median(d[v]), min(d[v]), max(d[v])) for v in "omn" if v in d))
