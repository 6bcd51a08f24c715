#!/bin/sh
# ab.sh A B ROUNDS ITER: interleaved single-thread feature bench
for r in $(seq $3); do for b in $1 $2; do echo -n "$b "; OMP_NUM_THREADS=1 /tmp/fb/$b /work/shared/data/hard/refs/scene0.jpg $4 | sed 's/.*min ms: //'; done; done
