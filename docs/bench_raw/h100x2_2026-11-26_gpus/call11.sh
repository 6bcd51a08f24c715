#!/usr/bin/env bash
# Experiment (not committed code): how the host waits for the GPU (CUDA's spin / yield / blocking
# sync, GHM_CUDA_SCHEDULE in a patched build) and OpenMP's wait policy, against the video
# mode's throughput on 1 and 2 GPUs and one query's latency.
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
command -v perf && echo "perf here"
mkdir -p /tmp/ff /tmp/ffbin && (cd /tmp/ff && python3 -m zipfile -e "$R"/.dev/ffwheel/*.whl .) &&
    ln -sf /tmp/ff/imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v7.0.2 /tmp/ffbin/ffmpeg &&
    chmod +x /tmp/ffbin/ffmpeg
export PATH=/tmp/ffbin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
git apply .dev/exp_schedule.patch || patch -p1 <.dev/exp_schedule.patch
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 &
ffmpeg -hide_banner -loglevel error -threads 0 -stream_loop 2 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray - >/tmp/mm1080.y4m &
wait
el build
N=3240
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
T=(); [ -x /usr/bin/time ] && T=(/usr/bin/time -f "%U %S" -o /tmp/cpu)
echo n/a >/tmp/cpu
B=/tmp/b/geohash-match
{
for rep in 1 2; do
  for sched in spin yield block; do
    for omp in active passive; do
      for cfg in "1 8" "2 16"; do
        set -- $cfg
        a=$(now); GHM_CUDA_SCHEDULE=$sched OMP_WAIT_POLICY=$omp "${T[@]}" $B --json --backend cuda --gpus $1 --jobs $2 .dev/ref1080.png - </tmp/mm1080.y4m >/tmp/l.jsonl; b=$(now)
        echo "rep $rep sched $sched omp $omp --gpus $1 --jobs $2: $(rate $N $a $b) frames/s, cpu s $(cat /tmp/cpu), $(grep -c '"found":true' /tmp/l.jsonl) found"
      done
    done
  done
  a=$(now); "${T[@]}" $B --json --backend cuda --gpus 2 --jobs 16 --threads 16 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null; b=$(now)
  echo "rep $rep default --gpus 2 --jobs 16 --threads 16: $(rate $N $a $b) frames/s, cpu s $(cat /tmp/cpu)"
  a=$(now)
  GHM_CUDA_SCHEDULE=block CUDA_VISIBLE_DEVICES=0 $B --json --backend cuda --jobs 8 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null &
  GHM_CUDA_SCHEDULE=block CUDA_VISIBLE_DEVICES=1 $B --json --backend cuda --jobs 8 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null &
  wait; b=$(now)
  echo "rep $rep block, two processes side by side, --jobs 8: $(rate $((2 * N)) $a $b) frames/s together"
done
} 2>&1 | tee "$OUT/sched.txt"
el video
for sched in spin block yield; do
  GHM_CUDA_SCHEDULE=$sched $B bench match --backend cuda --reps 30 2>&1 | grep "^cuda" | sed "s/^/$sched /"
done | tee "$OUT/bench_match_sched.txt"
el done
