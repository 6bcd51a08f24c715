#!/usr/bin/env bash
# Stop 40, call 6 (nvidia-h200-x2): one stream's NVDEC rate through FFmpeg's hwaccel (frames
# on the GPU / copied to the host) against h264_cuvid, 1 and 4 streams on one GPU (hw_probe.c).
exec > >(tee "$OUT/log6.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
export LD_LIBRARY_PATH=$L
gcc -O1 -o /tmp/loop .dev/c40/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4
gcc -O2 -o /tmp/hwp .dev/c40/hw_probe.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil || exit 1
many() { # n, mode, threads
  local t0=$(date +%s%N) pids=""
  for i in $(seq 1 $1); do CUDA_VISIBLE_DEVICES=0 /tmp/hwp /tmp/long.mp4 $2 $3 > /tmp/m$i.txt 2>/dev/null & pids="$pids $!"; done
  wait $pids
  echo "$1 x $2 (threads $3): $(( ($(date +%s%N) - t0) / 1000000 )) ms; $(cat /tmp/m*.txt | sed -E 's/.*frames in ([0-9.]+) s.*open ([0-9]+) ms.*/\1 s (open \2 ms)/' | tr '\n' ' ')"; rm -f /tmp/m*.txt
}
for m in cuvid hw hwcopy; do many 1 $m 1; done
many 1 hw 4; many 1 hwcopy 4; many 1 hwcopy 8
for m in cuvid hw hwcopy; do many 4 $m 1; done
many 4 hwcopy 4
