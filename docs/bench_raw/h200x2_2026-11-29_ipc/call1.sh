#!/usr/bin/env bash
# s48 call 1 (2 x H200): (a) issue 16: ranks' finds in place through CUDA IPC windows, old
# (efe28cf) / new, one process --gpus 2 and 2 MPI ranks, in turns; check_dist_map, the new CLI
# case, memcheck of the ranks' window find. (b) issue 12: the fill's warps' levels as before
# (call10 patch of s47): PLYs and bench voxel / edit rounds against efe28cf and b42309e.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
O=/tmp/ompi
mkdir -p $O /tmp/mpibin && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
ln -sf $O/usr/bin/mpirun.openmpi /tmp/mpibin/mpirun
export OPAL_PREFIX=$O/usr PATH=/tmp/mpibin:$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi"
mkdir -p /tmp/old /tmp/a47 && tar -xf .dev/c48/old.tar -C /tmp/old && tar -xf .dev/c47/old.tar -C /tmp/a47
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt /tmp/a47/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
($B . /tmp/bn $F > $OUT/build_new.log 2>&1 || echo FAIL new) &
($B /tmp/old /tmp/bo $F > /tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/a47 /tmp/ba -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > /tmp/build_a.log 2>&1 || echo FAIL a47) &
wait
el build; grep -i "nccl\|mpi" $OUT/build_new.log | head -3; tail -3 $OUT/build_new.log
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
{
cd /tmp/bn
timeout 120 ./check_dist_map 2>&1 | tail -2; el check_dist_map
timeout 100 ctest -R 'bench_distmap|dist_map' 2>&1 | grep "tests passed\|Failed\|\*\*\*\|Not Run\|Skipped"; el ctest_dist
timeout 60 ctest -R 'bench_distmap_mpi_cuda' --output-on-failure 2>&1 | tail -5
cd - > /dev/null
timeout 120 $MPI -n 2 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match bench distmap --log2 18 --reps 1 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" | grep "ERROR SUMMARY\|in place\|wrong" ; el memcheck
} 2>&1 | tee $OUT/tests.txt
{
for rep in 1 2; do
  for b in bo bn; do
    echo "== $b one process --gpus 2, round $rep"; timeout 90 /tmp/$b/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
    echo "== $b 2 MPI ranks, round $rep"; timeout 90 $MPI -n 2 /tmp/$b/geohash-match bench distmap --log2 28 | grep -E "split|one map"
  done
done
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" > "$OUT/distmap.txt"
el distmap; cat $OUT/distmap.txt
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f" % (s["op"], s["timings_ms"]["step"]) for s in j["steps"]))' "$1"; }
bin() { case $1 in a47) echo /tmp/ba/geohash-match;; old) echo /tmp/bo/geohash-match;; new) echo /tmp/bn/geohash-match;; esac; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for v in a47 new; do
  $(bin $v) ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1
  $(bin $v) voxel --backend cuda --grid 512 data/pointclouds/bunny.ply data/pointclouds/kitten.ply -o /tmp/v512_$v.ply > /dev/null 2>&1
  $(bin $v) voxel --backend cuda --grid 256 /tmp/A.ply /tmp/B.ply -o /tmp/w256_$v.ply > /dev/null 2>&1
done
for f in e v512 w256; do cmp /tmp/${f}_a47.ply /tmp/${f}_new.ply && echo "same PLY b42309e / new: $f"; done | tee $OUT/voxel_ab.txt
for r in 1 2 3; do
  order="a47 old new"; [ $((r % 2)) = 0 ] && order="new old a47"
  for v in $order; do
    echo "round $r $v: $($(bin $v) $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json | cut -c1-200)"
    echo "== bench $v: $($(bin $v) bench voxel --backend cuda --grid 256 --reps 10 --points 160000,1280000 | grep -v "^points\|^bench" | awk '{print "fill", $12, "step", $15}' | tr '\n' ' ')"
  done
done | tee -a $OUT/voxel_ab.txt
el voxel
cd /tmp/bn && timeout 100 ctest -j 8 -R 'voxel_cuda|voxel_edit_cuda|voxel_edit_json|voxel_normals' > $OUT/ctest_voxel.txt 2>&1; grep "tests passed\|Failed\|\*\*\*" $OUT/ctest_voxel.txt | head
el end
