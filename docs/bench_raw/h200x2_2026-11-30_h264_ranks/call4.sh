#!/usr/bin/env bash
# s53 call 4 (2 x H200): FFmpeg unpacked under /tmp/ffp for call 5 on the same machine.
set -u
nvidia-smi -L
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu; mkdir -p $L
tar -C $P -xJf .dev/ff/ffdev.tar.xz && tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz && echo ffmpeg unpacked
