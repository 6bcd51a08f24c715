import sys
# prints a run's timeline lines (TL <realtime> p<part> <what>) in ms from the launch line
for path in sys.argv[1:]:
    rows = [l.split(None, 3) for l in open(path) if l.startswith("TL ")]
    t0 = float(rows[0][1])
    seen = {}
    out = []
    for _, t, p, w in rows:
        w = w.strip()
        key = (p, w)
        if w.startswith("w ") :
            seen.setdefault(key, []).append((float(t) - t0) * 1000)
            continue
        out.append("%s %s %.0f" % (p, w, (float(t) - t0) * 1000))
    for (p, w), v in seen.items():
        out.append("%s %s x%d %.0f..%.0f" % (p, w, len(v), min(v), max(v)))
    print(path.split("/")[-1] + ": " + "; ".join(out))
