#!/usr/bin/env bash
# Stop 39, call 6 (nvidia-h200-x2): the committed tree against 6379c2d: its CUDA video ctests;
# a rank's second half alone (what one of two machines does under mpirun: the old reader decodes
# the first half too), the whole clip on one and on two GPUs; rounds in turns; lines compared.
exec > >(tee "$OUT/log6.txt") 2>&1
nvidia-smi -L; nproc; date -u
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
if [ ! -f $L/libavcodec.so ]; then
  mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
  for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
  sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
fi
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
rm -rf /tmp/old /tmp/bo /tmp/bn && mkdir /tmp/old && cp -a . /tmp/old/ && (cd /tmp/old && patch -s -R -p1 < .dev/c38/new.patch && echo "old tree ready")
(cd /tmp/old && timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1); echo "old build rc $?"
timeout 300 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON > $OUT/build_new.txt 2>&1; echo "new build rc $?"
(cd /tmp/bn && timeout 300 ctest -R "video" --output-on-failure > $OUT/ctest_video.txt 2>&1; echo "ctest video rc $?"; grep -E "tests passed|Failed|parts" $OUT/ctest_video.txt)
[ -f /tmp/long.mp4 ] || { gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4; }
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match R=.dev/ff/ref050.jpg V=/tmp/long.mp4
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
tm() { local o=$1; shift; /usr/bin/time -f "%e s wall %U user %S sys" timeout 60 "$@" > /tmp/$o.jsonl 2>/tmp/tm.err; echo "$(tail -1 /tmp/tm.err) lines $(wc -l < /tmp/$o.jsonl)"; }
for r in 1 2 3; do
  echo "r$r old half B: $(tm oB $O --json --backend cuda --jobs 8 --start 1076 $R $V)"
  echo "r$r new half B: $(tm nB $N --json --backend cuda --jobs 8 --start 1076 $R $V)"
  echo "r$r old 1gpu: $(tm o1 $O --json --backend cuda --jobs 8 $R $V)"
  echo "r$r new 1gpu: $(tm n1 $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r old 2gpu: $(tm o2 $O --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r new 2gpu: $(tm n2 $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
done
cmp -s <(strip /tmp/oB.jsonl) <(strip /tmp/nB.jsonl) && echo "half B: same lines" || echo "half B: DIFFER"
for t in n1 o2 n2; do cmp -s <(strip /tmp/o1.jsonl) <(strip /tmp/$t.jsonl) && echo "o1 $t: same lines" || echo "o1 $t: DIFFER"; done
date -u
