#!/usr/bin/env bash
# s65 call 1 (one H200): HEAD 4c3f698 checked on CUDA (3a2ebad's cross_by_rows never ran on a GPU):
# voxel / edit / dynmap ctests, memcheck of two CUDA edits, PLY CUDA = CPU; the seven-step edit
# (intersect by bunny.ply) and the same with the intersects by the 160 k-point B, 8 rounds; ncu
# kernel durations of a BASE + add + add edit (the last add's kernels: where an add's time goes).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el build
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
G=/tmp/bn/geohash-match
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
for x in E F; do
  $G ${!x} --backend cuda -o /tmp/${x}_cuda.ply > /dev/null
  $G ${!x} --backend cpu -o /tmp/${x}_cpu.ply > /dev/null
  cmp /tmp/${x}_cuda.ply /tmp/${x}_cpu.ply && echo "$x: CUDA PLY = CPU PLY"
done | tee /tmp/o/edit.txt
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (fill %.2f edit %.2f look %.2f seeds %.2f vox %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["fill"], s["timings_ms"]["edit"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["voxelize"]) for s in j["steps"][1:]))' "$1"; }
for round in 1 2 3 4 5 6 7 8; do
  for x in E F; do
    $G ${!x} --backend cuda -o /tmp/x.ply > /tmp/x.json
    echo "round $round $x: $(steps /tmp/x.json)"
  done
done | tee -a /tmp/o/edit.txt
el edits
(cd /tmp/bn && timeout 240 ctest -j 16 -R 'voxel|edit|dynmap|faults_cuda' -LE slow --timeout 200 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head
timeout 120 compute-sanitizer --tool memcheck $G voxel edit --backend cuda --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/m.ply > /tmp/o/mc_edit.txt 2>&1
el "memcheck edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_edit.txt | tail -1)"
timeout 120 compute-sanitizer --tool memcheck $G voxel edit --backend cuda --grid 256 /tmp/A.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract $D/bunny.ply -o /tmp/m.ply > /tmp/o/mc_edit2.txt 2>&1
el "memcheck edit2 rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_edit2.txt | tail -1)"
timeout 200 ncu --metrics gpu__time_duration.sum --csv --page raw $G voxel edit --backend cuda --grid 256 /tmp/A.ply --add /tmp/B.ply --add /tmp/B.ply --subtract /tmp/B.ply -o /tmp/n.ply > /tmp/o/ncu_raw.csv 2> /tmp/o/ncu_err.txt
el "ncu rc $?"
python3 - <<'PY' > /tmp/o/ncu_kernels.txt
import csv
rows = [r for r in csv.reader(open('/tmp/o/ncu_raw.csv')) if len(r) > 5]
hdr = rows[0]; ki = hdr.index('Kernel Name'); ti = hdr.index('gpu__time_duration.sum')
for r in rows[2:]:
    print("%8s  %s" % (r[ti], r[ki][:110]))
PY
el "kernels $(wc -l < /tmp/o/ncu_kernels.txt)"
cp /tmp/o/edit.txt /tmp/o/ctest.txt /tmp/o/mc_edit.txt /tmp/o/mc_edit2.txt /tmp/o/ncu_kernels.txt /tmp/o/ncu_err.txt $OUT/
el done
