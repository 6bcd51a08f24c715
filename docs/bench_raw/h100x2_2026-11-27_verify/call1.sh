#!/usr/bin/env bash
# s35 call 1: GPU run of stop 34's compile-only commits (cc866cc NcclLink SideStream, fa971b1
# pair_grid) on 2 x H100: check_dist_map (ranked CUDA case included), the CUDA suites, memcheck
# of the dist map's CUDA case, then bench distmap 2^28 over 2 MPI ranks with NCCL settings.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; git log --oneline -1; } > $OUT/env.txt
O=/tmp/ompi
mkdir -p $O && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
export OPAL_PREFIX=$O/usr PATH=$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
el build
cd /tmp/bn || exit 1
timeout 120 ./check_dist_map 2>&1 | tail -1; el check_dist_map
CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -1
tail -2 $OUT/memcheck.txt; el memcheck
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
{
echo "== one process --gpus 2"; timeout 60 ./geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
for setting in default NCCL_MAX_NCHANNELS=4 NCCL_MAX_NCHANNELS=2 NCCL_P2P_USE_CUDA_MEMCPY=1 default; do
  echo "== 2 MPI ranks, $setting"
  if [ $setting = default ]; then X=""; else X="-x $setting"; export ${setting%%=*}=${setting#*=}; fi
  timeout 60 $MPI $X -n 2 ./geohash-match bench distmap --log2 28 | grep -E "split|one map"
  [ $setting = default ] || unset ${setting%%=*}
done
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" > "$OUT/nccl_channels.txt"
el distmap; cat $OUT/nccl_channels.txt
timeout 280 ctest -j6 -R 'hash_cuda|^map\.|faults_cuda|^index|^set\.|multimap|dist_map|distmap|geohash_cuda|voxel_cuda|dynmap|cli\.bench' -LE slow --timeout 270 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed|Timeout" $OUT/ctest.log | head -20
