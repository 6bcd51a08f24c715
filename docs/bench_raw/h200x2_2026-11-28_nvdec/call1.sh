#!/usr/bin/env bash
# Stop 40, call 1 (nvidia-h200-x2): a timeline of the video mode on one GPU and in two parts
# (tl.patch: stamps to stderr, not for the project), and the CUDA sync mode (GHM_SYNC in the
# patch: spin, yield, blocking) as the cause of the host's CPU use per frame.
exec > >(tee "$OUT/log1.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
nproc; nvidia-smi -L; lscpu | grep -E "Model name|Thread|Core|Socket"
sed -i "s/ -Werror//" CMakeLists.txt
patch -p1 < .dev/c38/tl.patch > /dev/null && echo patched
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build.txt 2>&1; echo "build rc $?"
gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4
N=/tmp/bn/geohash-match R=.dev/ff/ref050.jpg V=/tmp/long.mp4
run() { # name, env, args...
  local name=$1 e=$2; shift 2
  python3 -c "import time; print('TL %.4f p0 launch' % time.time())" > $OUT/$name.err
  env $e /usr/bin/time -f "%e s wall %U user %S sys" timeout 60 $N --json --backend cuda "$@" $R $V > /tmp/$name.jsonl 2>>$OUT/$name.err
  echo "$name: $(tail -1 $OUT/$name.err) lines $(wc -l < /tmp/$name.jsonl)"
}
for r in 1 2; do
  for s in spin block yield; do
    run r${r}_${s}_g1 GHM_SYNC=$s --gpus 1 --jobs 8
    run r${r}_${s}_g2 GHM_SYNC=$s --gpus 2 --jobs 16
  done
  run r${r}_def_g1 X=1 --gpus 1 --jobs 8
  run r${r}_def_g2 X=1 --gpus 2 --jobs 16
done
python3 .dev/c40/tl.py $OUT/r1_*.err $OUT/r2_*.err
python3 .dev/c38/stages.py /tmp/r2_*.jsonl
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
for f in /tmp/r*_g*.jsonl; do cmp -s <(strip /tmp/r1_def_g1.jsonl) <(strip $f) || echo "$f DIFFERS"; done; echo compared
