#!/usr/bin/env bash
# cli.sh - end-to-end tests of the geohash-match command line. ctest runs one function per case:
#   bash tests/cli.sh test_NAME     (GHM_BIN, GHM_DATA set by CMake)
# Each test_* function returns 0 on success; fail() prints why. Exit 77 means skipped.
set -u
BIN=${GHM_BIN:?GHM_BIN must point at the geohash-match binary}
DATA=${GHM_DATA:?GHM_DATA must point at data/}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# run_cmd EXPECTED_STATUS ARGS...: runs the binary, keeps stdout/stderr in $TMP/out and $TMP/err.
run_cmd() {
    local want=$1; shift
    "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(head -c 600 "$TMP/err")"
}

# expect_one_error_line FILE_SUBSTRING: stderr is exactly one line and names the file.
expect_one_error_line() {
    local lines; lines=$(wc -l <"$TMP/err")
    [ "$lines" -eq 1 ] || fail "expected one line on stderr, got $lines: $(cat "$TMP/err")"
    grep -qF -- "$1" "$TMP/err" || fail "stderr does not name '$1': $(cat "$TMP/err")"
}

test_help() {
    run_cmd 0 --help
    for word in voxel bench --backend --json --seed --threads "Exit status"; do
        grep -qF -- "$word" "$TMP/out" || fail "--help does not mention $word"
    done
}

test_version() {
    run_cmd 0 --version
    grep -qE '^geohash-match [0-9]+\.[0-9]+\.[0-9]+' "$TMP/out" || fail "bad version line: $(cat "$TMP/out")"
}

test_missing_arguments() {
    run_cmd 2
    grep -q 'missing' "$TMP/err" || fail "no 'missing' in: $(cat "$TMP/err")"
}

test_unknown_option() {
    run_cmd 2 --no-such-option a b
}

test_bad_backend_value() {
    run_cmd 2 --backend gpu a b
    grep -qF -- '--backend' "$TMP/err" || fail "error does not name --backend"
}

test_bad_threads_value() {
    run_cmd 2 --threads many a b
    grep -qF -- '--threads' "$TMP/err" || fail "error does not name --threads"
}

test_cuda_without_device() {
    if "$BIN" --version | grep -q cuda; then exit 77; fi
    run_cmd 2 --backend cuda "$DATA/images/box_in_scene.png" "$DATA/images/box.png"
    grep -qi 'cuda' "$TMP/err" || fail "no CUDA in: $(cat "$TMP/err")"
}

test_missing_file() {
    run_cmd 2 --backend cpu "$DATA/images/no_such_file.png" "$DATA/images/box.png"
    expect_one_error_line no_such_file.png
}

test_bench_unknown() {
    run_cmd 2 bench no-such-bench
}

# --- image input (image I/O helper) ---
# A damaged or foreign QUERY image: exit 2 and one stderr line that names the file and says why.
bad_image() {
    run_cmd 2 --backend cpu "$DATA/images/box_in_scene.png" "$DATA/bad/$1"
    expect_one_error_line "$1"
    grep -qF -- "$2" "$TMP/err" || fail "stderr does not say '$2': $(cat "$TMP/err")"
}

test_bad_image_empty() { bad_image empty.png "empty file"; }
test_bad_image_corrupt_signature() { bad_image corrupt_signature.png "not a PNG or JPEG image"; }
test_bad_image_corrupt_ihdr_crc() { bad_image corrupt_ihdr_crc.png "CRC error"; }
test_bad_image_huge_dimensions() { bad_image huge_dimensions.png "above the limit"; }
test_bad_image_truncated_jpg() { bad_image truncated.jpg "truncated JPEG data"; }
test_bad_image_not_an_image() { bad_image not_an_image.jpg "not a PNG or JPEG image"; }

# The same when the bad image is the REFERENCE, and for a PNG cut short in a temporary copy.
test_bad_image_as_reference() {
    run_cmd 2 --backend cpu "$DATA/bad/truncated.jpg" "$DATA/images/box.png"
    expect_one_error_line truncated.jpg
}

test_bad_image_truncated_png() {
    head -c 20000 "$DATA/images/box.png" >"$TMP/cut.png"
    run_cmd 2 --backend cpu "$DATA/images/box_in_scene.png" "$TMP/cut.png"
    expect_one_error_line cut.png
    grep -qF "truncated PNG data" "$TMP/err" || fail "not reported as truncated: $(cat "$TMP/err")"
}

if [ $# -ne 1 ] || ! declare -F "$1" >/dev/null; then
    echo "usage: $0 test_NAME" >&2
    exit 2
fi
"$1"
