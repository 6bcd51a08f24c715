#!/bin/bash
B=$1
cd /work/main
python3 - "$B" <<'P'
import json, os, subprocess, sys
b=sys.argv[1]
for tf in ["data/pairs/truth.json", "/work/shared/data/hard/truth.json"]:
    t = json.load(open(tf)); d = os.path.dirname(tf)
    for p in t["pairs"]:
        subprocess.run([b, "--json", "--backend", "cpu", os.path.join(d,p["reference"]), os.path.join(d,p["query"])], stdout=subprocess.DEVNULL)
P
