#!/usr/bin/env bash
# s66 CPU: o = cca19fa, n = HEAD (Accel8) on this 2-core machine, bench dynmap in turns
k=0
for v in o n n o o n; do
  k=$((k + 1))
  b=/work/main/build/geohash-match; [ $v = o ] && b=/tmp/oldcpu/b/geohash-match
  $b bench dynmap --backend cpu --threads 2 --reps 3 --json-out dyn_${v}_$k.json > dyn_${v}_$k.txt 2>&1
  echo "$(date +%T) $v $k rc $?"
done
