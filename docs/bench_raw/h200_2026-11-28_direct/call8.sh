#!/usr/bin/env bash
# s41 call 8: the ranks, whose finds are queued without host waits (1e57335 + the queued finds),
# against one process, 2 x H200, built
# with MPI and NCCL: bench distmap 2^28 --gpus 2 (one process) and 2 MPI ranks (NCCL), in turns
# twice; check_dist_map (its ranked cases with NCCL).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
O=/tmp/ompi
mkdir -p $O && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
export OPAL_PREFIX=$O/usr PATH=$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi"
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 || { tail -30 "$OUT/build_new.log"; exit 1; }
el build
cd /tmp/bn || exit 1
timeout 120 ./check_dist_map 2>&1 | tail -1; el check_dist_map
CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -1
tail -1 $OUT/memcheck.txt; el memcheck
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
{
for rep in 1 2; do
  echo "== one process --gpus 2, round $rep"; timeout 90 ./geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
  echo "== 2 MPI ranks, round $rep"; timeout 90 $MPI -n 2 ./geohash-match bench distmap --log2 28 | grep -E "split|one map"
done
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" > "$OUT/distmap.txt"
el distmap; cat $OUT/distmap.txt
