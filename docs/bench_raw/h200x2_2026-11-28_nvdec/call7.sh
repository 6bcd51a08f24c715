#!/usr/bin/env bash
# Stop 40, call 7 (nvidia-h200-x2): --decode gpu with frame threads (GHM_GDT) and parts per device (GHM_PPD), against CPU decoding on one and
# two GPUs, the tree's video ctests with CUDA (cuda_decode among them), lines compared.
# tl.patch (timeline, GHM_SYNC) and GHM_PPD / GHM_GDT overrides are diagnostics, not the project's.
exec > >(tee "$OUT/log7.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
patch -p1 < .dev/c40/tl.patch > /dev/null && echo patched
sed -i 's/^#define GPU_DECODERS_PER_DEVICE 4/#define GPU_DECODERS_PER_DEVICE (getenv("GHM_PPD") ? atoi(getenv("GHM_PPD")) : 4)/' src/cmd_video.c
sed -i 's/^#define GPU_DECODE_THREADS 1/#define GPU_DECODE_THREADS (getenv("GHM_GDT") ? atoi(getenv("GHM_GDT")) : 1)/' vision/video/video_ffmpeg.c
grep -c GHM_PPD src/cmd_video.c; grep -c GHM_GDT vision/video/video_ffmpeg.c
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build.txt 2>&1; echo "build rc $?"
gcc -O1 -o /tmp/loop .dev/c40/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4 && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long16.mp4 16
N=/tmp/bn/geohash-match R=.dev/ff/ref050.jpg TS=
run() { # name, video, env, args...
  local name=$1 V=$2 e=$3; shift 3
  python3 -c "import time; print('TL %.4f p0 launch' % time.time())" > $OUT/$name.err
  env $e $TS /usr/bin/time -f "%e s wall %U user %S sys" timeout 120 $N --json --backend cuda --verbose "$@" $R $V > /tmp/$name.jsonl 2>>$OUT/$name.err
  echo "$name: $(tail -1 $OUT/$name.err) lines $(wc -l < /tmp/$name.jsonl) $(grep -m1 'parts on' $OUT/$name.err)"
}
V=/tmp/long16.mp4
run l16_cpu_g1 $V X=1 --gpus 1 --jobs 8
run l16_cpu_g2 $V X=1 --gpus 2 --jobs 16
run l16_gdt1_g1 $V GHM_GDT=1 --gpus 1 --decode gpu
run l16_gdt4_g1 $V GHM_GDT=4 --gpus 1 --decode gpu
run l16_gdt8_g1 $V GHM_GDT=8 --gpus 1 --decode gpu
run l16_gdt4_ppd2_g1 $V "GHM_GDT=4 GHM_PPD=2" --gpus 1 --decode gpu
run l16_gdt4_ppd6_g1 $V "GHM_GDT=4 GHM_PPD=6" --gpus 1 --decode gpu
run l16_gdt4_g2 $V GHM_GDT=4 --gpus 2 --decode gpu
run l16_gdt4_ppd6_g2 $V "GHM_GDT=4 GHM_PPD=6" --gpus 2 --decode gpu
run l16_gdt4_ppd2_g2 $V "GHM_GDT=4 GHM_PPD=2" --gpus 2 --decode gpu
V=/tmp/long.mp4
TS="taskset -c 0-7" run c8_cpu_g1 $V X=1 --threads 8 --gpus 1 --jobs 8
TS="taskset -c 0-7" run c8_gdt4_g1 $V GHM_GDT=4 --threads 8 --gpus 1 --decode gpu
python3 .dev/c40/tl.py $OUT/l16_cpu_g1.err $OUT/l16_gdt4_g1.err $OUT/l16_gdt4_g2.err | sed -E 's/; p[0-9]+ w (ctx|clone)[^;]*//g'
python3 .dev/c40/stages.py /tmp/l16*.jsonl
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
cmp -s <(strip /tmp/c8_cpu_g1.jsonl) <(strip /tmp/c8_gdt4_g1.jsonl) || echo "c8 DIFFERS"
for f in /tmp/l16*.jsonl; do cmp -s <(strip /tmp/l16_cpu_g1.jsonl) <(strip $f) || echo "$f DIFFERS"; done; echo compared
tar -C $OUT -czf $OUT/errs.tgz $(cd $OUT && ls *.err) && rm -f $OUT/*.err
