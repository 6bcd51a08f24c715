#!/usr/bin/env bash
# s57 call 4 (one H200): 1e17580 (old) against the branch (new: + the fill's atomics only where
# they lower a state); p = new + host timers (prof.patch) + fill timers (fill_timers2.patch).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o
tar -xf .dev/c57/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
mkdir -p /tmp/srcv && tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcv
patch -d /tmp/srcv -p1 -s < .dev/c57/prof.patch || echo PATCH FAIL prof
patch -d /tmp/srcv -p1 -s < .dev/c57/fill_timers2.patch || echo PATCH FAIL fill
($B /tmp/srcv /tmp/bp $A -DGEOHASH_TESTS=OFF >/tmp/build_p.log 2>&1 || { echo FAIL p; tail -5 /tmp/build_p.log; }) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 2000000 /tmp/A2.ply /tmp/B2.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for v in o n; do
  /tmp/b$v/geohash-match ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --intersect /tmp/B.ply --add $D/kitten.ply --subtract /tmp/B.ply -o /tmp/f_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 300 $D/kitten.ply --add $D/bunny.ply --subtract /tmp/B.ply -o /tmp/g_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 512 /tmp/A2.ply --subtract /tmp/B2.ply --intersect $D/bunny.ply -o /tmp/h_$v.ply > /dev/null 2>&1
  for gr in 128 256 512; do /tmp/b$v/geohash-match voxel --backend cuda --grid $gr --json /tmp/A.ply /tmp/B.ply -o /tmp/v${gr}_$v.ply > /tmp/v${gr}_$v.json 2>&1; done
  /tmp/b$v/geohash-match voxel --backend cuda --grid 1024 --json /tmp/A2.ply /tmp/B2.ply -o /tmp/v1024_$v.ply > /tmp/v1024_$v.json 2>&1
  /tmp/b$v/geohash-match voxel --backend cuda --grid 256 --json $D/bunny.ply $D/kitten.ply -o /tmp/vbk_$v.ply > /tmp/vbk_$v.json 2>&1
done
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
for f in e f g h v128 v256 v512 v1024 vbk; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee /tmp/o/ab.txt
ls -la /tmp/*_n.ply | awk '{print $5, $9}' >> /tmp/o/ab.txt
cmp /tmp/e_cpu.ply /tmp/e_n.ply && echo "CPU PLY = CUDA PLY (edit)" | tee -a /tmp/o/ab.txt
el checks
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (probe %.2f vox %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["voxelize"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for r in 1 2 3 4 5 6; do
  order="o n"; [ $((r % 2)) = 0 ] && order="n o"
  for v in $order; do
    echo "round $r $v: $(/tmp/b$v/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
  done
done | tee -a /tmp/o/ab.txt
el edits
for r in 1 2 3; do GHM_PROF=1 /tmp/bp/geohash-match $EDIT -o /tmp/x.ply > /tmp/o/prof_$r.json 2> /tmp/o/prof_$r.txt; done
grep -c PROF /tmp/o/prof_3.txt; grep FILLSUM /tmp/o/prof_3.json
grep -v FILLSUM /tmp/o/prof_3.json > /tmp/o/prof_3c.json; steps /tmp/o/prof_3c.json
el prof
for r in 1 2; do for v in o n; do
  timeout 120 /tmp/b$v/geohash-match bench voxel --backend cuda --grid 256 --reps 10 > /tmp/o/bv_${v}_$r.txt 2>&1
  timeout 120 /tmp/b$v/geohash-match bench voxel --backend cuda --grid 256 --reps 10 --estimate-normals > /tmp/o/bve_${v}_$r.txt 2>&1
done; done
el bench voxel
cd /tmp/bn
timeout 240 ctest -j 16 -R 'voxel|edit' -LE slow --timeout 230 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/m.ply > /tmp/o/mc_edit.txt 2>&1
el "memcheck edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_edit.txt | tail -1)"
timeout 120 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel --backend cuda --grid 128 /tmp/A.ply /tmp/B.ply -o /tmp/m.ply > /tmp/o/mc_voxel.txt 2>&1
el "memcheck voxel rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_voxel.txt | tail -1)"
ncu --metrics gpu__time_duration.sum --csv /tmp/bn/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --subtract /tmp/B.ply --subtract /tmp/B.ply -o /tmp/y.ply > /tmp/o/ncu_sub.csv 2>/dev/null
python3 - <<'PY' | tee /tmp/o/ncu_sub_summary.txt
import csv
rows = [r for r in csv.reader(open('/tmp/o/ncu_sub.csv')) if len(r) > 10]
h = rows[0]; rows = rows[1:]
iname = h.index('Kernel Name'); ival = h.index('Metric Value'); iid = h.index('ID')
ks = [(int(r[iid]), r[iname].split('(')[0][:50], float(r[ival].replace(',', ''))) for r in rows]
for i, name, ns in ks[int(len(ks) * 0.7):]:
    if ns > 20000: print(i, name, '%.1f us' % (ns / 1e3))
PY
tar czf $OUT/call4.tgz -C /tmp o
el done
