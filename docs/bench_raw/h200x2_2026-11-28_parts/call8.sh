#!/usr/bin/env bash
# Stop 39, call 8 (nvidia-h200-x2): the other devices of --gpus started at process start beside
# device 0 (prestart.patch) against the tree without it (5811c5f); 538 and 2152 frames on one and
# two GPUs, rounds in turns; lines compared.
exec > >(tee "$OUT/log8.txt") 2>&1
nvidia-smi -L; date -u
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
rm -rf /tmp/new && mkdir /tmp/new && cp -a . /tmp/new/ && (cd /tmp/new && patch -s -p1 < .dev/c38/prestart.patch && echo "new tree ready")
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1; echo "old build rc $?"
(cd /tmp/new && timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_new.txt 2>&1); echo "new build rc $?"; grep -E "error|warning: " $OUT/build_new.txt | head -5
gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match R=.dev/ff/ref050.jpg
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
tm() { local o=$1; shift; /usr/bin/time -f "%e s wall %U user" timeout 60 "$@" > /tmp/$o.jsonl 2>/tmp/tm.err; echo "$(tail -1 /tmp/tm.err) lines $(wc -l < /tmp/$o.jsonl)"; }
for V in /tmp/long.mp4 .dev/ff/mm1080.mp4; do
  echo "== $V"
  for r in 1 2 3; do
    echo "r$r old 2gpu: $(tm o2 $O --json --backend cuda --gpus 2 --jobs 16 $R $V)"
    echo "r$r new 2gpu: $(tm n2 $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
    echo "r$r old 1gpu: $(tm o1 $O --json --backend cuda --jobs 8 $R $V)"
    echo "r$r new 1gpu: $(tm n1 $N --json --backend cuda --jobs 8 $R $V)"
  done
  for t in o2 n1 n2; do cmp -s <(strip /tmp/o1.jsonl) <(strip /tmp/$t.jsonl) && echo "o1 $t: same lines" || echo "o1 $t: DIFFER"; done
done
echo "image pair old/new: $(tm a $O --backend cuda $R $R) / $(tm b $N --backend cuda $R $R)"
date -u
