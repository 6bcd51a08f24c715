#!/usr/bin/env bash
# s63 call 7 (one H200): grids past 1024 along an axis (at most 4096, 2^30 voxels in all) on the
# device: the bunny mesh stretched long (y, z / 12), two 1M-point scans crossing; the voxel mode
# at 2048 and 4096 and a voxel edit at 2048, CPU PLY = CUDA PLY; the CUDA truth test; ctests;
# memcheck of a smaller pair at 2048.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o /tmp/l
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el builds
python3 - data/pointclouds/bunny_mesh.off /tmp/l/long.off <<'PY'
import sys
w = open(sys.argv[1]).read().split()
nv, nf = int(w[1]), int(w[2])
v = [float(x) for x in w[4:4 + 3 * nv]]
with open(sys.argv[2], "w") as o:
    o.write("OFF\n%d %d 0\n" % (nv, nf))
    for i in range(nv):
        o.write("%.9g %.9g %.9g\n" % (v[3 * i], v[3 * i + 1] / 12, v[3 * i + 2] / 12))
    f = w[4 + 3 * nv:]
    for i in range(nf):
        o.write(" ".join(f[4 * i:4 * i + 4]) + "\n")
PY
P="--angle 2 --scale 0.9 --shift 0.1 0.01 0.008"
python3 scripts/voxel_pair.py /tmp/l/long.off --points 1000000 $P --mesh-out /tmp/l/B.off /tmp/l/A.ply /tmp/l/B.ply
python3 scripts/voxel_pair.py /tmp/l/long.off --points 200000 $P /tmp/l/a.ply /tmp/l/b.ply
G=/tmp/bn/geohash-match
summ() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d.get("steps"); print(d["grid"]["dims"], [(k, d[c][k]) for c in "AB" for k in ("voxels", "inside", "unknown")] if not s else [(x["op"], x["voxels"], x["conflicts"], round(x["timings_ms"]["step"] - x["timings_ms"]["upload"], 2)) for x in s], "" if s else round(d["timings_ms"]["step"], 2))' "$1"; }
for g in 2048 4096; do
  for b in cpu cuda; do $G voxel --json --backend $b --grid $g -o /tmp/l/v_${g}_$b.ply /tmp/l/A.ply /tmp/l/B.ply > /tmp/o/v_${g}_$b.json || echo "rc $? $g $b"; echo "$g $b $(summ /tmp/o/v_${g}_$b.json)"; done
  cmp /tmp/l/v_${g}_cpu.ply /tmp/l/v_${g}_cuda.ply && echo "voxel $g: CPU PLY = CUDA PLY"
done 2>&1 | tee /tmp/o/ab.txt
for b in cpu cuda; do $G voxel edit --json --backend $b --grid 2048 /tmp/l/A.ply --subtract /tmp/l/B.ply --intersect /tmp/l/B.ply -o /tmp/l/e_$b.ply > /tmp/o/e_$b.json || echo "rc $? edit $b"; echo "edit $b $(summ /tmp/o/e_$b.json)"; done 2>&1 | tee -a /tmp/o/ab.txt
cmp /tmp/l/e_cpu.ply /tmp/l/e_cuda.ply && echo "edit 2048: CPU PLY = CUDA PLY" | tee -a /tmp/o/ab.txt
el compared
for r in 1 2 3; do $G voxel --json --backend cuda --grid 2048 -o /tmp/l/x.ply /tmp/l/A.ply /tmp/l/B.ply > /tmp/x.json; echo "cuda 2048 round $r $(summ /tmp/x.json)"; done | tee -a /tmp/o/ab.txt
cd /tmp/bn
timeout 200 ctest -j 16 -R "voxel|edit|grid" -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
GHM_VOXEL_BACKEND=cuda timeout 200 ctest -R "voxel_long_grid_truth_slow|voxel_fine_grid_truth_slow" --timeout 190 > /tmp/o/ctest_truth.txt 2>&1; el ctest truth cuda rc $?
grep -E "Test +#|tests passed" /tmp/o/ctest_truth.txt
timeout 150 compute-sanitizer --tool memcheck $G voxel --backend cuda --grid 2048 -o /tmp/l/y.ply /tmp/l/a.ply /tmp/l/b.ply 2>&1 | tail -1 | tee /tmp/o/sanitizer.txt
timeout 150 compute-sanitizer --tool memcheck $G voxel edit --backend cuda --grid 2048 /tmp/l/a.ply --subtract /tmp/l/b.ply -o /tmp/l/y.ply 2>&1 | tail -1 | tee -a /tmp/o/sanitizer.txt
el sanitizers
cp /tmp/o/*.txt /tmp/o/*.json $OUT/
