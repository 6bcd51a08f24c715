#!/usr/bin/env bash
# s34 call 5: the ranked map's finds queued too (new) against f618bf9 (bs, = call 4's new);
# both built with MPI and NCCL in this call:
# check_dist_map, memcheck of its CUDA case, then bench distmap 2^28 in one process (--gpus 2)
# and over 2 MPI ranks, old and new interleaved, twice; per-step times of new and old.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
exec > >(tee "$OUT/log.txt") 2>&1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $OUT/env.txt
O=/tmp/ompi
mkdir -p $O && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
export OPAL_PREFIX=$O/usr PATH=$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
rm -rf /tmp/old /tmp/side && mkdir -p /tmp/old /tmp/side && tar -xJf .dev/old-src.tar.xz -C /tmp/old && tar -xJf .dev/side-src.tar.xz -C /tmp/side
cp scripts/device_build.sh /tmp/device_build.sh
for t in . /tmp/old /tmp/side; do sed -i "s/ -Werror//" $t/CMakeLists.txt; done
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi"
bash /tmp/device_build.sh .dev/debs /tmp/side /tmp/bs $F -DGEOHASH_TESTS=OFF >"$OUT/build_side.log" 2>&1 &
p2=$!
bash /tmp/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build.log" 2>&1 || tail -30 "$OUT/build.log"
wait $p2; tail -n 1 "$OUT/build_side.log"
el build
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
cd /tmp/bn || exit 1
for i in 1 2; do timeout 200 ./check_dist_map 2>&1 | tail -1; done; el check_dist_map
timeout 300 ctest -R "dist_map|distmap|faults_cuda" 2>&1 | grep -E "tests passed|Failed|\*\*\*"; el ctest
CK_FORK=no CK_RUN_CASE=cuda timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -1
tail -1 "$OUT/memcheck.txt"; el memcheck
{
for rep in 1 2; do
  for v in bs bn; do
    echo "== $v 2 MPI ranks"; timeout 200 $MPI -n 2 /tmp/$v/geohash-match bench distmap --log2 28
  done
  echo "== bn --gpus 2"; timeout 120 /tmp/bn/geohash-match bench distmap --gpus 2 --log2 28
done
for v in bs bn; do
  echo "== $v 2 MPI ranks, 2^26"; timeout 100 $MPI -n 2 /tmp/$v/geohash-match bench distmap --log2 26
done
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" | tee "$OUT/distmap.txt"
el bench
for v in; do
  echo "== $v --verbose"; timeout 100 /tmp/$v/geohash-match bench distmap --gpus 2 --log2 28 --reps 2 --verbose 2>&1 | grep -E "dist map|split|G keys" | tail -8
done > "$OUT/steps.txt" 2>&1
el steps
