#!/usr/bin/env bash
# s48 call 3 (2 x H200): which part of call 2 made the ranks' finds slower than call 1: the
# variant build (call3_variants.py) takes GHM_W_SERIAL (the fill on the main stream, the own
# probe from the window, as call 1) and GHM_W_NCCLBUILD (the build by NCCL, as call 1).
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
mkdir -p /tmp/vt && tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/vt && python3 call3_variants.py /tmp/vt
bash scripts/device_build.sh .dev/debs /tmp/vt /tmp/bv $F > $OUT/build_v.log 2>&1 || { tail -20 $OUT/build_v.log; exit 1; }
el build
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
{
for rep in 1 2; do
  echo "== one process --gpus 2, round $rep"; timeout 90 /tmp/bv/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split map"
  for v in "" "-x GHM_W_SERIAL=1" "-x GHM_W_NCCLBUILD=1" "-x GHM_W_SERIAL=1 -x GHM_W_NCCLBUILD=1"; do
    echo "== 2 ranks [$v], round $rep"; timeout 90 $MPI $v -n 2 /tmp/bv/geohash-match bench distmap --log2 28 | grep -E "split map  "
  done
done
} 2>&1 | grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" > "$OUT/variants.txt"
el variants; cat $OUT/variants.txt
