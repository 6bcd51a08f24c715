#!/usr/bin/env bash
# Stop 39, call 1 (nvidia-h200-x2): old (6379c2d) and new trees; the new one's video ctests (the
# parts on two GPUs, the key-frame entry); 1080p H.264 on one and two GPUs, 538 and 2152 frames,
# rounds in turns; outputs of --gpus 1 and 2 compared.
exec > >(tee "$OUT/log1.txt") 2>&1
nvidia-smi -L; nproc; date -u
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu; mkdir -p $L
tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
rm -rf /tmp/old && mkdir /tmp/old && cp -a . /tmp/old/ && (cd /tmp/old && patch -s -R -p1 < .dev/c38/new.patch && echo "old tree ready") || echo "reverse patch FAILED"
t0=$(date +%s)
timeout 400 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON > $OUT/build_new.txt 2>&1; echo "new build rc $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
(cd /tmp/old && timeout 300 bash scripts/device_build.sh .dev/debs . /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1); echo "old build rc $? in $(( $(date +%s) - t0 )) s"
tail -3 $OUT/build_new.txt
gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4 && ls -la /tmp/long.mp4
(cd /tmp/bn && timeout 300 ctest -R "video" --output-on-failure > $OUT/ctest_video.txt 2>&1; echo "ctest video rc $?"; grep -E "tests passed|Failed|Skipped" $OUT/ctest_video.txt)
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match R=.dev/ff/ref050.jpg
ms() { local tag=$1; shift; local t0=$(date +%s%N); timeout 60 "$@" > /tmp/run.$tag 2>/tmp/err.$tag; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc found $(grep -c '"found":true' /tmp/run.$tag) lines $(wc -l < /tmp/run.$tag)"; }
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
for V in .dev/ff/mm1080.mp4 /tmp/long.mp4; do
  echo "== $V"
  for r in 1 2 3; do
    echo "r$r old 1gpu: $(ms o1 $O --json --backend cuda --jobs 8 $R $V)"
    echo "r$r old 2gpu: $(ms o2 $O --json --backend cuda --gpus 2 --jobs 16 $R $V)"
    echo "r$r new 1gpu: $(ms n1 $N --json --backend cuda --jobs 8 $R $V)"
    echo "r$r new 2gpu: $(ms n2 $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  done
  for t in o2 n1 n2; do cmp -s <(strip /tmp/run.o1) <(strip /tmp/run.$t) && echo "same lines: o1 $t" || echo "DIFFER: o1 $t"; done
  head -c 300 /tmp/err.n2
done
echo "verbose: $($N --json --backend cuda --gpus 2 --jobs 16 --verbose $R /tmp/long.mp4 2>&1 >/dev/null | grep video:)"
for r in 1 2; do
  echo "r$r new 2gpu jobs8: $(ms n3 $N --json --backend cuda --gpus 2 --jobs 8 $R /tmp/long.mp4)"
  echo "r$r new 2gpu threads 32: $(ms n4 $N --json --backend cuda --gpus 2 --jobs 16 --threads 32 $R /tmp/long.mp4)"
done
date -u
