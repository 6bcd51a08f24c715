#!/usr/bin/env bash
# Stop 40, call 2 (nvidia-h200-x2): NVDEC scaling per GPU (the throw-away probe, frames to the
# host), software and NVDEC streams at once, and which profilers the host has.
exec > >(tee "$OUT/log2.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
mkdir -p $L; tar -C $P -xJf .dev/ff/ffdev.tar.xz; tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig
which perf gdb valgrind py-spy nsys 2>&1 | head; ls /usr/local/cuda/bin | head -40 | tr '\n' ' '; echo
gcc -O1 -o /tmp/loop .dev/c38/loop.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil && /tmp/loop .dev/ff/mm1080.mp4 /tmp/long.mp4 4
gcc -O2 -o /tmp/nvp .dev/c38/nvdec_probe.c -I$P/usr/include/x86_64-linux-gnu -I$P/usr/include -L$L -lavformat -lavcodec -lavutil
V=/tmp/long.mp4
many() { # n, gpu list, decoder, threads
  local n=$1 t0=$(date +%s%N) pids="" i=0
  for i in $(seq 1 $n); do g=$(( (i - 1) % $2 )); CUDA_VISIBLE_DEVICES=$g /tmp/nvp $V "$3" $4 > /tmp/m$i.txt 2>/dev/null & pids="$pids $!"; done
  wait $pids
  echo "$n x $3 on $2 gpu(s): $(( ($(date +%s%N) - t0) / 1000000 )) ms wall; each: $(cat /tmp/m*.txt | sed -E 's/.* in ([0-9.]+) s.*/\1/' | tr '\n' ' ')"; rm -f /tmp/m*.txt
}
for n in 1 2 3 4 6 8; do many $n 1 h264_cuvid 1; done
many 8 2 h264_cuvid 1
many 12 2 h264_cuvid 1
# software and NVDEC together: one sw stream (16 threads) beside 3 NVDEC streams on GPU 0
t0=$(date +%s%N); /tmp/nvp $V "" 16 > /tmp/sw.txt & a=$!; many 3 1 h264_cuvid 1; wait $a; echo "sw beside: $(cat /tmp/sw.txt) total $(( ($(date +%s%N) - t0) / 1000000 )) ms"
