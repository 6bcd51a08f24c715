#!/usr/bin/env bash
# s35 call 7: how fast one thread reads 1080p grey frames from a page-cached Y4M file on the
# 2 x H100 host (fread into a new buffer a frame, 32 frames held as the video pipeline holds
# them), the frames' single reader being the suspect cap of --gpus 2 (~2050 frames/s).
set -u
python3 .dev/s35/mk_y4m.py .dev/mm1080.mp4 /tmp/mm1080.y4m 3 > $OUT/mk_y4m.txt 2>&1
cat /tmp/mm1080.y4m > /dev/null
gcc -O2 -o /tmp/rb2 .dev/s35/rb2.c
{ nproc; lscpu | grep -E "Model name|MHz"; for i in 1 2 3; do /tmp/rb2 /tmp/mm1080.y4m 0; /tmp/rb2 /tmp/mm1080.y4m 1; done; } 2>&1 | tee $OUT/reader.txt
