#!/usr/bin/env bash
# Stop 39, call 2 (warm nvidia-h200-x2, builds of call 1 in /tmp): why two parts on two GPUs
# are no faster: CPU time of the runs, each half alone, the halves as two processes at once,
# the decoding rate, fewer decoding threads per part.
exec > >(tee "$OUT/log2.txt") 2>&1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L NCCL_NVLS_ENABLE=0
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match R=.dev/ff/ref050.jpg V=/tmp/long.mp4
ls -la $N $O $V || exit 1
tm() { /usr/bin/time -f "%e s wall %U user %S sys" "$@" > /dev/null 2>/tmp/tm.err; tail -1 /tmp/tm.err; }
ms() { local t0=$(date +%s%N); "$@" > /dev/null 2>&1; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms"; }
for r in 1 2; do
  echo "r$r 1gpu: $(tm $N --json --backend cuda --jobs 8 $R $V)"
  echo "r$r 2gpu: $(tm $N --json --backend cuda --gpus 2 --jobs 16 $R $V)"
  echo "r$r half A alone: $(tm $N --json --backend cuda --jobs 8 --end 1075 $R $V)"
  echo "r$r half B alone: $(tm $N --json --backend cuda --jobs 8 --start 1076 $R $V)"
  t0=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=0 $N --json --backend cuda --jobs 8 --end 1075 $R $V > /dev/null 2>&1 &
  CUDA_VISIBLE_DEVICES=1 $N --json --backend cuda --jobs 8 --start 1076 $R $V > /dev/null 2>&1 &
  wait; echo "r$r halves as 2 processes: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  for t in 4 8 12; do echo "r$r 2gpu threads $t: $(tm $N --json --backend cuda --gpus 2 --jobs 16 --threads $t $R $V)"; done
  echo "r$r 1gpu step 100 (decode-bound): $(tm $N --json --backend cuda --jobs 8 --step 100 $R $V)"
  echo "r$r 2gpu step 100: $(tm $N --json --backend cuda --gpus 2 --jobs 16 --step 100 $R $V)"
done
timeout 120 $N bench video --backend cuda --video $V --reference $R --frames 4 2>&1 | tail -15
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw --format=csv
