#!/usr/bin/env bash
# s68 call 4 (one H200): leaders_size_probe.cu (not project code): the batch's duplicate table
# (as the insert's, a third of the items repeating others) at 1.25-4 slots an item.
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -arch=sm_90 -o /tmp/lsp .dev/c68/leaders_size_probe.cu || exit 1
for a in "23 6" "22 6" "23 6 5000000" "23 6 12000000" "23 1"; do /tmp/lsp $a; done 2>&1 | tee $OUT/size_probe.txt
