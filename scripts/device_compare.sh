#!/usr/bin/env bash
# device_compare.sh OLD NEW OUT - old and new binaries (built elsewhere with
# -DGEOHASH_STATIC_DEPS=ON -DGEOHASH_FFMPEG=OFF and carried, see device_check.sh) measured side
# by side in one run on a GPU machine: bench match, bench voxel and bench hash for each, taken
# in turns (old, new, old, new) so that drift of the machine falls on both. Writes the outputs
# into OUT. Run from the repository root.
set -u
OLD=$1 NEW=$2 OUT=$3
mkdir -p "$OUT"
nvidia-smi -L >"$OUT/device.txt" 2>&1
for round in 1 2; do
    for side in old new; do
        bin=$OLD
        [ "$side" = new ] && bin=$NEW
        {
            echo "== round $round, $side: bench match"
            "$bin/geohash-match" bench match --backend cuda --threads 16 --reps 30 \
                --json-out "$OUT/match_${side}_$round.json"
            echo "== round $round, $side: bench voxel"
            "$bin/geohash-match" bench voxel --backend cuda --threads 16 --reps 20 \
                --json-out "$OUT/voxel_${side}_$round.json"
            echo "== round $round, $side: bench voxel 2 x 10M at 1024^3"
            "$bin/geohash-match" bench voxel --backend cuda --threads 16 --reps 5 \
                --points 10000000 --grid 1024 --json-out "$OUT/voxel10m_${side}_$round.json"
        } >>"$OUT/bench_$side.txt" 2>&1
    done
done
for side in old new; do
    bin=$OLD
    [ "$side" = new ] && bin=$NEW
    "$bin/geohash-match" bench hash --backend cuda --min-log2 22 --max-log2 26 \
        --json-out "$OUT/hash_$side.json" >>"$OUT/bench_$side.txt" 2>&1
done
