#!/usr/bin/env bash
# s64: the CPU path's neighbour ids kept by the sweep (7112cac) against 2355c4f, this machine
# (2 cores). A.ply / B.ply: scripts/voxel_pair.py of bunny_mesh.off, 160 k points each.
# Binaries: /tmp/gm_64 (2355c4f), /tmp/gm_keep (7112cac); six rounds in turns.
set -u
D=/work/main/data/pointclouds
E="voxel edit --backend cpu --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for r in 1 2 3 4 5 6; do
  order="64 keep"; [ $((r % 2)) = 0 ] && order="keep 64"
  for v in $order; do
    /tmp/gm_$v $E -o /tmp/x_$v.ply > /tmp/x.json
    echo "round $r $v edit: $(/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.0f (look %.0f fill %.0f)" % (s["op"][:3], s["timings_ms"]["step"], s["timings_ms"]["lookup"], s["timings_ms"]["fill"]) for s in j["steps"]))' /tmp/x.json)"
    perf stat -x, -e page-faults -o /tmp/pf.txt /tmp/gm_$v $E -o /tmp/y.ply > /dev/null
    echo "round $r $v edit page-faults: $(grep page-faults /tmp/pf.txt | cut -d, -f1)"
  done
done
cmp /tmp/x_64.ply /tmp/x_keep.ply && echo "PLYs equal"
