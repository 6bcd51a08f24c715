#!/usr/bin/env bash
# s33 call 4: refilling warps with chunks sized to the batch (v1), the same capped at 6 blocks
# an SM (v6), against HEAD (old); 2^20..2^26, two rounds in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs4; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
if [ ! -x /tmp/bo/geohash-match ]; then mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >$L/build_old.log 2>&1 & fi
bash scripts/device_build.sh .dev/debs . /tmp/b6 -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DINSERT_MIN_BLOCKS=6 >$L/build_v6.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >$L/build.log 2>&1 || { tail -40 $L/build.log; exit 1; }
wait
el build
B="bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 20 --max-log2 26 --reps 3"
for r in 1 2; do
  for v in o 1 6; do
    case $v in o) bin=/tmp/bo;; 1) bin=/tmp/b;; 6) bin=/tmp/b6;; esac
    $bin/geohash-match $B > $L/bench_${v}_$r.txt 2>&1
  done
done
el bench
python3 - <<'PY' | tee $OUT/insert_ab.txt
import re,glob
rows={}
for f in sorted(glob.glob('/tmp/logs4/bench_*_*.txt')):
    v,r=f.split('_')[-2],f.split('_')[-1][:-4]
    for line in open(f):
        m=re.match(r'map\s+bucketed\s+load (\S+)\s+2\^(\d+)\s+insert\s+(\S+)\s+find\s+(\S+)\s+absent\s+(\S+)',line)
        if m: rows.setdefault((int(m[2]),m[1]),{})[v+r]=(float(m[3])/1000,float(m[4])/1000)
print("log2 load | insert old r1 r2 | v1 r1 r2 | v6 r1 r2 || find old | v1 | v6")
for k in sorted(rows):
    d=rows[k]; g=lambda v,i:" ".join("%.2f"%d[v+r][i] if v+r in d else "-" for r in "12")
    print(k[0],k[1],"|",g('o',0),"|",g('1',0),"|",g('6',0),"||",g('o',1),"|",g('1',1),"|",g('6',1))
PY
tar czf $OUT/logs.tgz -C /tmp logs4
el done
