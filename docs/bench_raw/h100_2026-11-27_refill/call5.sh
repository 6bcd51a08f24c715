#!/usr/bin/env bash
# s33 call 5: the committed form (refilling warps for grouped tables only, 6 blocks an SM)
# against HEAD (old), 2^20..2^26, two rounds in turns; the CUDA suites, memcheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs5; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
if [ ! -x /tmp/bo/geohash-match ]; then mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >$L/build_old.log 2>&1 & fi
rm -rf /tmp/b
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >$L/build.log 2>&1 || { tail -40 $L/build.log; exit 1; }
wait
el build
B="bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 20 --max-log2 26 --reps 3"
for r in 1 2; do for v in o n; do
  case $v in o) bin=/tmp/bo;; n) bin=/tmp/b;; esac
  $bin/geohash-match $B > $L/bench_${v}_$r.txt 2>&1
done; done
el bench
python3 - <<'PY' | tee $OUT/insert_ab.txt
import re,glob
rows={}
for f in sorted(glob.glob('/tmp/logs5/bench_*_*.txt')):
    v,r=f.split('_')[-2],f.split('_')[-1][:-4]
    for line in open(f):
        m=re.match(r'map\s+bucketed\s+load (\S+)\s+2\^(\d+)\s+insert\s+(\S+)\s+find\s+(\S+)\s+absent\s+(\S+)',line)
        if m: rows.setdefault((int(m[2]),m[1]),{})[v+r]=(float(m[3])/1000,float(m[4])/1000,float(m[5])/1000)
print("log2 load | insert old r1 r2 | new r1 r2 || find old | new || absent old | new")
for k in sorted(rows):
    d=rows[k]; g=lambda v,i:" ".join("%.2f"%d[v+r][i] if v+r in d else "-" for r in "12")
    print(k[0],k[1],"|",g('o',0),"|",g('n',0),"||",g('o',1),"|",g('n',1),"||",g('o',2),"|",g('n',2))
PY
cd /tmp/b
timeout 280 ctest -j8 -R 'hash_cuda|^map\.|faults_cuda|^index|^set\.|multimap|dist_map|geohash_cuda|voxel_cuda|cli\.bench' -LE slow --timeout 270 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed" $OUT/ctest.log | head
CK_FORK=no CK_RUN_CASE=cuda ./check_hash_cuda 2>&1 | grep -E "grouped map|%|Checks" | tee -a $OUT/summary.txt
GHM_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda > $L/memcheck.log 2>&1
el "memcheck rc $? $(grep -h 'ERROR SUMMARY' $L/memcheck.log | tail -1)" | tee -a $OUT/summary.txt
tar czf $OUT/logs.tgz -C /tmp logs5
el done
