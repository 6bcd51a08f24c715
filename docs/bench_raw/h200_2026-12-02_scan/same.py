import json, subprocess, os, re, sys
a, b = sys.argv[1:3]
pairs = []
for tf in ["data/pairs/truth.json", ".dev/c70/hard/truth.json"]:
    t = json.load(open(tf)); d = os.path.dirname(tf)
    for p in t["pairs"]:
        pairs.append((os.path.normpath(os.path.join(d, p["reference"])), os.path.normpath(os.path.join(d, p["query"]))))
same = 0
for r, q in pairs:
    outs = []
    for bn in (a, b):
        o = subprocess.run([bn, "--json"] + sys.argv[3:] + [r, q], capture_output=True, text=True).stdout
        outs.append(re.sub(r'"timings_ms":\{[^}]*\},?', "", o))
    same += outs[0] == outs[1]
    if outs[0] != outs[1]: print("DIFF", r, q)
print(same, "of", len(pairs), "identical")
