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

# Video where FFmpeg is absent: OpenCV decodes to YUV4MPEG2 (scripts/y4m_from_video.py).
# Decode alone, matching alone (from a Y4M file) and both through a pipe, per video in VIDEOS
# (pairs "clip.mp4:reference.png").
VIDEOS=${VIDEOS:-}
now() { date +%s.%N; }
{
    for pair in $VIDEOS; do
        clip=${pair%%:*} ref=${pair##*:}
        y4m=/tmp/$(basename "$clip").y4m
        t0=$(now); n=$(python3 scripts/y4m_from_video.py "$clip" 2>&1 >"$y4m" | awk '{print $2}')
        t1=$(now)
        for b in cuda cpu; do
            t2=$(now); "$BIN/geohash-match" --json --backend "$b" --threads 16 "$ref" - <"$y4m" \
                >"/tmp/lines_$b.jsonl"; t3=$(now)
            t4=$(now); python3 scripts/y4m_from_video.py "$clip" |
                "$BIN/geohash-match" --json --backend "$b" --threads 16 "$ref" - >/dev/null; t5=$(now)
            found=$(grep -c '"found":true' "/tmp/lines_$b.jsonl")
            python3 -c "import sys; n,a,b,c,d,e,f=map(float,sys.argv[1:8]); print(f'{sys.argv[8]} {sys.argv[9]}: {int(n)} frames, decode {n/(b-a):.1f} fps ({b-a:.2f} s), match {n/(d-c):.1f} fps ({d-c:.2f} s), end-to-end {n/(f-e):.1f} fps ({f-e:.2f} s), found {sys.argv[10]}')" \
                "$n" "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" "$clip" "$b" "$found"
        done
    done
} >"$OUT/video.txt" 2>&1
