#!/usr/bin/env bash
# Stop 39, call 3 (nvidia-h200-x2): the parts' workers share the machine's threads (threads / N
# each); old and new built again; one and two GPUs on the 2152-frame clip, OpenMP's idle threads
# passive or spinning, the halves as two processes at once, rounds in turns.
exec > >(tee "$OUT/log3.txt") 2>&1
nvidia-smi -L; nproc; date -u
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
if [ ! -x /tmp/bo/geohash-match ]; then
  mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
  for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
  sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
fi
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
if [ ! -x /tmp/bo/geohash-match ]; then
  rm -rf /tmp/old && mkdir /tmp/old && cp -a . /tmp/old/ && (cd /tmp/old && patch -s -R -p1 < .dev/c38/new.patch && echo "old tree ready")
  (cd /tmp/old && timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1); echo "old build rc $?"
fi
rm -rf /tmp/bn; t0=$(date +%s)
timeout 200 bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build_new.txt 2>&1; echo "new build rc $? in $(( $(date +%s) - t0 )) s"
[ -f /tmp/long.mp4 ] || { gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4; }
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match R=.dev/ff/ref050.jpg V=/tmp/long.mp4
tm() { /usr/bin/time -f "%e s wall %U user %S sys" timeout 60 "$@" > /tmp/tm.out 2>/tmp/tm.err; echo "$(tail -1 /tmp/tm.err) found $(grep -c '"found":true' /tmp/tm.out)"; }
for r in 1 2; do
  echo "r$r old 1gpu: $(tm $O --json --backend cuda --jobs 8 $R $V)"
  echo "r$r old 2gpu: $(tm $O --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r new 1gpu: $(tm $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r new 2gpu: $(tm $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r new 2gpu passive: $(OMP_WAIT_POLICY=passive tm $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r new 1gpu passive: $(OMP_WAIT_POLICY=passive tm $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r new 2gpu threads 16: $(tm $N --json --backend cuda --gpus 2 --jobs 16 --threads 16 $R $V)"
  echo "r$r new 2gpu jobs 8: $(tm $N --json --backend cuda --gpus 2 --jobs 8 $R $V)"
  t0=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=0 timeout 60 $N --json --backend cuda --jobs 8 --threads 16 --end 1075 $R $V > /dev/null 2>&1 & p1=$!
  CUDA_VISIBLE_DEVICES=1 timeout 60 $N --json --backend cuda --jobs 8 --threads 16 --start 1076 $R $V > /dev/null 2>&1 & p2=$!
  wait $p1 $p2; echo "r$r halves as 2 processes (16 threads each): $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done
date -u
