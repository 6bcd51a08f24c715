import re, sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'round (\d+) (\w) (\w): (.*)', line)
    if not m: continue
    v, x = m.group(2), m.group(3)
    for k, part in enumerate(m.group(4).split(' | ')):
        mm = re.match(r'(\w+) ([\d.]+) \(edit ([\d.]+)\)', part)
        d[(x, k, mm.group(1), v)].append((float(mm.group(2)), float(mm.group(3))))
keys = sorted(set((x, k, op) for (x, k, op, v) in d))
for x, k, op in keys:
    row = []
    for v in sorted(set(k[3] for k in d), key='omn'.find):
        a = d[(x, k, op, v)]
        row.append("%s %.2f (min %.2f; edit %.2f)" % (v, statistics.median([t for t, e in a]), min(t for t, e in a), statistics.median([e for t, e in a])))
    print("%s step %d %s: %s" % (x, k + 1, op, "  ".join(row)))
