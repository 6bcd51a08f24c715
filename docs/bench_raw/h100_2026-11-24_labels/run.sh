#!/usr/bin/env bash
# labels (issue 12 item 5): build base (9f2ef71) and branch, the voxel CUDA suites, the 2 x 2M
# bunny pair CPU vs CUDA (identical outputs) and against the mesh, A/B of the voxel step.
R=$PWD
mkdir -p /tmp/new /tmp/old
tar xJf .dev/labels/new.tar.xz -C /tmp/new; tar xJf .dev/labels/old.tar.xz -C /tmp/old
sed -i "s/ -Werror//" /tmp/new/CMakeLists.txt /tmp/old/CMakeLists.txt
t0=$(date +%s)
bash /tmp/new/scripts/device_build.sh $R/.dev/debs /tmp/new /tmp/bn > $OUT/build_new.log 2>&1 &
bash /tmp/old/scripts/device_build.sh $R/.dev/debs /tmp/old /tmp/bo > /tmp/build_old.log 2>&1 &
wait
echo "build $(( $(date +%s) - t0 )) s"; tail -2 $OUT/build_new.log; tail -1 /tmp/build_old.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import numpy, scipy; print("scipy", scipy.__version__)' 2>&1 | tail -1
cd /tmp/bn
t0=$(date +%s)
timeout 120 ctest -L gpu -R voxel -j4 --output-on-failure > $OUT/ctest_gpu.log 2>&1
echo "ctest gpu voxel rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Passed|Failed|Skipped" $OUT/ctest_gpu.log | tail -8
# the pair, CPU vs CUDA at 512 and 1024 (bit for bit: same PLY), timings of the CUDA step old/new
P=/tmp/pair; mkdir -p $P
python3 /tmp/new/scripts/voxel_pair.py /tmp/new/data/pointclouds/bunny_mesh.off --mesh-out $P/B.off $P/A.ply $P/B.ply
for g in 512 1024; do
  ./geohash-match voxel --backend cpu --threads 16 --json --grid $g -o $P/cpu$g.ply $P/A.ply $P/B.ply > $P/cpu$g.json
  ./geohash-match voxel --backend cuda --json --grid $g -o $P/cuda$g.ply $P/A.ply $P/B.ply > $P/cuda$g.json
  cmp $P/cpu$g.ply $P/cuda$g.ply && echo "grid $g: CPU and CUDA outputs identical"
  python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(sys.argv[1],{s:{k:j[s][k] for k in ('voxels','inside','outside','unknown','conflicts')} for s in 'AB'},j['rounds'])" $P/cuda$g.json
done
# A/B: 2 x 2M bunnies at 1024 (thin: new widens the barrier) and bench voxel 2 x 10M at 1024
for r in 1 2; do for side in old new; do
  b=/tmp/bo; [ $side = new ] && b=/tmp/bn
  for k in 1 2 3; do $b/geohash-match voxel --backend cuda --json --grid 1024 $P/A.ply $P/B.ply; done |
    python3 -c "import json,sys;print('$side bunny 2x2M 1024 step ms', [round(json.loads(l)['timings_ms']['step'],2) for l in sys.stdin])"
  $b/geohash-match bench voxel --backend cuda --threads 16 --reps 5 --points 10000000,5000000 --grid 1024 > $OUT/bench_${side}_$r.txt 2>&1
  echo "== $side $r"; tail -3 $OUT/bench_${side}_$r.txt
done; done
t0=$(date +%s)
timeout 100 env GHM_VOXEL_BACKEND=cuda ctest -R voxel_fine_grid --output-on-failure > $OUT/fine_cuda.log 2>&1
echo "fine grid cuda rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/fine_cuda.log
