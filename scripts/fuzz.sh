#!/usr/bin/env bash
# fuzz.sh TARGET [SECONDS] - runs one libFuzzer target of tests/fuzz (image, pointcloud, y4m,
# reference) for SECONDS (default 300) under AddressSanitizer and UndefinedBehaviorSanitizer,
# from its kept inputs (tests/fuzz/corpus/TARGET) and its seeds from data/
# (tests/fuzz/seeds/TARGET.txt). Builds build-fuzz with clang first. An input that crashes,
# leaks, hangs (over 10 s) or trips a sanitizer is written to build-fuzz/crashes/TARGET/ and the
# script exits 1: fix the bug, then keep the input in tests/fuzz/corpus/TARGET/ so that the
# fuzz_replay.TARGET test replays it in every build. New inputs the fuzzer finds interesting
# stay in build-fuzz/corpus/TARGET/ (not committed).
#   FUZZ_JOBS=N runs N fuzzing processes at once (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET [SECONDS]  (targets: $(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||' | tr '\n' ' '))}
seconds=${2:-300}
[ -f "tests/fuzz/fuzz_$target.c" ] || { echo "fuzz.sh: no target '$target' (tests/fuzz/fuzz_$target.c)" >&2; exit 2; }
command -v clang >/dev/null || { echo "fuzz.sh: clang is missing (run scripts/setup.sh)" >&2; exit 2; }

CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEOHASH_FUZZ=ON \
    -DGEOHASH_CUDA=OFF -DGEOHASH_FFMPEG=OFF >/dev/null
cmake --build build-fuzz --target "fuzz_$target" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

corpus=build-fuzz/corpus/$target crashes=build-fuzz/crashes/$target
mkdir -p "$corpus" "$crashes"
cp tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
while read -r glob; do
    [ -n "$glob" ] && cp $glob "$corpus"/ 2>/dev/null || true
done <"tests/fuzz/seeds/$target.txt"

echo "fuzz.sh: $target for $seconds s from $(ls "$corpus" | wc -l) inputs"
jobs=()
[ "${FUZZ_JOBS:-1}" -gt 1 ] && jobs=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS")
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "build-fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=1048576 -close_fd_mask=3 "${jobs[@]}" \
    -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" 2>build-fuzz/fuzz_$target.log ||
    { tail -40 "build-fuzz/fuzz_$target.log" >&2; echo "fuzz.sh: $target failed; inputs in $crashes" >&2; exit 1; }
grep -E "stat::number_of_executed_units|stat::new_units_added" "build-fuzz/fuzz_$target.log" | sed "s/^/fuzz.sh: $target /"
