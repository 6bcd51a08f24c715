#!/usr/bin/env bash
# s55 call 4 (one H200): old (623a0c6) and new built side by side, and new with prof2.py's
# timing lines; the seven-step edit (A/B 160k at 256^3) in turns, 4 rounds, with OpenMP's
# default passive waits and with short spins (GOMP_SPINCOUNT); PLYs compared.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/pt && tar -xf .dev/c55/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && python3 .dev/c55/prof2.py /tmp/pt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B . /tmp/bn $A >/tmp/build_new.log 2>&1 || echo FAIL new) &
($B /tmp/pt /tmp/bp $A >/tmp/build_prof.log 2>&1 || echo FAIL prof) &
wait
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"], s["timings_ms"].get("upload", 0), s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for v in o n; do /tmp/b$v/geohash-match ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1; done
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
cmp /tmp/e_o.ply /tmp/e_n.ply && echo "same PLY old / new (cuda)"; cmp /tmp/e_cpu.ply /tmp/e_n.ply && echo "same PLY cpu / new cuda"
for r in 1 2 3 4; do
  order="o n"; [ $((r % 2)) = 0 ] && order="n o"
  for v in $order; do echo "round $r $v: $(/tmp/b$v/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"; done
done | tee $OUT/ab.txt
for sc in 1000 10000 100000; do
  for v in o n; do echo "spin $sc $v: $(GOMP_SPINCOUNT=$sc /tmp/b$v/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"; done
done | tee $OUT/spin.txt
for r in 1 2; do /tmp/bp/geohash-match $EDIT -o /tmp/p.ply 2>&1 >/dev/null | grep PROF2; done > $OUT/prof2.txt
tail -16 $OUT/prof2.txt
