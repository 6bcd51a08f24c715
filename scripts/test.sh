#!/usr/bin/env bash
# test.sh - the one test command (README and .ci/run call it): installs what is missing, builds,
# runs the whole suite through ctest, installs the Python package (pip install .) and runs its
# pytest suite, then runs the C suite again under AddressSanitizer and UndefinedBehaviorSanitizer
# (CPU backend), the video pipeline's tests under ThreadSanitizer, then fuzzes every reader
# briefly (scripts/fuzz.sh; FUZZ_SECONDS per target, default 15).
# CUDA tests report "skipped" without a device.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (release, CUDA when nvcc is found)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGEOHASH_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== the Python package (pip install . into build-py/venv, made by setup.sh) and its tests"
build-py/venv/bin/pip install -q --disable-pip-version-check --no-build-isolation .
build-py/venv/bin/python -m pytest -q tests/python

echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer, CPU only)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGEOHASH_SANITIZE=ON -DGEOHASH_CUDA=OFF -DGEOHASH_WERROR=ON >/dev/null
cmake --build build-asan -j "$jobs"
echo "== tests under the sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE slow

echo "== build (ThreadSanitizer, CPU only): the video pipeline's and the image queries' workers' tests"
# OMP_NUM_THREADS=1: Debian's libgomp is not instrumented, so OpenMP's own synchronisation
# would read as races; the threads checked are the pipeline's (reader, workers, ordered output).
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEOHASH_TSAN=ON -DGEOHASH_CUDA=OFF \
    -DGEOHASH_WERROR=ON >/dev/null
cmake --build build-tsan -j "$jobs" --target geohash-match check_video check_video_y4m
# tests/tsan.supp: FFmpeg's own decoding threads, uninstrumented, are not ours to check.
OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$PWD/tests/tsan.supp" \
    ctest --test-dir build-tsan --output-on-failure -j "$jobs" -LE slow \
    -R '^(video(_y4m)?\.|cli\.video_(jobs|bad_damaged|bad_truncated|y4m_stdin)|cli\.multi_)'

echo "== fuzzing every reader briefly (scripts/fuzz.sh TARGET SECONDS runs one for long)"
for src in tests/fuzz/fuzz_*.c; do
    target=$(basename "$src" .c)
    ./scripts/fuzz.sh "${target#fuzz_}" "${FUZZ_SECONDS:-15}"
done
