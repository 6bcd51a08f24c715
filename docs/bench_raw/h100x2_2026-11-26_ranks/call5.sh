#!/usr/bin/env bash
# Ranked split map: NCCL exchanges beside the own-piece probes (new) against e7669eb (old), both
# built in this call: tests, sanitizers (threads as ranks over NCCL), bench over 2 MPI ranks.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
exec > >(tee "$OUT/log.txt") 2>&1
O=/tmp/ompi
mkdir -p $O && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
export OPAL_PREFIX=$O/usr PATH=$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
rm -rf /tmp/old && mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old
cp scripts/device_build.sh /tmp/device_build.sh
for t in . /tmp/old; do sed -i "s/ -Werror//" $t/CMakeLists.txt; done
bash /tmp/device_build.sh .dev/debs . /tmp/b5 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON \
    -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi >"$OUT/build.log" 2>&1 || tail -30 "$OUT/build.log"
bash /tmp/device_build.sh .dev/debs /tmp/old /tmp/bo5 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON \
    -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi >"$OUT/build_old.log" 2>&1 || tail -30 "$OUT/build_old.log"
el build
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
cd /tmp/b5 || exit 1
for i in 1 2 3; do timeout 300 ./check_dist_map 2>&1 | tail -1; done; el check_dist_map
timeout 300 ctest -R "dist_map|bench_distmap" 2>&1 | tail -3; el ctest
CK_FORK=no CK_RUN_CASE=cuda timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -1
tail -1 "$OUT/memcheck.txt"
CK_FORK=no CK_RUN_CASE=cuda timeout 300 compute-sanitizer --tool racecheck --report-api-errors no --log-file "$OUT/racecheck.txt" ./check_dist_map 2>&1 | tail -1
tail -1 "$OUT/racecheck.txt"; el sanitizers
{
for rep in 1 2; do
  for v in /tmp/bo5 /tmp/b5; do
    echo "== $v 2 MPI ranks"; timeout 300 $MPI -n 2 $v/geohash-match bench distmap --log2 28
  done
done
echo "== new --gpus 2"; /tmp/b5/geohash-match bench distmap --gpus 2 --log2 28
echo "== new 2 MPI ranks 2^26"; timeout 300 $MPI -n 2 /tmp/b5/geohash-match bench distmap --log2 26
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" | tee "$OUT/distmap.txt"
el bench
