#!/usr/bin/env bash
# s34 call 6: the committed tree (main after this stop's changes) on 2 x H100: the CUDA suites
# (the maps' find_queued op, the split map), then an experiment without code changes: the ranked
# map's find over 2 MPI ranks with NCCL limited to fewer channels (fewer SMs for its copy
# kernels, more for the probes beside them) or asked to copy with the copy engines.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $OUT/env.txt
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
timeout 150 ctest -j8 -R 'hash_cuda|^map\.|faults_cuda|^index|^set\.|multimap|dist_map|distmap|geohash_cuda|voxel_cuda|dynmap|cli\.bench' -LE slow --timeout 140 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed" $OUT/ctest.log | head
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
{
for setting in default NCCL_MAX_NCHANNELS=4 NCCL_MAX_NCHANNELS=2 NCCL_P2P_USE_CUDA_MEMCPY=1; do
  echo "== 2 MPI ranks, $setting"
  if [ $setting = default ]; then X=""; else X="-x $setting"; export ${setting%%=*}=${setting#*=}; fi
  timeout 60 $MPI $X -n 2 ./geohash-match bench distmap --log2 28 | grep -E "split|one map"
  [ $setting = default ] || unset ${setting%%=*}
done
echo "== one process --gpus 2"; timeout 60 ./geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" | tee "$OUT/nccl_channels.txt"
el done
