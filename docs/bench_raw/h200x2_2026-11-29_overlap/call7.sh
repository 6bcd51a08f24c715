#!/usr/bin/env bash
# s44 call 7: voxel sweeps, c538064 (one device) against the new tree --gpus 1 and --gpus 2
# (steps dealt to two devices; the grid fit on threads), whole-process wall and CPU times,
# lines compared; the CUDA voxel ctests.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
mkdir -p /tmp/old && tar -xf .dev/c44/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 &
pn=$!
[ -x /tmp/bo/geohash-match ] || bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
po=$!
[ -f /tmp/a10m.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 10000000 /tmp/a10m.ply /tmp/b10m.ply
[ -f /tmp/a160k.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/a160k.ply /tmp/b160k.ply
wait $pn || { tail -30 "$OUT/build_new.log"; exit 1; }
wait $po
el build
cat > /tmp/tm.py <<'PY'
import json, resource, subprocess, sys, time
out = sys.argv[1]
t = time.time()
r = subprocess.run(sys.argv[2:], stdout=open(out, "w"), stderr=subprocess.PIPE)
wall = time.time() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
steps = [json.loads(l)["timings_ms"]["step"] for l in open(out)]
print(f"rc {r.returncode} wall {wall:.3f} s cpu {ru.ru_utime + ru.ru_stime:.2f} s, {len(steps)} steps, "
      f"their sum {sum(steps):.0f} ms", r.stderr.decode()[:300])
PY
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
{
for case in "a10m 1024 100" "a160k 256 1000"; do
  set -- $case; a=/tmp/$1.ply; b=/tmp/${1/a/b}.ply
  for rep in 1 2 3; do
    for v in "bo 0" "bn 1" "bn 2"; do
      set -- $case; w=${v% *}; g=${v#* }; opt=""; [ $g = 0 ] || opt="--gpus $g"
      echo "$1 grid $2 sweep $3 $w $opt round $rep: $(python3 /tmp/tm.py /tmp/o.$g /tmp/$w/geohash-match voxel --backend cuda --json --grid $2 --sweep $3 --rotate-b 0,0,30 $opt $a $b)"
    done
    strip /tmp/o.0 > /tmp/l0; strip /tmp/o.1 > /tmp/l1; strip /tmp/o.2 > /tmp/l2
    cmp -s /tmp/l0 /tmp/l1 && cmp -s /tmp/l1 /tmp/l2 && echo "  lines identical (old, 1, 2)" || echo "  LINES DIFFER"
  done
done
} > $OUT/sweep.txt 2>&1
el sweep; cat $OUT/sweep.txt
cd /tmp/bn && timeout 300 ctest -R 'voxel' -LE slow -j6 --timeout 280 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*Failed|Timeout" $OUT/ctest.log | head
