#!/usr/bin/env bash
# s49 call 12 (2 x H200): one process's overlapped build with send arrays for the other pieces
# alone: check_dist_map (every case), memcheck of its CUDA case, bench distmap 2^28 once.
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
sed -i "s/ -Werror//" CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
($B . /tmp/bn $F > $OUT/build_new.log 2>&1 || echo FAIL new) &
wait
el build; tail -2 $OUT/build_new.log
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
F2="grep -v pmix_mca_base\|dlopen.error\|Perhaps.a.missing"
{
cd /tmp/bn
timeout 200 ./check_dist_map 2>&1 | tail -2; el check_dist_map
CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no ./check_dist_map > $OUT/memcheck_check.txt 2>&1; grep "ERROR SUMMARY\|Checks" $OUT/memcheck_check.txt
cd - > /dev/null
el memcheck
} 2>&1 | tee $OUT/tests.txt
{
for rep in 1; do
  for b in bn; do
    echo "== $b one process --gpus 2, round $rep"; timeout 90 /tmp/$b/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
  done
done
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" > "$OUT/distmap.txt"
el distmap; cat $OUT/distmap.txt
