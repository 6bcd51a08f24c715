#!/bin/bash
# s37 call 4 (nvidia-h100-x1): the video mode's workers with clones that copy (fed63b3) against
# 44ef6fd: 40 Megamind frames as YUV4MPEG2 (made with ffmpeg on the development machine,
# frames 40-79, 720x528) against megamind_frame050.png; the lines of 1, 4 and 8 CUDA workers
# and of 1 and 16 CPU workers compared (timings dropped), then old/new in turns, 3 rounds.
set -u
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi -L; nproc
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_new.txt 2>&1 &
p1=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1 &
p2=$!
wait $p1; echo "new build rc $?"; wait $p2; echo "old build rc $?"
R=data/video/megamind_frame050.png; V=.dev/s37/mega40.y4m
strip() { python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); d.pop('timings_ms',None); print(json.dumps(d,sort_keys=True))" $1; }
for b in cuda cpu; do
  for j in 1 4 8 16; do
    [ $b = cuda ] && [ $j = 16 ] && continue
    [ $b = cpu ] && [ $j != 1 ] && [ $j != 16 ] && continue
    /tmp/bn/geohash-match --backend $b --json --jobs $j $R $V > /tmp/v_${b}_$j.json 2>/tmp/err; echo "$b jobs $j rc $? lines $(wc -l < /tmp/v_${b}_$j.json) found $(grep -c '"found":true' /tmp/v_${b}_$j.json)"
    strip /tmp/v_${b}_$j.json > /tmp/s_${b}_$j.txt
  done
done
for f in /tmp/s_cuda_4.txt /tmp/s_cuda_8.txt; do cmp -s /tmp/s_cuda_1.txt $f && echo "$f same as cuda jobs 1" || echo "$f DIFFERS from cuda jobs 1"; done
cmp -s /tmp/s_cpu_1.txt /tmp/s_cpu_16.txt && echo "cpu jobs 16 same as cpu jobs 1" || echo "cpu jobs 16 DIFFERS"
/tmp/bo/geohash-match --backend cuda --json --jobs 4 $R $V > /tmp/o.json; strip /tmp/o.json > /tmp/so.txt; cmp -s /tmp/so.txt /tmp/s_cuda_4.txt && echo "old cuda jobs 4 same as new" || echo "old cuda jobs 4 DIFFERS from new"
ms() { local t0=$(date +%s%N); "$@" > /dev/null 2>&1; echo "$(( ($(date +%s%N) - t0) / 1000000 ))"; }
for r in 1 2 3; do
  for v in bo bn; do echo "round $r $v: cuda (4 workers) $(ms /tmp/$v/geohash-match --backend cuda $R $V) ms, cpu (16 workers) $(ms /tmp/$v/geohash-match --backend cpu $R $V) ms"; done
done
cd $OUT && tar -czf logs.tgz build_new.txt build_old.txt && rm -f build_new.txt build_old.txt
