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

if [ $# -ne 1 ] || ! declare -F "$1" >/dev/null; then
    echo "usage: $0 test_NAME" >&2
    exit 2
fi
"$1"
