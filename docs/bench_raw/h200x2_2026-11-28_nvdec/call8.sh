#!/usr/bin/env bash
# Stop 40, call 8 (nvidia-h200-x2): cfefc67 (GPU decoders on the device's primary context,
# a stream of their own, 4 frame threads): the video ctests with CUDA, then CPU against GPU
# decoding on one and two GPUs (8608 frames), eight runs of 8 parts for the matcher's stream
# captures, and one GPU on 8 cores; lines compared.
exec > >(tee "$OUT/log8.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bt -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON > $OUT/build_tests.txt 2>&1; echo "build rc $?"; grep -E "error|warning: " $OUT/build_tests.txt | head -5
(cd /tmp/bt && timeout 150 ctest -R "video_jump|video_decode|video_gpus|video_ffmpeg" -j 8 --output-on-failure > $OUT/ctest_video.txt 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|cuda_decode|decode_gpu" $OUT/ctest_video.txt)
gcc -O1 -o /tmp/loop .dev/c40/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4 && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long16.mp4 16
N=/tmp/bt/geohash-match R=.dev/ff/ref050.jpg TS=
run() { # name, video, args...
  local name=$1 V=$2; shift 2
  $TS /usr/bin/time -f "%e s wall %U user %S sys" timeout 60 $N --json --backend cuda --verbose "$@" $R $V > /tmp/$name.jsonl 2>$OUT/$name.err
  echo "$name: $(tail -1 $OUT/$name.err) lines $(wc -l < /tmp/$name.jsonl) $(grep -m1 'parts on' $OUT/$name.err | cut -c1-40)"
}
V=/tmp/long16.mp4
run l16_cpu_g1 $V --gpus 1 --jobs 8
run l16_gpu_g1 $V --gpus 1 --decode gpu
run l16_gpu_g2 $V --gpus 2 --decode gpu
run l16_cpu_g2 $V --gpus 2 --jobs 16
V=/tmp/long.mp4
for r in 1 2 3 4 5 6 7 8; do run x_gpu_g2_$r $V --gpus 2 --decode gpu; done
TS="taskset -c 0-7" run c8_cpu_g1 $V --threads 8 --gpus 1 --jobs 8
TS="taskset -c 0-7" run c8_gpu_g1 $V --threads 8 --gpus 1 --decode gpu
python3 .dev/c40/stages.py /tmp/l16*.jsonl
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
for f in /tmp/x_*.jsonl /tmp/c8_gpu_g1.jsonl; do cmp -s <(strip /tmp/c8_cpu_g1.jsonl) <(strip $f) || echo "$f DIFFERS"; done
for f in /tmp/l16*.jsonl; do cmp -s <(strip /tmp/l16_cpu_g1.jsonl) <(strip $f) || echo "$f DIFFERS"; done; echo compared
grep -l "CUDA error\|capture" $OUT/*.err; tar -C $OUT -czf $OUT/errs.tgz $(cd $OUT && ls *.err) && rm -f $OUT/*.err
