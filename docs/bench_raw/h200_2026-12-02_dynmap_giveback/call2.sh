#!/usr/bin/env bash
# s68 call 2 (one H200): leaders_probe.cu (not project code): the batch's duplicate table as
# now against P parts by hash bits, each part's table small enough for L2.
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -arch=sm_90 -o /tmp/lp .dev/c68/leaders_probe.cu || exit 1
for a in "23 6 0" "23 6 1" "22 6 0" "21 6 0" "23 1 0" "24 6 0"; do /tmp/lp $a; done 2>&1 | tee $OUT/probe.txt
