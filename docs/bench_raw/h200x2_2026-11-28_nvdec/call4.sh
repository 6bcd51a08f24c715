#!/usr/bin/env bash
# Stop 40, call 4 (nvidia-h200-x2): --decode gpu on contexts of its own: frame threads (GHM_GDT), parts per device (GHM_PPD), against CPU decoding on one and
# two GPUs, the tree's video ctests with CUDA (cuda_decode among them), lines compared.
# tl.patch (timeline, GHM_SYNC) and GHM_PPD / GHM_GDT overrides are diagnostics, not the project's.
exec > >(tee "$OUT/log4.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bt -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON > $OUT/build_tests.txt 2>&1; echo "build (tests) rc $?"
(cd /tmp/bt && timeout 300 ctest -R "video" -j 8 --output-on-failure > $OUT/ctest_video.txt 2>&1; echo "ctest video rc $?"; grep -E "tests passed|Failed|cuda_decode|gpu_refused" $OUT/ctest_video.txt)
patch -p1 < .dev/c40/tl.patch > /dev/null && echo patched
sed -i 's/^#define GPU_DECODERS_PER_DEVICE 4/#define GPU_DECODERS_PER_DEVICE (getenv("GHM_PPD") ? atoi(getenv("GHM_PPD")) : 4)/' src/cmd_video.c
sed -i 's/^#define GPU_DECODE_THREADS 1/#define GPU_DECODE_THREADS (getenv("GHM_GDT") ? atoi(getenv("GHM_GDT")) : 1)/' vision/video/video_ffmpeg.c
grep -c GHM_PPD src/cmd_video.c; grep -c GHM_GDT vision/video/video_ffmpeg.c
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build.txt 2>&1; echo "build rc $?"
gcc -O1 -o /tmp/loop .dev/c40/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4 && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long16.mp4 16
N=/tmp/bn/geohash-match R=.dev/ff/ref050.jpg
run() { # name, video, env, args...
  local name=$1 V=$2 e=$3; shift 3
  python3 -c "import time; print('TL %.4f p0 launch' % time.time())" > $OUT/$name.err
  env $e /usr/bin/time -f "%e s wall %U user %S sys" timeout 120 $N --json --backend cuda --verbose "$@" $R $V > /tmp/$name.jsonl 2>>$OUT/$name.err
  echo "$name: $(tail -1 $OUT/$name.err) lines $(wc -l < /tmp/$name.jsonl) $(grep -m1 'parts on' $OUT/$name.err)"
}
V=/tmp/long.mp4
for r in 1 2; do
  run r${r}_cpu_g1 $V X=1 --gpus 1 --jobs 8
  run r${r}_cpu_g2 $V X=1 --gpus 2 --jobs 16
  run r${r}_gpu_g1 $V X=1 --gpus 1 --decode gpu
  run r${r}_gpu_g2 $V X=1 --gpus 2 --decode gpu
  run r${r}_gdt4_g1 $V GHM_GDT=4 --gpus 1 --decode gpu
  run r${r}_gdt4_g2 $V GHM_GDT=4 --gpus 2 --decode gpu
done
for p in 2 6 8; do run ppd${p}_g1 $V GHM_PPD=$p --gpus 1 --decode gpu; run ppd${p}_g2 $V GHM_PPD=$p --gpus 2 --decode gpu; done
run gdt16_g1 $V GHM_GDT=16 --gpus 1 --decode gpu
run gdt4_ppd8_g2 $V "GHM_GDT=4 GHM_PPD=8" --gpus 2 --decode gpu
run gpu_g1_j8 $V X=1 --gpus 1 --decode gpu --jobs 8
run gpu_g2_j16 $V X=1 --gpus 2 --decode gpu --jobs 16
run gpu_g1_j32 $V X=1 --gpus 1 --decode gpu --jobs 32
V=/tmp/long16.mp4
for r in 1 2; do
  run l16_r${r}_cpu_g1 $V X=1 --gpus 1 --jobs 8
  run l16_r${r}_cpu_g2 $V X=1 --gpus 2 --jobs 16
  run l16_r${r}_gpu_g1 $V X=1 --gpus 1 --decode gpu
  run l16_r${r}_gpu_g2 $V X=1 --gpus 2 --decode gpu
done
python3 .dev/c40/tl.py $OUT/r1_*.err $OUT/l16_r1_*.err | sed -E 's/; p[0-9]+ w (ctx|clone)[^;]*//g'
python3 .dev/c40/stages.py /tmp/r1_*.jsonl /tmp/ppd*.jsonl
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
for f in /tmp/r*.jsonl /tmp/ppd*.jsonl /tmp/gdt*.jsonl /tmp/gpu*.jsonl; do cmp -s <(strip /tmp/r1_cpu_g1.jsonl) <(strip $f) || echo "$f DIFFERS"; done
for f in /tmp/l16*.jsonl; do cmp -s <(strip /tmp/l16_r1_cpu_g1.jsonl) <(strip $f) || echo "$f DIFFERS"; done; echo compared
tar -C $OUT -czf $OUT/errs.tgz $(cd $OUT && ls *.err) && rm -f $OUT/*.err
