#!/usr/bin/env bash
# Stop 39, call 4 (nvidia-h200-x2): where the CPU of a 1080p H.264 run goes on this host, and how
# many frames a second decoding gives with 1 and 2 streams at once: FFmpeg's software decoder
# (16 frame threads) and NVDEC (h264_cuvid) with 1, 2, 4 streams (nvdec_probe.c: a throw-away
# probe, not project code), and the project's run decoding every frame but matching one.
exec > >(tee "$OUT/log4.txt") 2>&1
nvidia-smi -L; nproc; lscpu | grep -E "Model name|Thread|Core|Socket"
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
if [ ! -f $L/libavcodec.so ]; then
  mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
  for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
  sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
fi
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
gcc -O2 -o /tmp/nvp .dev/c38/nvdec_probe.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil || exit 1
[ -f /tmp/long.mp4 ] || { gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4; }
V=/tmp/long.mp4
par() { # par K ARGS: K copies of the probe at once, device i % 2; wall ms
  local k=$1; shift; local t0=$(date +%s%N) pids=()
  for i in $(seq 0 $((k - 1))); do CUDA_VISIBLE_DEVICES=$((i % 2)) timeout 60 /tmp/nvp $V "$@" > /tmp/par.$i 2>&1 & pids+=($!); done
  wait "${pids[@]}"; echo "$k at once: $(( ($(date +%s%N) - t0) / 1000000 )) ms; $(head -c 200 /tmp/par.0)"
}
for r in 1 2; do
  echo "r$r sw16: $(/usr/bin/time -f '%e s %U user' timeout 60 /tmp/nvp $V '' 16 2>&1 | tr '\n' ' ')"
  par 2 "" 16
  echo "r$r cuvid: $(/usr/bin/time -f '%e s %U user' timeout 60 /tmp/nvp $V h264_cuvid 1 2>&1 | tr '\n' ' ')"
  par 2 h264_cuvid 1
  par 4 h264_cuvid 1
done
if [ -x /tmp/bn/geohash-match ]; then
  N=/tmp/bn/geohash-match R=.dev/ff/ref050.jpg
  for r in 1 2; do
    echo "r$r decode all, match 1: $(/usr/bin/time -f '%e s wall %U user %S sys' timeout 60 $N --json --backend cuda --jobs 8 --step 100000 $R $V 2>&1 >/dev/null | tail -1)"
    echo "r$r all: $(/usr/bin/time -f '%e s wall %U user %S sys' timeout 60 $N --json --backend cuda --jobs 8 $R $V 2>&1 >/dev/null | tail -1)"
  done
fi
