#!/usr/bin/env bash
# s57 call 5 (one H200): old 1e17580 / new (the fill's read-before-atomic on the threads' levels
# only); the edit under OpenMP wait policies; host timers (p: new + prof2.patch).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o /tmp/srcv
tar -xf .dev/c57/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcv
patch -d /tmp/srcv -p1 -s < .dev/c57/prof2.patch || echo PATCH FAIL prof
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/srcv /tmp/bp $A >/tmp/build_p.log 2>&1 || { echo FAIL p; tail -5 /tmp/build_p.log; }) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for v in o n; do
  /tmp/b$v/geohash-match ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1
  for gr in 256; do /tmp/b$v/geohash-match voxel --backend cuda --grid $gr --json /tmp/A.ply /tmp/B.ply -o /tmp/v${gr}_$v.ply > /tmp/v${gr}_$v.json 2>&1; done
  /tmp/b$v/geohash-match voxel --backend cuda --grid 256 --json $D/bunny.ply $D/kitten.ply -o /tmp/vbk_$v.ply > /tmp/vbk_$v.json 2>&1
done
for f in e v256 vbk; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee /tmp/o/ab.txt
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (probe %.2f vox %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["voxelize"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for r in 1 2 3 4; do
  for v in o n na ns n4; do
    b=${v:0:1}; env=""
    case $v in na) env="OMP_WAIT_POLICY=active";; ns) env="GOMP_SPINCOUNT=30000";; esac
    th=""; [ $v = n4 ] && th="--threads 4"
    echo "round $r $v: $(env $env /tmp/b$b/geohash-match $EDIT $th -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
  done
done | tee -a /tmp/o/ab.txt
el edits
for pol in passive active; do
  OMP_WAIT_POLICY=$pol GHM_PROF=1 /tmp/bp/geohash-match $EDIT -o /tmp/x.ply > /tmp/o/prof_$pol.json 2> /tmp/o/prof_$pol.txt
done
el prof
for r in 1 2; do for v in o n; do
  timeout 120 /tmp/b$v/geohash-match bench voxel --backend cuda --grid 256 --reps 10 > /tmp/o/bv_${v}_$r.txt 2>&1
done; done
for f in /tmp/o/bv_*; do echo "$f $(sed -n 3,5p $f | awk '{printf "%s %s | ", $14, $17}')"; done | tee -a /tmp/o/ab.txt
el bench voxel
tar czf $OUT/call5.tgz -C /tmp o
el done
