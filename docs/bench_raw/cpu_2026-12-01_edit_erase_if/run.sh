#!/usr/bin/env bash
# s66 CPU edit: o = cca19fa, n = 21a5693 (intersect by ghm_dynmap_erase_if), 2 threads, the F and
# E edits in turns, 6 rounds; each step's set part ("edit") and whole step (after the upload).
D=/work/main/data/pointclouds
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
steps() { /usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (edit %.1f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for round in 1 2 3 4 5 6; do
  order="o n"; [ $((round % 2)) = 0 ] && order="n o"
  for v in $order; do for x in F E; do
    b=/work/main/build/geohash-match; [ $v = o ] && b=/tmp/oldcpu/b/geohash-match
    $b ${!x} --backend cpu --threads 2 -o /tmp/x.ply > /tmp/x.json
    echo "round $round $v $x: $(steps /tmp/x.json)"
  done; done
done
