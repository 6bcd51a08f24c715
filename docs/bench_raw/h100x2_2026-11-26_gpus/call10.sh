#!/usr/bin/env bash
# Multi-GPU video (issue 16): the frame queue per worker (new) against the previous commit (prev),
# and two single-GPU processes side by side (the host's ceiling). 1080p, 3240 frames.
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi -L
mkdir -p /tmp/ff /tmp/ffbin && (cd /tmp/ff && python3 -m zipfile -e "$R"/.dev/ffwheel/*.whl .) &&
    ln -sf /tmp/ff/imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v7.0.2 /tmp/ffbin/ffmpeg &&
    chmod +x /tmp/ffbin/ffmpeg
export PATH=/tmp/ffbin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/prev && tar xJf .dev/prev-src.tar.xz -C /tmp/prev && sed -i "s/ -Werror//" /tmp/prev/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 &
bash scripts/device_build.sh .dev/debs /tmp/prev /tmp/bp >"$OUT/build_prev.log" 2>&1 &
ffmpeg -hide_banner -loglevel error -threads 0 -stream_loop 2 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray - >/tmp/mm1080.y4m &
wait
el build
N=3240
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
{
for rep in 1 2; do
  for cfg in "prev 1 0" "prev 2 16" "new 1 0" "new 1 8" "new 2 0" "new 2 16" "new 2 24"; do
    set -- $cfg
    bin=/tmp/b/geohash-match; [ "$1" = prev ] && bin=/tmp/bp/geohash-match
    a=$(now); "$bin" --json --backend cuda --jobs "$3" --gpus "$2" .dev/ref1080.png - </tmp/mm1080.y4m >/tmp/lines.$1.$2.jsonl; b=$(now)
    echo "rep $rep $1 --gpus $2 --jobs $3: from Y4M file $(rate $N $a $b) frames/s, $(grep -c '"found":true' /tmp/lines.$1.$2.jsonl) found"
  done
  for j in 0 8; do
    a=$(now)
    CUDA_VISIBLE_DEVICES=0 /tmp/b/geohash-match --json --backend cuda --jobs $j .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null &
    CUDA_VISIBLE_DEVICES=1 /tmp/b/geohash-match --json --backend cuda --jobs $j .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null &
    wait; b=$(now)
    echo "rep $rep two processes side by side, one GPU each, --jobs $j: $(rate $((2 * N)) $a $b) frames/s together"
  done
done
for th in 0 32; do
  a=$(now); ffmpeg -hide_banner -loglevel error -threads $th -stream_loop 2 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray - >/dev/null; b=$(now)
  echo "decode alone, ffmpeg -threads $th: $(rate $N $a $b) frames/s"
  for g in 1 2; do
    a=$(now); ffmpeg -hide_banner -loglevel error -threads $th -stream_loop 2 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray - | /tmp/b/geohash-match --json --backend cuda --gpus $g --jobs $((8 * g)) .dev/ref1080.png - >/dev/null; b=$(now)
    echo "end to end, ffmpeg -threads $th, --gpus $g --jobs $((8 * g)): $(rate $N $a $b) frames/s"
  done
done
} 2>&1 | tee "$OUT/video1080.txt"
el video
ffmpeg -v error -i data/video/Megamind.avi -frames:v 30 -f yuv4mpegpipe -pix_fmt gray /tmp/mm30.y4m
timeout 120 compute-sanitizer --tool memcheck --leak-check full --log-file "$OUT/memcheck_gpus.txt" /tmp/b/geohash-match --backend cuda --json --gpus 2 --jobs 4 data/video/megamind_frame050.png - </tmp/mm30.y4m >/dev/null
el "memcheck rc $?"; tail -3 "$OUT/memcheck_gpus.txt"
cd /tmp/b && timeout 100 ctest -j8 -R 'video_gpus|video_jobs|context' --timeout 90 2>&1 | grep -E "tests passed|\*\*\*|Failed"
el done
