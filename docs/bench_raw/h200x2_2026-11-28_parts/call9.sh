#!/usr/bin/env bash
# Stop 39, call 9 (nvidia-h200-x2): the final tree's video ctests with CUDA and FFmpeg (the parts
# on two GPUs among them), and its lines on one and two GPUs for the long clip.
exec > >(tee "$OUT/log9.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON > $OUT/build_new.txt 2>&1; echo "build rc $?"
(cd /tmp/bn && timeout 200 ctest -R "video" -j 4 --output-on-failure > $OUT/ctest_video.txt 2>&1; echo "ctest video rc $?"; grep -E "tests passed|Failed|parts" $OUT/ctest_video.txt)
gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4
N=/tmp/bn/geohash-match R=.dev/ff/ref050.jpg
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
for g in 1 2; do /usr/bin/time -f "gpus $g: %e s" timeout 60 $N --json --backend cuda --gpus $g --jobs $((8 * g)) --verbose $R /tmp/long.mp4 > /tmp/g$g.jsonl 2>/tmp/g$g.err; tail -1 /tmp/g$g.err; grep "video:" /tmp/g$g.err | head -2; done
cmp -s <(strip /tmp/g1.jsonl) <(strip /tmp/g2.jsonl) && echo "same lines ($(wc -l < /tmp/g2.jsonl))" || echo DIFFER
