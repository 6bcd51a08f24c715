#!/usr/bin/env bash
# device_check.sh BIN OUT - the GPU checks before a kernel change is called done, run on a
# machine with an NVIDIA GPU over binaries built elsewhere (-DGEOHASH_STATIC_DEPS=ON,
# -DGEOHASH_FFMPEG=OFF) and copied into BIN: every Check suite (CPU and cuda cases),
# compute-sanitizer memcheck on the cuda suites, the CLI on both backends, and the benchmarks.
# Writes logs and JSON into OUT. Run from the repository root (it reads data/).
set -u
BIN=$1 OUT=$2
export GHM_TEST_DATA=$PWD/data CK_VERBOSITY=normal
mkdir -p "$OUT"
nvidia-smi -L >"$OUT/device.txt" 2>&1

{
    for t in "$BIN"/check_*; do
        echo "== $(basename "$t") (all cases)"
        "$t" 2>&1 | grep -vE '^\s*$'
        echo "rc=$?"
    done
} >"$OUT/tests.txt" 2>&1

{
    for t in "$BIN"/check_*_cuda; do
        echo "== memcheck $(basename "$t")"
        GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda compute-sanitizer --tool memcheck \
            --leak-check full "$t" 2>&1 | tail -4
    done
} >"$OUT/sanitizer.txt" 2>&1

{
    for b in cpu cuda; do
        echo "== pairs, backend $b"
        for q in data/pairs/dev_0*_query.*; do
            "$BIN/geohash-match" --json --backend "$b" --threads 16 \
                "$(python3 -c "import json,sys; d=json.load(open('data/pairs/truth.json')); print('data/pairs/'+[p for p in d['pairs'] if p['query'].split('/')[-1]==sys.argv[1]][0]['reference'])" "$(basename "$q")")" "$q"
        done
    done
} >"$OUT/pairs.txt" 2>&1

"$BIN/geohash-match" bench match --backend cuda --threads 16 --reps 30 \
    --json-out "$OUT/match.json" >"$OUT/bench_match.txt" 2>&1
"$BIN/geohash-match" bench voxel --backend cuda --threads 16 --json-out "$OUT/voxel_cuda.json" \
    >"$OUT/bench_voxel.txt" 2>&1
"$BIN/geohash-match" bench voxel --backend cpu --threads 16 --json-out "$OUT/voxel_cpu.json" \
    >>"$OUT/bench_voxel.txt" 2>&1

# Video where FFmpeg's libraries are absent: a decoder that is there writes YUV4MPEG2 grey to
# geohash-match's standard input. FFMPEG names an ffmpeg program to use (the H100 runs used the
# static FFmpeg 7.0.2 of the imageio-ffmpeg wheel, carried); without it OpenCV decodes
# (scripts/y4m_from_video.py). Per video in VIDEOS (pairs "clip.mp4:reference.png", FRAMES
# frames each): decode alone, matching alone from a Y4M file, and both through a pipe, for the
# CUDA backend with the default workers, one worker and 8, and the CPU backend.
VIDEOS=${VIDEOS:-} FRAMES=${FRAMES:-271} FFMPEG=${FFMPEG:-}
now() { date +%s.%N; }
decode() {
    if [ -n "$FFMPEG" ]; then
        "$FFMPEG" -hide_banner -loglevel error -threads 0 -i "$1" -f yuv4mpegpipe -pix_fmt gray -
    else
        python3 scripts/y4m_from_video.py "$1" 2>/dev/null
    fi
}
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
{
    echo "decoder: ${FFMPEG:-OpenCV (scripts/y4m_from_video.py)}"
    for pair in $VIDEOS; do
        clip=${pair%%:*} ref=${pair##*:}
        y4m=/tmp/$(basename "$clip").y4m
        t0=$(now); decode "$clip" >"$y4m"; t1=$(now)
        echo "$clip: decode alone $(rate "$FRAMES" "$t0" "$t1") frames/s"
        for cfg in "cuda 0" "cuda 1" "cuda 8" "cpu 0"; do
            set -- $cfg
            t2=$(now); "$BIN/geohash-match" --json --backend "$1" --threads 16 --jobs "$2" "$ref" - \
                <"$y4m" >/tmp/lines.jsonl; t3=$(now)
            t4=$(now); decode "$clip" | "$BIN/geohash-match" --json --backend "$1" --threads 16 \
                --jobs "$2" "$ref" - >/dev/null; t5=$(now)
            echo "$clip $1 --jobs $2: match $(rate "$FRAMES" "$t2" "$t3") frames/s," \
                "end to end $(rate "$FRAMES" "$t4" "$t5") frames/s, $(wc -l </tmp/lines.jsonl) lines," \
                "$(grep -c '"found":true' /tmp/lines.jsonl) found"
        done
    done
} >"$OUT/video.txt" 2>&1
