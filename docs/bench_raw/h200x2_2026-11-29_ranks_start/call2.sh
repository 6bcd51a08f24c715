#!/usr/bin/env bash
# s49 call 2: where an MPI run's start goes (MPI_Init, CUDA), and MCA choices
# (6c50d14: every rank reads both clouds and fits over every pose) and new (each cloud read by
# one rank and broadcast, the fit's poses dealt), lines compared; the launcher's own cost.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
O=/tmp/ompi
mkdir -p $O /tmp/mpibin && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
ln -sf $O/usr/bin/mpirun.openmpi /tmp/mpibin/mpirun
export OPAL_PREFIX=$O/usr PATH=/tmp/mpibin:$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi"
sed -i "s/ -Werror//" CMakeLists.txt
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
$O/usr/bin/mpicc.openmpi -O2 .dev/c49/mpi_init.c -o /tmp/mi || exit 1
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1 || { tail -20 $OUT/build_new.log; exit 1; }
el build
for rep in 1 2; do
  for env in "" "OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader" "OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none"; do
    echo "== env: $env"
    /usr/bin/time -f "mpirun -n 2 mi: %e s" env $env $MPI -n 2 /tmp/mi 2>&1 | grep -v "pmix_mca\|dlopen\|Perhaps"
    /usr/bin/time -f "mpirun -n 2 geohash-match --version: %e s" env $env $MPI -n 2 /tmp/bn/geohash-match --version 2>&1 | grep -v "pmix_mca\|dlopen\|Perhaps\|geohash-match 0"
  done
  /usr/bin/time -f "plain geohash-match --version: %e s" /tmp/bn/geohash-match --version
  /usr/bin/time -f "plain geohash-match --version, CUDA hidden: %e s" env CUDA_VISIBLE_DEVICES= /tmp/bn/geohash-match --version
done
ompi_info 2>/dev/null | grep -i "thread\|btl:\|pml:" | head -20
