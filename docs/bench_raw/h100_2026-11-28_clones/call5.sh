#!/bin/bash
# s37 call 5 (nvidia-h100-x1): voxel edit's result ordered by a GhmIndex's ranks (a GhmIndex, HEAD)
# against 44ef6fd (a qsort): the voxel/edit ctests, then the 160k-point pair (voxel_pair.py on
# bunny_mesh.off) A - B + B at 256^3, one process each from spawn to exit, cuda and cpu, old/new
# in turns, 3 rounds, the PLYs compared.
set -u
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi -L; nproc; R=$PWD
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > $OUT/build_new.txt 2>&1 &
p1=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1 &
p2=$!
wait $p1; echo "new build rc $?"; wait $p2; echo "old build rc $?"
export GHM_TEST_DATA=$PWD/data
ctest --test-dir /tmp/bn -R 'edit|voxel' -LE slow -j8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.txt | head
mkdir -p /tmp/ve && cd /tmp/ve && python3 $R/scripts/voxel_pair.py $R/data/pointclouds/bunny_mesh.off --points 160000 A.ply B.ply > /dev/null 2>&1; ls -la /tmp/ve
ms() { local t0=$(date +%s%N); "$@" > /dev/null 2>/tmp/err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc"; }
for r in 1 2 3; do
  for b in cuda cpu; do
    for v in bo bn; do echo "round $r $b $v: $(ms /tmp/$v/geohash-match voxel edit --backend $b --grid 256 -o e_${b}_$v.ply A.ply --subtract B.ply --add B.ply)"; done
  done
done
for b in cuda cpu; do cmp -s e_${b}_bo.ply e_${b}_bn.ply && echo "$b: old and new PLY identical" || echo "$b: PLYs DIFFER"; done
cmp -s e_cuda_bn.ply e_cpu_bn.ply && echo "cuda and cpu PLY identical" || echo "cuda and cpu PLYs differ"
cd $OUT && tar -czf logs.tgz build_new.txt build_old.txt ctest.txt && rm -f build_new.txt build_old.txt ctest.txt
