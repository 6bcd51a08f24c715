#!/usr/bin/env bash
# s51 call 1 (2 x H200): each MPI rank starts CUDA ahead on its own device (ghm_cli_prestart)
# instead of device 0 - old 8ba8bc6 / new, in turns; CUDA ctests of the new tree (two-level's
# CPU find changed: hash_cuda compares every answer with the CUDA map's).
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
export PMIX_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_mca_base_component_show_load_errors=0
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi"
mkdir -p /tmp/old && tar -xf .dev/c51/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F -DGEOHASH_TESTS=OFF > $OUT/build_old.log 2>&1 &
po=$!
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1 &
pn=$!
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 10000000 /tmp/a10m.ply /tmp/b10m.ply > /dev/null 2>&1 &
pp=$!
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/a160k.ply /tmp/b160k.ply > /dev/null 2>&1
wait $pp
wait $pn || { tail -30 $OUT/build_new.log; exit 1; }
wait $po || { tail -30 $OUT/build_old.log; exit 1; }
el build
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
cat > /tmp/tm.py <<'PY'
import json, subprocess, sys, time
out = sys.argv[1]
t = time.time()
r = subprocess.run(sys.argv[2:], stdout=open(out, "w"), stderr=subprocess.PIPE)
wall = time.time() - t
lines = [json.loads(l) for l in open(out) if l.startswith("{")]
read = [round(l.get("timings_ms", {}).get("read", -1)) for l in (lines[:1] + lines[-1:])]
print(f"rc {r.returncode} wall {wall:.3f} s, {len(lines)} lines, read_ms first/last line {read}", r.stderr.decode()[-200:].replace("\n", " | "))
PY
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
cat /tmp/a10m.ply /tmp/b10m.ply /tmp/a160k.ply /tmp/b160k.ply > /dev/null
{
for case in "256 2 160k" "1024 100 10m" "256 1000 160k"; do
  set -- $case
  for rep in 1 2 3; do
    for v in bo bn; do
      echo "grid $1 sweep $2 $3 --gpus 2 $v, round $rep: $(python3 /tmp/tm.py /tmp/o.g$v /tmp/$v/geohash-match voxel --backend cuda --json --grid $1 --sweep $2 --rotate-b 0,0,30 --gpus 2 /tmp/a$3.ply /tmp/b$3.ply)"
      echo "grid $1 sweep $2 $3 2 MPI ranks $v, round $rep: $(python3 /tmp/tm.py /tmp/o.r$v $MPI -n 2 /tmp/$v/geohash-match voxel --backend cuda --json --grid $1 --sweep $2 --rotate-b 0,0,30 /tmp/a$3.ply /tmp/b$3.ply)"
    done
    for f in o.gbn o.rbo o.rbn; do strip /tmp/$f > /tmp/l.$f; done; strip /tmp/o.gbo > /tmp/l.ref
    cmp -s /tmp/l.ref /tmp/l.o.gbn && cmp -s /tmp/l.ref /tmp/l.o.rbo && cmp -s /tmp/l.ref /tmp/l.o.rbn && echo "  lines identical" || echo "  LINES DIFFER"
  done
done
el sweeps
cd /tmp/bn
timeout 400 ctest -j 8 -R 'hash_cuda|^map\.|mpi|dist_map|context|cuda_without|voxel_sweep|geohash_cuda|two' -LE slow 2>&1 | grep "tests passed\|Failed\|\*\*\*\|Not Run\|Skipped"; el ctest
} 2>&1 | tee $OUT/call1.txt
