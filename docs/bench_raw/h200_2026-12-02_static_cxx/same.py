# same.py A B [OPTS...]: the 46 pairs' --json (timings removed) of A and B compared
import json, subprocess, os, re, sys
a, b = sys.argv[1:3]; extra = sys.argv[3:]
pairs = []
for tf in ["data/pairs/truth.json", ".dev/c72/hard/truth.json"]:
    t = json.load(open(tf)); d = os.path.dirname(tf)
    for p in t["pairs"]:
        pairs.append((os.path.normpath(os.path.join(d, p["reference"])), os.path.normpath(os.path.join(d, p["query"]))))
same = 0
for r, q in pairs:
    outs = []
    for bn in (a, b):
        o = subprocess.run([bn, "--json"] + extra + [r, q], capture_output=True, text=True).stdout
        outs.append(re.sub(r'"timings_ms":\{[^}]*\},?', "", o))
    same += outs[0] == outs[1]
    if outs[0] != outs[1]: print("DIFF", r, q)
print(same, "of", len(pairs), "identical")
