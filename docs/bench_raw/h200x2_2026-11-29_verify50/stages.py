import json, sys
for path in sys.argv[1:]:
    sums, n = {}, 0
    for line in open(path):
        o = json.loads(line)
        t = o.get("timings_ms")
        if not t:
            continue
        n += 1
        for k, v in t.items():
            sums[k] = sums.get(k, 0.0) + v
    print(path, n, "frames;", " ".join("%s %.2f" % (k, v / max(n, 1)) for k, v in sums.items()))
