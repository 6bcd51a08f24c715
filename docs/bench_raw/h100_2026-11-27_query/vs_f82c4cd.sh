#!/usr/bin/env bash
# issue 10's must-not-regress, one call: f82c4cd (before issue 10) and HEAD built side by side,
# then bench match (2 rounds), bench voxel 160k at 128^3 (2 rounds), 2 x 10M at 1024^3 (1 round),
# bench hash at 2^26 (once), old and new in turns.
set -u
R=$PWD; t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/oldsrc && tar xJf .dev/f82-src.tar.xz -C /tmp/oldsrc && sed -i "s/ -Werror//" /tmp/oldsrc/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/nb > $OUT/build_new.log 2>&1 &
bash scripts/device_build.sh .dev/debs /tmp/oldsrc /tmp/ob > $OUT/build_old.log 2>&1 &
wait; tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log; el builds
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B() { [ $1 = old ] && echo /tmp/ob/geohash-match || echo /tmp/nb/geohash-match; }
for round in 1 2; do for s in old new; do
  echo "== round $round $s: bench match" >> $OUT/match.txt
  timeout 60 $(B $s) bench match --backend cuda --threads 16 --reps 30 --no-baseline >> $OUT/match.txt 2>&1
done; done; el match
for round in 1 2; do for s in old new; do
  echo "== round $round $s: bench voxel" >> $OUT/voxel.txt
  timeout 40 $(B $s) bench voxel --backend cuda --threads 16 --reps 20 >> $OUT/voxel.txt 2>&1
done; done; el voxel
for s in old new; do
  echo "== $s: bench voxel 2 x 10M at 1024^3" >> $OUT/voxel10m.txt
  timeout 60 $(B $s) bench voxel --backend cuda --threads 16 --reps 3 --points 10000000 --grid 1024 >> $OUT/voxel10m.txt 2>&1
done; el voxel10m
for s in old new; do
  echo "== $s: bench hash 2^26" >> $OUT/hash.txt
  timeout 60 $(B $s) bench hash --backend cuda --min-log2 26 --max-log2 26 >> $OUT/hash.txt 2>&1
done; el hash
grep -E "==|total" $OUT/match.txt | sed -E 's/  +/ /g' | cut -c1-120
grep -vE "^$" $OUT/voxel.txt | sed -E 's/  +/ /g' | cut -c1-160 | head -40
grep -vE "^$" $OUT/voxel10m.txt | sed -E 's/  +/ /g' | cut -c1-160 | head -20
grep -E "==|map|2\^26" $OUT/hash.txt | sed -E 's/  +/ /g' | cut -c1-160 | head -40
