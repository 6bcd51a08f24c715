#!/usr/bin/env bash
# Multi-GPU video (issue 16), after the Y4M reader fix: old (a45e897) and new, 1080p, 3240 frames.
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi -L
mkdir -p /tmp/ff /tmp/ffbin && (cd /tmp/ff && python3 -m zipfile -e "$R"/.dev/ffwheel/*.whl .) &&
    ln -sf /tmp/ff/imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v7.0.2 /tmp/ffbin/ffmpeg &&
    chmod +x /tmp/ffbin/ffmpeg
export PATH=/tmp/ffbin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 &
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo >"$OUT/build_old.log" 2>&1 &
ffmpeg -hide_banner -loglevel error -threads 0 -stream_loop 2 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray - >/tmp/mm1080.y4m &
wait
el build
N=$(grep -c FRAME /tmp/mm1080.y4m 2>/dev/null || echo 3240); N=3240
{
ff() { ffmpeg -hide_banner -loglevel error -threads 0 -stream_loop 2 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray -; }
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
t0_=$(now); ff >/dev/null; t1_=$(now); echo "decode alone (ffmpeg -threads 0, 3240 frames): $(rate $N $t0_ $t1_) frames/s"
T=(); [ -x /usr/bin/time ] && T=(/usr/bin/time -f "%U %S" -o /tmp/cpu)
echo n/a >/tmp/cpu
for rep in 1 2; do
  for cfg in "old 1 0" "new 1 0" "new 1 8" "new 2 0" "new 2 16"; do
    set -- $cfg
    bin=/tmp/b/geohash-match; [ "$1" = old ] && bin=/tmp/bo/geohash-match
    gp=(--gpus "$2"); [ "$1" = old ] && gp=()
    a=$(now); "${T[@]}" "$bin" --json --backend cuda --jobs "$3" "${gp[@]}" .dev/ref1080.png - </tmp/mm1080.y4m >/tmp/lines.$1.$2.jsonl; b=$(now)
    c=$(now); ff | "$bin" --json --backend cuda --jobs "$3" "${gp[@]}" .dev/ref1080.png - >/dev/null; d=$(now)
    s=$(now); "$bin" --json --backend cuda --jobs "$3" "${gp[@]}" --end 0 .dev/ref1080.png - </tmp/mm1080.y4m >/dev/null; e=$(now)
    echo "rep $rep $1 --gpus $2 --jobs $3: from Y4M file $(rate $N $a $b) frames/s (cpu s: $(cat /tmp/cpu)), end to end $(rate $N $c $d) frames/s, one-frame run $(python3 -c "print(f'{$e-$s:.2f}')") s, $(wc -l </tmp/lines.$1.$2.jsonl) lines, $(grep -c '"found":true' /tmp/lines.$1.$2.jsonl) found"
  done
done
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
for f in /tmp/lines.new.2.jsonl /tmp/lines.old.1.jsonl; do
  cmp -s <(strip /tmp/lines.new.1.jsonl) <(strip $f) && echo "identical to new --gpus 1: $f" || echo "DIFFERS from new --gpus 1: $f"
done
} 2>&1 | tee "$OUT/video1080.txt"
el video
cd /tmp/b && timeout 120 ctest -j8 -R 'video_gpus|y4m|context' --timeout 100 2>&1 | grep -E "tests passed|\*\*\*|Failed|Skipped"
el ctest
cd "$R"
ffmpeg -v error -i data/video/Megamind.avi -frames:v 30 -f yuv4mpegpipe -pix_fmt gray /tmp/mm30.y4m
timeout 120 compute-sanitizer --tool memcheck --leak-check full /tmp/b/geohash-match --backend cuda --json --gpus 2 --jobs 2 data/video/megamind_frame050.png - </tmp/mm30.y4m 2>&1 >/dev/null | tail -4
cd /tmp/b && CK_FORK=no CK_RUN_CASE=cuda timeout 100 compute-sanitizer --tool memcheck --leak-check full ./check_context 2>&1 | grep -vE "^\s*$" | head -40
el done
