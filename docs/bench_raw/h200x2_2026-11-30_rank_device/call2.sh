#!/usr/bin/env bash
# s51 call 2 (2 x H200): what is left of a rank's slower start: CUDA_VISIBLE_DEVICES one device a rank (a wrapper), OpenMPI with ob1+vader (fast MPI_Init), both
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
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F -DGEOHASH_TESTS=OFF > $OUT/build_new.log 2>&1 &
pn=$!
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 10000000 /tmp/a10m.ply /tmp/b10m.ply > /dev/null 2>&1 &
pp=$!
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/a160k.ply /tmp/b160k.ply > /dev/null 2>&1
wait $pp
wait $pn || { tail -30 $OUT/build_new.log; exit 1; }
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
cat > /tmp/vis.sh <<'SH'
#!/bin/sh
CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK exec "$@"
SH
chmod +x /tmp/vis.sh
cat /tmp/a10m.ply /tmp/b10m.ply /tmp/a160k.ply /tmp/b160k.ply > /dev/null
G=/tmp/bn/geohash-match
{
for case in "256 2 160k" "1024 100 10m"; do
  set -- $case
  A="voxel --backend cuda --json --grid $1 --sweep $2 --rotate-b 0,0,30 /tmp/a$3.ply /tmp/b$3.ply"
  for rep in 1 2 3; do
    echo "grid $1 sweep $2 $3 --gpus 2, round $rep: $(python3 /tmp/tm.py /tmp/o.g $G $A --gpus 2)"
    echo "grid $1 sweep $2 $3 ranks, round $rep: $(python3 /tmp/tm.py /tmp/o.r $MPI -n 2 $G $A)"
    echo "grid $1 sweep $2 $3 ranks, one visible device each, round $rep: $(python3 /tmp/tm.py /tmp/o.v $MPI -n 2 /tmp/vis.sh $G $A)"
    echo "grid $1 sweep $2 $3 ranks, ob1+vader, round $rep: $(OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader python3 /tmp/tm.py /tmp/o.o $MPI -n 2 $G $A)"
    echo "grid $1 sweep $2 $3 ranks, both, round $rep: $(OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader python3 /tmp/tm.py /tmp/o.b $MPI -n 2 /tmp/vis.sh $G $A)"
  done
done
el runs
for i in 1 2 3; do echo "mpirun -n 2 /bin/true: $( { /usr/bin/time -f %e $MPI -n 2 /bin/true; } 2>&1 )"; done
nvcc -o /tmp/cuinit .dev/c49/cuinit.c 2>/dev/null && for i in 1 2 3; do echo "cuinit alone: $(/tmp/cuinit); two at once: $( (/tmp/cuinit & CUDA_VISIBLE_DEVICES=1 /tmp/cuinit; wait) | tr "\n" " ")"; done
} 2>&1 | tee $OUT/call2.txt
