#!/usr/bin/env bash
# s44 call 3: the overlapped build (copy engines) in one process and over 2 MPI ranks (NCCL),
# against c538064, both built with MPI and NCCL; check_hash_cuda (build_after), check_dist_map
# (ranked NCCL cases too), memcheck of dist_map's CUDA case.
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
mkdir -p /tmp/old && tar -xf .dev/c44/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 &
pn=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
po=$!
wait $pn || { tail -30 "$OUT/build_new.log"; exit 1; }
wait $po || { tail -30 "$OUT/build_old.log"; exit 1; }
el build
grep -i "nccl\|mpi" $OUT/build_new.log | head -5
cd /tmp/bn || exit 1
timeout 150 ./check_dist_map 2>&1 | tail -2; el check_dist_map
timeout 250 ./check_hash_cuda 2>&1 | tail -3; el check_hash_cuda
CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -1
tail -1 $OUT/memcheck.txt; el memcheck
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
{
for rep in 1 2; do
  for b in bo bn; do
    echo "== $b one process --gpus 2, round $rep"; timeout 90 /tmp/$b/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
    echo "== $b 2 MPI ranks, round $rep"; timeout 90 $MPI -n 2 /tmp/$b/geohash-match bench distmap --log2 28 | grep -E "split|one map"
  done
done
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" > "$OUT/distmap.txt"
el distmap; cat $OUT/distmap.txt
