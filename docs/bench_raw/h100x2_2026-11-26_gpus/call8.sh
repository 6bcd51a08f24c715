#!/usr/bin/env bash
# Multi-GPU video (issue 16): build old (a45e897) and new, the tests, the benchmark, memcheck.
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi -L >"$OUT/device.txt" 2>&1
mkdir -p /tmp/ff /tmp/ffbin && (cd /tmp/ff && python3 -m zipfile -e "$R"/.dev/ffwheel/*.whl .) &&
    ln -sf /tmp/ff/imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v7.0.2 /tmp/ffbin/ffmpeg &&
    chmod +x /tmp/ffbin/ffmpeg
export PATH=/tmp/ffbin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 &
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo >"$OUT/build_old.log" 2>&1 &
wait
[ -x /tmp/b/geohash-match ] || { tail -30 "$OUT/build.log"; exit 1; }
[ -x /tmp/bo/geohash-match ] || tail -30 "$OUT/build_old.log"
el build
cd /tmp/b
timeout 150 ctest -j8 -R 'context|video_gpus|video_jobs|cli\.video_y4m' --timeout 120 >"$OUT/ctest_gpus.log" 2>&1
el "ctest gpus rc $?"; grep -E "tests passed|\*\*\*|Failed|Skipped" "$OUT/ctest_gpus.log" | head
cd "$R"
{
ff() { ffmpeg -hide_banner -loglevel error -threads 0 -i .dev/mm1080.mp4 -f yuv4mpegpipe -pix_fmt gray -; }
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
t0_=$(now); ff >/tmp/mm1080.y4m; t1_=$(now); echo "decode alone: $(rate 1080 $t0_ $t1_) frames/s"
for rep in 1 2; do
  for cfg in "old 1 0" "new 1 0" "new 2 0" "new 2 16" "new all 0"; do
    set -- $cfg
    bin=/tmp/b/geohash-match; [ "$1" = old ] && bin=/tmp/bo/geohash-match
    gp=(--gpus "$2"); [ "$1" = old ] && gp=()
    a=$(now); "$bin" --json --backend cuda --jobs "$3" "${gp[@]}" .dev/ref1080.png - </tmp/mm1080.y4m >/tmp/lines.$1.$2.jsonl; b=$(now)
    c=$(now); ff | "$bin" --json --backend cuda --jobs "$3" "${gp[@]}" .dev/ref1080.png - >/dev/null; d=$(now)
    echo "rep $rep $1 --gpus $2 --jobs $3: from Y4M file $(rate 1080 $a $b) frames/s, end to end $(rate 1080 $c $d) frames/s, $(wc -l </tmp/lines.$1.$2.jsonl) lines, $(grep -c '"found":true' /tmp/lines.$1.$2.jsonl) found"
  done
done
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
for f in /tmp/lines.new.2.jsonl /tmp/lines.new.all.jsonl /tmp/lines.old.1.jsonl; do
  cmp -s <(strip /tmp/lines.new.1.jsonl) <(strip $f) && echo "identical to new --gpus 1: $f" || echo "DIFFERS from new --gpus 1: $f"
done
} >"$OUT/video1080.txt" 2>&1
el video; cat "$OUT/video1080.txt"
for rep in 1 2; do
  /tmp/bo/geohash-match bench match --backend cuda --reps 30 >"$OUT/bench_match_old_$rep.txt" 2>&1
  /tmp/b/geohash-match bench match --backend cuda --reps 30 >"$OUT/bench_match_new_$rep.txt" 2>&1
done
el "bench match"
ffmpeg -v error -i data/video/Megamind.avi -frames:v 30 -f yuv4mpegpipe -pix_fmt gray /tmp/mm30.y4m
timeout 150 compute-sanitizer --tool memcheck --leak-check full /tmp/b/geohash-match --backend cuda --json --gpus 2 --jobs 2 data/video/megamind_frame050.png - </tmp/mm30.y4m >/dev/null 2>"$OUT/memcheck_gpus.txt"
el "memcheck rc $?"; tail -3 "$OUT/memcheck_gpus.txt"
cd /tmp/b && CK_RUN_CASE=cuda timeout 100 compute-sanitizer --tool memcheck --leak-check full ./check_context >"$OUT/memcheck_context.txt" 2>&1
el "memcheck context rc $?"; tail -3 "$OUT/memcheck_context.txt"
timeout 200 ctest -j8 -R 'cuda|voxel|cli\.(match|multi|search|auto)|faults_cuda|dynmap' -LE slow --timeout 150 >"$OUT/ctest_rest.log" 2>&1
el "ctest rest rc $?"; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest_rest.log" | head
