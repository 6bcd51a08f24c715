#!/usr/bin/env bash
# One call on the two-GPU kind: FFmpeg carried as in ../h200_2026-11-28_decode (README.txt
# there), the tree (efa1916) built with FFmpeg, then the same 1080p H.264 clip on one GPU and on
# two, in turns; with OMP_WAIT_POLICY=passive too (are the decoder's threads short of cores?).
exec > >(tee "$OUT/log3.txt") 2>&1
nvidia-smi -L; nproc
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu; mkdir -p $L
tar -C $P -xJf .dev/ff/ffdev.tar.xz
tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
t0=$(date +%s)
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build3.txt 2>&1; echo "build rc $? in $(( $(date +%s) - t0 )) s"
N=/tmp/bn/geohash-match V=.dev/ff/mm1080.mp4 R=.dev/ff/ref050.jpg
ms() { local t0=$(date +%s%N); timeout 60 "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc $(grep -c '"found":true' /tmp/run.out) found"; }
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//'; }
timeout 60 $N --json --backend cuda --jobs 8 $R $V 2>/dev/null | strip > /tmp/l1.txt
timeout 60 $N --json --backend cuda --gpus 2 --jobs 16 $R $V 2>/dev/null | strip > /tmp/l2.txt
cmp /tmp/l1.txt /tmp/l2.txt && echo "one and two GPUs: lines identical, $(wc -l < /tmp/l1.txt)"
for r in 1 2 3; do
  echo "r$r 1gpu j8: $(ms $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r 2gpu j16: $(ms $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r 1gpu j8 t32: $(ms $N --json --backend cuda --jobs 8 --threads 32 $R $V)"
  echo "r$r 2gpu j16 t32: $(ms $N --json --backend cuda --gpus 2 --jobs 16 --threads 32 $R $V)"
  echo "r$r 1gpu j8 passive: $(OMP_WAIT_POLICY=passive ms $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r 2gpu j16 passive: $(OMP_WAIT_POLICY=passive ms $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r 2gpu j16 t32 passive: $(OMP_WAIT_POLICY=passive ms $N --json --backend cuda --gpus 2 --jobs 16 --threads 32 $R $V)"
done
for g in 1 2; do timeout 60 $N --verbose --json --backend cuda --gpus $g --jobs $((8 * g)) $R $V 2>&1 >/dev/null | tail -1; done
timeout 120 $N bench video --backend cuda --video $V --reference $R --frames 40 2>&1 | tail -5
OMP_WAIT_POLICY=passive timeout 120 $N bench video --backend cuda --video $V --reference $R --frames 40 --threads 32 2>&1 | tail -5
