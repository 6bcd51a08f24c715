#!/usr/bin/env bash
# The split map's stable multisplit (answers gathered back, no positions array) against the
# previous one (old = 1e18a75): tests, sanitizers, bench distmap in one process and over 2 MPI
# ranks, old and new interleaved in this call.
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
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old
for t in . /tmp/old; do
  sed -i "s/ -Werror//" $t/CMakeLists.txt
  cp scripts/device_build.sh /tmp/device_build.sh
done
bash /tmp/device_build.sh .dev/debs . /tmp/b -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON \
    -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi >"$OUT/build.log" 2>&1 || tail -30 "$OUT/build.log"
bash /tmp/device_build.sh .dev/debs /tmp/old /tmp/bo -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON \
    -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi >"$OUT/build_old.log" 2>&1 || tail -30 "$OUT/build_old.log"
el build
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
cd /tmp/b || exit 1
for i in 1 2 3; do timeout 300 ./check_dist_map 2>&1 | tail -1; done; el check_dist_map
timeout 600 ctest -R "dist_map|bench_distmap|context|map\." 2>&1 | tail -6; el ctest
CK_FORK=no CK_RUN_CASE=cuda timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -1
tail -2 "$OUT/memcheck.txt"
CK_FORK=no CK_RUN_CASE=cuda timeout 300 compute-sanitizer --tool racecheck --report-api-errors no --log-file "$OUT/racecheck.txt" ./check_dist_map 2>&1 | tail -1
tail -2 "$OUT/racecheck.txt"; el sanitizers
{
for rep in 1 2; do
  for v in /tmp/bo /tmp/b; do
    echo "== $v --gpus 2"; $v/geohash-match bench distmap --gpus 2 --log2 28
    echo "== $v 2 MPI ranks"; timeout 300 $MPI -n 2 $v/geohash-match bench distmap --log2 28
  done
done
for v in /tmp/bo /tmp/b; do
  echo "== $v --gpus 2 --verbose 2"
  $v/geohash-match bench distmap --gpus 2 --log2 28 --reps 2 --verbose 2 2>&1 | grep -E "dist map|split|one map"
done
echo "== new 2^26"; /tmp/b/geohash-match bench distmap --gpus 2 --log2 26
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" | tee "$OUT/distmap.txt"
el bench
