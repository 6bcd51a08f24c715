#!/usr/bin/env bash
# s63 call 1 (one H200): GhmDynmap's insert and erase kernels take a large batch in bucket order
# (a CUB sort of the batch's bucket numbers) against bc863ce; ctest, memcheck, racecheck; the
# dynmap bench in turns; a voxel edit's steps (which insert and erase through the table).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o && tar -xf .dev/c63/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
(cd /tmp/bn && timeout 200 ctest -j 16 -R 'dynmap|faults_cuda|voxel_edit|voxel_cuda|cli.bench_dynmap' -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 120 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
timeout 100 compute-sanitizer --tool racecheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for v in o n; do /tmp/b$v/geohash-match $E --backend cuda -o /tmp/e_$v.ply > /tmp/e_$v.json 2>&1 || echo "rc $? e $v"; done
cmp /tmp/e_o.ply /tmp/e_n.ply && echo "PLYs o = n: e"
for round in 1 2; do
  for b in o n; do
    timeout 90 /tmp/b$b/geohash-match bench dynmap --backend cuda --reps 3 > /tmp/o/dyn_${b}_$round.txt 2>&1 || echo "rc $? $b"
    /tmp/b$b/geohash-match $E --backend cuda -o /tmp/x.ply > /tmp/x.json
    echo "round $round $b e: $(python3 -c 'import json,sys; print(" | ".join("%.2f dyn %s" % (s["timings_ms"]["step"] - s["timings_ms"]["upload"], {k: round(v, 3) for k, v in s["timings_ms"].items() if k not in ("step", "upload")}) for s in json.load(open(sys.argv[1]))["steps"][1:4]))' /tmp/x.json)" >> /tmp/o/edit.txt
  done
  el round $round
done
cd /tmp/o
for b in o n; do
  printf "%-2s ins " $b; for r in 1 2; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $9}'; printf "| "; done
  printf " erase "; for r in 1 2; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $10}'; printf "| "; done
  printf " find50 "; for r in 1 2; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $7}'; printf "| "; done
  printf " fill "; sed -n 3,10p dyn_${b}_1.txt | awk '{printf "%s ", $5}'; echo
done | tee /tmp/o/table.txt
for b in o n; do echo "== $b sizes ins"; sed -n '/item sizes/,$p' dyn_${b}_1.txt | sed -n 3,22p | awk '{print $1,$2,$5}' | tr '\n' ';'; echo; done
cat /tmp/o/edit.txt
timeout 120 ncu --metrics gpu__time_duration.sum -c 60 /tmp/bn/geohash-match bench dynmap --backend cuda --reps 1 --fill-log2 25 --ops-log2 23 > /tmp/o/ncu_n.txt 2>&1
timeout 120 ncu --metrics gpu__time_duration.sum -c 60 /tmp/bo/geohash-match bench dynmap --backend cuda --reps 1 --fill-log2 25 --ops-log2 23 > /tmp/o/ncu_o.txt 2>&1
for v in o n; do echo "== ncu $v"; grep -E "^  [A-Za-z_].*\(|gpu__time_duration" /tmp/o/ncu_$v.txt | sed 's/(.*//' | paste - - | awk '{print $1, $NF}' | tr '\n' ';'; echo; done
tar czf $OUT/call1.tgz -C /tmp o
el done
