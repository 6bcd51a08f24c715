#!/usr/bin/env bash
# Stop 39, call 7 (nvidia-h200-x2): where the extra CPU of a CUDA video run goes: decoding every
# frame of the long clip and matching one, on each backend, with 1 and 8 jobs, OpenMP passive,
# against FFmpeg alone; then the whole clip with OpenMP passive.
exec > >(tee "$OUT/log7.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_new.txt 2>&1; echo "new build rc $?"
gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4
gcc -O2 -o /tmp/nvp docs/bench_raw/h200x2_2026-11-28_decode/nvdec_probe.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil
N=/tmp/bn/geohash-match R=.dev/ff/ref050.jpg V=/tmp/long.mp4
tm() { /usr/bin/time -f "%e s wall %U user %S sys" timeout 60 "$@" 2>&1 >/dev/null | tail -1; }
for r in 1 2; do
  echo "r$r ffmpeg alone: $(tm /tmp/nvp $V '' 16)"
  echo "r$r cpu decode-all: $(tm $N --json --backend cpu --step 100000 $R $V)"
  echo "r$r cuda jobs 1 decode-all: $(tm $N --json --backend cuda --jobs 1 --step 100000 $R $V)"
  echo "r$r cuda jobs 8 decode-all: $(tm $N --json --backend cuda --jobs 8 --step 100000 $R $V)"
  echo "r$r cuda jobs 8 decode-all passive: $(OMP_WAIT_POLICY=passive tm $N --json --backend cuda --jobs 8 --step 100000 $R $V)"
  echo "r$r cuda jobs 8 decode-all OMP 2: $(OMP_NUM_THREADS=2 tm $N --json --backend cuda --jobs 8 --step 100000 $R $V)"
  echo "r$r cuda one image: $(tm $N --json --backend cuda $R $R)"
  echo "r$r cuda jobs 8 all: $(tm $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r cuda jobs 8 all passive: $(OMP_WAIT_POLICY=passive tm $N --json --backend cuda --jobs 8 $R $V)"
done
