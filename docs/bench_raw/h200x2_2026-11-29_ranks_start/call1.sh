#!/usr/bin/env bash
# s49 call 1 (2 x H200): voxel sweeps as 2 MPI ranks against one process --gpus 2, old tree
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
mkdir -p /tmp/old && tar -xf .dev/c49/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F > $OUT/build_old.log 2>&1 &
po=$!
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1 &
pn=$!
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 10000000 /tmp/a10m.ply /tmp/b10m.ply > /dev/null 2>&1 &
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/a160k.ply /tmp/b160k.ply > /dev/null 2>&1
wait $pn || { tail -30 $OUT/build_new.log; exit 1; }
wait $po || { tail -30 $OUT/build_old.log; exit 1; }
el build
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
wait
cat > /tmp/tm.py <<'PY'
import json, subprocess, sys, time
out = sys.argv[1]
t = time.time()
r = subprocess.run(sys.argv[2:], stdout=open(out, "w"), stderr=subprocess.PIPE)
wall = time.time() - t
n = sum(1 for l in open(out) if l.startswith("{"))
err = [l for l in r.stderr.decode().splitlines() if not any(w in l for w in ("pmix_mca_base", "dlopen error", "Perhaps a missing"))]
print(f"rc {r.returncode} wall {wall:.3f} s, {n} lines", " | ".join(err)[-200:])
PY
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
{
for case in "a10m 1024 100" "a160k 256 1000"; do
  set -- $case; a=/tmp/$1.ply; b=/tmp/${1/a/b}.ply
  for rep in 1 2 3; do
    echo "$1 grid $2 sweep $3 --gpus 2, round $rep: $(python3 /tmp/tm.py /tmp/o.g /tmp/bn/geohash-match voxel --backend cuda --json --grid $2 --sweep $3 --rotate-b 0,0,30 --gpus 2 $a $b)"
    for v in bo bn; do
      echo "$1 grid $2 sweep $3 2 MPI ranks $v, round $rep: $(python3 /tmp/tm.py /tmp/o.r$v $MPI -n 2 /tmp/$v/geohash-match voxel --backend cuda --json --grid $2 --sweep $3 --rotate-b 0,0,30 $a $b)"
    done
    strip /tmp/o.g > /tmp/lg; strip /tmp/o.rbo > /tmp/lo; strip /tmp/o.rbn > /tmp/ln
    cmp -s /tmp/lg /tmp/lo && cmp -s /tmp/lg /tmp/ln && echo "  lines identical" || echo "  LINES DIFFER"
  done
  for f in o.g o.rbo o.rbn; do echo "$f timings of the first line and the middle one:"; grep -o '"timings_ms":{[^}]*}' /tmp/$f | sed -n "1p;$(( $3 / 2 + 1 ))p"; done
done
for rep in 1 2 3; do
  python3 - <<'PY'
import subprocess, time
for cmd in (["true"], ["/tmp/bn/geohash-match", "--version"]):
    t = time.time(); subprocess.run("mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -n 2 ".split() + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print("launch", " ".join(cmd), f"{time.time() - t:.3f} s")
PY
done
} > $OUT/sweep.txt 2>&1
el sweep; cat $OUT/sweep.txt
