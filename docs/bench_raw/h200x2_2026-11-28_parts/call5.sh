#!/usr/bin/env bash
# Stop 39, call 5 (nvidia-h200-x2): the per-frame stage times (the matcher's own timings) of one
# GPU, two parts on two GPUs, and one process per half, with CPU time; what grows when two run.
exec > >(tee "$OUT/log5.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_new.txt 2>&1; echo "new build rc $?"
gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4
N=/tmp/bn/geohash-match R=.dev/ff/ref050.jpg V=/tmp/long.mp4
tm() { local o=$1; shift; /usr/bin/time -f "%e s wall %U user %S sys" timeout 60 "$@" > $OUT/$o.jsonl 2>/tmp/tm.err; echo "$(tail -1 /tmp/tm.err)"; }
for r in 1 2; do
  echo "r$r 1gpu: $(tm g1 $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r 2gpu: $(tm g2 $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r 1gpu step 100000: $(tm d1 $N --json --backend cuda --jobs 8 --step 100000 $R $V)"
  echo "r$r 1gpu jobs 4: $(tm g1j4 $N --json --backend cuda --jobs 4 $R $V)"
  echo "r$r 1gpu jobs 16: $(tm g1j16 $N --json --backend cuda --jobs 16 $R $V)"
  echo "r$r 2gpu jobs 32: $(tm g2j32 $N --json --backend cuda --gpus 2 --jobs 32 $R $V)"
  t0=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=0 timeout 60 $N --json --backend cuda --jobs 8 --end 1075 $R $V > $OUT/hA.jsonl 2>/dev/null & p1=$!
  CUDA_VISIBLE_DEVICES=1 timeout 60 $N --json --backend cuda --jobs 8 --start 1076 $R $V > $OUT/hB.jsonl 2>/dev/null & p2=$!
  wait $p1 $p2; echo "r$r halves as 2 processes: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  echo "r$r half A alone: $(tm hA1 $N --json --backend cuda --jobs 8 --end 1075 $R $V)"
done
python3 .dev/c38/stages.py $OUT/g1.jsonl $OUT/g2.jsonl $OUT/g1j4.jsonl $OUT/g1j16.jsonl $OUT/g2j32.jsonl $OUT/hA.jsonl $OUT/hB.jsonl $OUT/hA1.jsonl
rm -f $OUT/*.jsonl
