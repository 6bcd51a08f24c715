#!/usr/bin/env bash
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/src_o2 && tar xJf .dev/old2-src.tar.xz -C /tmp/src_o2 && sed -i "s/ -Werror//" /tmp/src_o2/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/src_o2 /tmp/b_o2 >"$OUT/build_o2.log" 2>&1 || { tail -20 "$OUT/build_o2.log"; exit 1; }
el build old
cd /tmp/ve
for round in 1 2 3; do
  for v in old new; do
    b=/tmp/b/geohash-match; [ $v = old ] && b=/tmp/b_o2/geohash-match
    $b voxel edit --backend cuda --json --grid 256 -o e_$v.ply A.ply --subtract B.ply --add B.ply > /tmp/e.json
    echo "$v r$round $(python3 -c "
import json; j=json.load(open('/tmp/e.json')); print([(s['op'], {k: round(v,1) for k,v in s['timings_ms'].items() if k in ('classify','probe','edit','step')}) for s in j['steps']])")"
  done
done | tee "$OUT/ab.txt"
cmp e_old.ply e_new.ply && echo "old and new PLY identical"
