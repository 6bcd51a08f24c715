#!/usr/bin/env bash
# How fast one 1080p H.264 stream decodes on the device host without the project's reader:
# FFmpeg's software decoder with 1 / 8 / 16 frame threads, and NVDEC (h264_cuvid) where the
# driver's libnvcuvid is there. nvdec_probe.c is a throw-away probe, not project code.
exec > >(tee "$OUT/log4.txt") 2>&1
nvidia-smi -L; nproc; ls -la /usr/lib/x86_64-linux-gnu/libnvcuvid* 2>&1 | head -3
nvidia-smi -q | grep -i -A2 "decoder\|NVDEC" | head -12
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu; mkdir -p $L
tar -C $P -xJf .dev/ff/ffdev.tar.xz
tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
export LD_LIBRARY_PATH=$L
gcc -O2 -o /tmp/nvp .dev/ff/nvdec_probe.c -I$P/usr/include/x86_64-linux-gnu -L$L -lavformat -lavcodec -lavutil || exit 1
V=.dev/ff/mm1080.mp4
for r in 1 2; do
  for t in 1 8 16 32; do timeout 60 /tmp/nvp $V "" $t; done
  timeout 60 /tmp/nvp $V h264_cuvid 1
done
