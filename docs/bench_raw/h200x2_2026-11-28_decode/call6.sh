#!/usr/bin/env bash
# Two GPUs, the tree with conv.patch only (built with FFmpeg, tests off), 1080p H.264 on one and
# two GPUs, 8 (default) and 16 decoding threads (--threads 16 also gives the matcher 16 of the 32
# cores), rounds in turns, and the decoding rate alone.
exec > >(tee "$OUT/log6.txt") 2>&1
nvidia-smi -L; nproc
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu; mkdir -p $L
tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt; patch -s -p1 < .dev/ff/conv.patch || echo "patch failed"
t0=$(date +%s)
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF \
    -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF > $OUT/build6.txt 2>&1; echo "build rc $? in $(( $(date +%s) - t0 )) s"
N=/tmp/bn/geohash-match V=.dev/ff/mm1080.mp4 R=.dev/ff/ref050.jpg
ms() { local t0=$(date +%s%N); timeout 30 "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc $(grep -c '"found":true' /tmp/run.out)"; }
for r in 1 2 3; do
  echo "r$r 1gpu: $(ms $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r 2gpu: $(ms $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r 1gpu t16: $(ms $N --json --backend cuda --jobs 8 --threads 16 $R $V)"
  echo "r$r 2gpu t16: $(ms $N --json --backend cuda --gpus 2 --jobs 16 --threads 16 $R $V)"
done
for t in 8 16; do echo "decode t$t: $(timeout 60 $N bench video --backend cuda --video $V --reference $R --frames 4 --threads $t 2>&1 | grep -E '^  decode')"; done
