#!/usr/bin/env bash
# run.sh - the project's `bench hash` beside BGHT and cuCollections, on the same keys and GPU.
#
#   run.sh build PEERS BINDIR
#       builds BINDIR/bench_peers from bench_peers.cu against the peers' headers, kept outside
#       the project: PEERS/bght/include (github.com/owensgroup/BGHT, include/) and
#       PEERS/cuco/include (github.com/NVIDIA/cuCollections, include/); CCCL from the CUDA
#       toolkit. Not part of CMake or CI.
#   run.sh measure GHM BENCH_PEERS OUTDIR [LOG2] [ROUNDS]
#       ROUNDS times (default 2), in turns: GHM (a geohash-match built with CUDA) `bench hash
#       --scheme all` at 2^LOG2 keys (default 26), then BENCH_PEERS at the same size and seed;
#       logs OUTDIR/ours_rN.txt (+ .json for round 1) and OUTDIR/peers_rN.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

case ${1:-} in
build)
    PEERS=$2 BINDIR=$3
    mkdir -p "$BINDIR"
    "${NVCC:-nvcc}" -O3 -arch=sm_90 -std=c++17 --expt-relaxed-constexpr --expt-extended-lambda \
        -I"$PEERS/bght/include" -I"$PEERS/cuco/include" "$here/bench_peers.cu" \
        -o "$BINDIR/bench_peers"
    ;;
measure)
    GHM=$2 BENCH=$3 OUTDIR=$4 LOG2=${5:-26} ROUNDS=${6:-2}
    mkdir -p "$OUTDIR"
    for r in $(seq 1 "$ROUNDS"); do
        json=()
        [ "$r" = 1 ] && json=(--json-out "$OUTDIR/ours_r1.json")
        "$GHM" bench hash --backend cuda --seed 1 --scheme all --min-log2 "$LOG2" \
            --max-log2 "$LOG2" --reps 3 ${json[@]+"${json[@]}"} > "$OUTDIR/ours_r$r.txt" 2>&1
        "$BENCH" "$LOG2" 1 3 > "$OUTDIR/peers_r$r.txt" 2>&1
    done
    ;;
*)
    echo "usage: run.sh build PEERS BINDIR | measure GHM BENCH_PEERS OUTDIR [LOG2] [ROUNDS]" >&2
    exit 2
    ;;
esac
