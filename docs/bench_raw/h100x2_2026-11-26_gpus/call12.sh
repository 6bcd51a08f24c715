#!/usr/bin/env bash
# Where the 2-GPU video mode's time goes: nsys's CUDA API and OS runtime summaries, and two
# processes of 16 threads side by side (no oversubscription).
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
mkdir -p /tmp/ff /tmp/ffbin && (cd /tmp/ff && python3 -m zipfile -e "$R"/.dev/ffwheel/*.whl .) &&
    ln -sf /tmp/ff/imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v7.0.2 /tmp/ffbin/ffmpeg &&
    chmod +x /tmp/ffbin/ffmpeg
export PATH=/tmp/ffbin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 &
ffmpeg -hide_banner -loglevel error -threads 0 -stream_loop 2 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray - >/tmp/mm1080.y4m &
wait
el build
N=3240
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
B=/tmp/b/geohash-match
{
for rep in 1 2; do
  a=$(now)
  CUDA_VISIBLE_DEVICES=0 $B --json --backend cuda --jobs 8 --threads 16 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null &
  CUDA_VISIBLE_DEVICES=1 $B --json --backend cuda --jobs 8 --threads 16 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null &
  wait; b=$(now)
  echo "rep $rep two processes side by side, --jobs 8 --threads 16 each: $(rate $((2 * N)) $a $b) frames/s together"
  a=$(now); $B --json --backend cuda --jobs 8 --threads 16 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null; b=$(now)
  echo "rep $rep one process, one GPU, --jobs 8 --threads 16: $(rate $N $a $b) frames/s"
  a=$(now); $B --json --backend cuda --gpus 2 --jobs 16 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null; b=$(now)
  echo "rep $rep --gpus 2 --jobs 16: $(rate $N $a $b) frames/s"
done
} 2>&1 | tee "$OUT/side.txt"
el side
if [ -n "$NSYS" ]; then
  cd /tmp && timeout 200 "$NSYS" profile -o /tmp/g2 -t cuda,osrt --force-overwrite true $B --json --backend cuda --gpus 2 --jobs 16 --end 1500 "$R/.dev/ref1080.png" - </tmp/mm1080.y4m >/dev/null 2>"$OUT/nsys_err.txt"
  el "nsys rc $?"
  timeout 150 "$NSYS" stats -r cuda_api_sum,osrt_sum,cuda_gpu_kern_sum -f csv -o /tmp/g2s /tmp/g2.nsys-rep >/dev/null 2>&1
  for f in /tmp/g2s_*.csv; do echo "== $f"; head -25 "$f"; done >"$OUT/nsys_stats.txt" 2>&1
  el stats
fi
