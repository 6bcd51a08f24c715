#!/usr/bin/env bash
# Ranked GhmDistMap on 2 GPUs: NCCL from the wheel, OpenMPI from Debian's packages (relocated);
# tests (threads as ranks, NCCL), bench distmap in one process --gpus 2 against 2 MPI ranks.
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
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
echo "nccl wheel: $NC"; ls $NC $NC/include $NC/lib 2>&1 | head -20
find / -name nccl.h -not -path "/proc/*" 2>/dev/null | head -3
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
mpirun.openmpi --version 2>&1 | head -2
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON \
    -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; }
grep -E "NCCL|MPI" "$OUT/build.log" | head; el build
cd /tmp/b || exit 1
./geohash-match --version
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path"
timeout 60 $MPI -n 2 hostname; el "mpirun hostname rc=$?"
for i in 1 2; do timeout 300 ./check_dist_map 2>&1 | tail -2; done; el check_dist_map
timeout 900 ctest -R "dist_map|context|bench_distmap|mpi|gpus" 2>&1 | tail -12; el ctest
CK_RUN_CASE=cuda timeout 400 compute-sanitizer --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -2
tail -3 "$OUT/memcheck.txt"; el memcheck
{
for rep in 1 2; do
  ./geohash-match bench distmap --gpus 2 --log2 28
  timeout 300 $MPI -n 2 ./geohash-match bench distmap --log2 28
done
LD_LIBRARY_PATH=$ML:$ML/openmpi/lib timeout 300 $MPI -n 2 ./geohash-match bench distmap --log2 28 --reps 2
timeout 300 $MPI -n 2 ./geohash-match bench distmap --log2 26 --reps 2; ./geohash-match bench distmap --gpus 2 --log2 26 --reps 2
} 2>&1 | tee "$OUT/distmap.txt"
el bench
