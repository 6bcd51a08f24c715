#!/usr/bin/env bash
# The split map on 4 GPUs (the x4 kind, lent late in the session): one process --gpus 4 and 2,
# and 4 MPI ranks over NCCL, 2^28 keys, against one map on GPU 0 in each run.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
exec > >(tee "$OUT/log.txt") 2>&1
nvidia-smi -L
O=/tmp/ompi
mkdir -p $O && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
export OPAL_PREFIX=$O/usr PATH=$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON \
    -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi >"$OUT/build.log" 2>&1 || tail -30 "$OUT/build.log"
el build
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
cd /tmp/b || exit 1
{
echo "== --gpus 4"; timeout 60 ./geohash-match bench distmap --gpus 4 --log2 28 --reps 2; el g4
echo "== 4 MPI ranks"; timeout 60 $MPI -n 4 ./geohash-match bench distmap --log2 28 --reps 2; el r4
echo "== --gpus 2"; timeout 40 ./geohash-match bench distmap --gpus 2 --log2 28 --reps 2; el g2
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" | tee "$OUT/distmap.txt"
