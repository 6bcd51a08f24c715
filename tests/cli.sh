#!/usr/bin/env bash
# cli.sh - end-to-end tests of the geohash-match command line. ctest runs one function per case:
#   bash tests/cli.sh test_NAME     (GHM_BIN, GHM_DATA set by CMake)
# Each test_* function returns 0 on success; fail() prints why. Exit 77 means skipped.
set -u
BIN=${GHM_BIN:?GHM_BIN must point at the geohash-match binary}
DATA=${GHM_DATA:?GHM_DATA must point at data/}
TMP=$(mktemp -d)
PYBIN=$(mktemp -d)
trap 'rm -rf "$TMP" "$PYBIN"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The Python helpers of the tests (scripts/voxel_pair.py, the truth scripts) need NumPy and SciPy,
# which setup.sh installs for Debian's python3 (python3-numpy, python3-scipy): that one where it
# is and has NumPy (a GPU machine's may not, its NumPy being another python3's), not whichever
# python3 comes first on PATH (a pyenv's, without them, made every accuracy
# test skip on a clean clone of this machine, 2026-12-01). First on PATH, not a shell function:
# a background `python3 ... &` must be the process itself ($!), as big_write's is; from a folder
# of its own, since tests check that $TMP holds only what they made.
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    ln -s /usr/bin/python3 "$PYBIN/python3" && PATH="$PYBIN:$PATH"
fi

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

# OpenMP's idle threads sleep at once (GNU OpenMP's spin count 0) unless the user chose how they
# wait: two processes on the same cores otherwise spin for each other's descheduled threads.
test_openmp_waits_passively() {
    spin_count() {
        env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$@" "$BIN" --version \
            2>&1 >/dev/null | sed -n "s/^.*GOMP_SPINCOUNT = '\([0-9]*\)'$/\1/p" | tail -1
    }
    [ -n "$(spin_count)" ] || exit 77 # not GNU's OpenMP runtime: no spin count to read
    [ "$(spin_count)" = 0 ] || fail "OpenMP's threads spin $(spin_count) times before sleeping"
    [ "$(spin_count env OMP_WAIT_POLICY=active)" != 0 ] || fail "the user's active policy lost"
    [ "$(spin_count env GOMP_SPINCOUNT=1000)" = 1000 ] || fail "the user's spin count lost"
}

test_missing_arguments() {
    run_cmd 2
    grep -q 'missing' "$TMP/err" || fail "no 'missing' in: $(cat "$TMP/err")"
}

# getopt's own lines begin as every other error line, naming the sub-command.
test_unknown_option() {
    run_cmd 2 --no-such-option a b
    local args want
    for args in "--no-such-option a b|geohash-match: unrecognized option" \
        "voxel --no-such-option a b|geohash-match voxel: unrecognized option" \
        "voxel edit --grid|geohash-match voxel edit: option '--grid' requires an argument" \
        "bench hash --no-such-option|geohash-match bench hash: unrecognized option" \
        "match --no-such-option a b|geohash-match match: unrecognized option"; do
        want=${args#*|}
        # shellcheck disable=SC2086
        run_cmd 2 ${args%%|*}
        [ "$(head -1 "$TMP/err" | cut -c1-${#want})" = "$want" ] ||
            fail "'${args%%|*}': $(head -1 "$TMP/err")"
    done
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

# A GPU this build cannot run (faked by raising the minimum compute capability): --backend cuda
# is one clear error, auto falls back to the CPU and says so under --verbose. Needs a GPU.
test_cuda_device_too_old() {
    "$BIN" --version | grep -q cuda || exit 77
    GHM_CUDA_MIN_CC=1000 run_cmd 2 --backend cuda "$DATA/images/box_in_scene.png" "$DATA/images/box.png"
    expect_one_error_line "sm_1000"
    # auto picks the CPU for a pair, and for a few queries; 20 on one thread would go to CUDA
    local many=()
    for i in $(seq 20); do many+=("$DATA/images/box.png"); done
    GHM_CUDA_MIN_CC=1000 run_cmd 0 --verbose --threads 1 "$DATA/images/box_in_scene.png" "${many[@]}"
    grep -q "using the CPU backend: CUDA device 0 is sm_" "$TMP/err" ||
        fail "no fallback line in: $(head -c 600 "$TMP/err")"
    grep -q "found" "$TMP/out" || fail "the CPU did not find the box: $(cat "$TMP/out")"
}

# One image pair under --backend auto runs on the CPU (CUDA's start-up costs more than the pair),
# and so do image queries that the CPU's threads answer sooner (cmd_match.c: 110 ms + n * 18 ms /
# threads against 420 ms + 0.71 ms a query on CUDA): 2 on any machine; 20 on one thread keep the
# device.
# Needs a device to mean anything.
test_auto_one_pair_on_cpu() {
    "$BIN" --version | grep -q cuda || exit 77
    "$BIN" --backend cuda "$DATA/images/box_in_scene.png" "$DATA/images/box.png" >/dev/null 2>&1 ||
        exit 77 # no usable device here
    run_cmd 0 --verbose "$DATA/images/box_in_scene.png" "$DATA/images/box.png"
    grep -q "one image pair runs on the CPU" "$TMP/err" || fail "no CPU line: $(cat "$TMP/err")"
    run_cmd 0 --verbose "$DATA/images/box_in_scene.png" "$DATA/images/box.png" "$DATA/images/box.png"
    grep -q "a run of image queries runs on the CPU" "$TMP/err" || fail "2 queries: $(cat "$TMP/err")"
    local many=()
    for i in $(seq 20); do many+=("$DATA/images/box.png"); done
    run_cmd 0 --verbose --threads 1 "$DATA/images/box_in_scene.png" "${many[@]}"
    grep -q "runs on the CPU" "$TMP/err" && fail "20 queries on one thread went to the CPU"
    [ "$(grep -c "found" "$TMP/out")" -eq 20 ] || fail "not found: $(cat "$TMP/out")"
}

# A plain REFERENCE QUERY run builds its reference for the one query (on the CPU without the
# signature table, which --verbose says); a run of two builds the table; the answers are the same.
test_one_query_without_table() {
    local ref="$DATA/images/box_in_scene.png" q="$DATA/images/box.png"
    run_cmd 0 --verbose --json --backend cpu "$ref" "$q"
    grep -q "for one query: no table" "$TMP/err" || fail "one query: $(cat "$TMP/err")"
    local one; one=$(grep -o '"transform":{[^}]*}' "$TMP/out")
    run_cmd 0 --verbose --json --backend cpu "$ref" "$q" "$q"
    grep -q "no table" "$TMP/err" && fail "two queries without the table: $(cat "$TMP/err")"
    [ -n "$one" ] && [ "$(grep -o '"transform":{[^}]*}' "$TMP/out" | sort -u)" = "$one" ] ||
        fail "answers differ: $one / $(cat "$TMP/out")"
    # a saved reference loaded for one query, too
    run_cmd 0 --backend cpu --save-ref "$TMP/ref.ghm" "$ref"
    run_cmd 0 --verbose --json --backend cpu --load-ref "$TMP/ref.ghm" "$q"
    grep -q "for one query: no table" "$TMP/err" || fail "--load-ref: $(cat "$TMP/err")"
    [ "$(grep -o '"transform":{[^}]*}' "$TMP/out")" = "$one" ] || fail "--load-ref: $(cat "$TMP/out")"
}

test_missing_file() {
    run_cmd 2 --backend cpu "$DATA/images/no_such_file.png" "$DATA/images/box.png"
    expect_one_error_line no_such_file.png
}

test_bench_unknown() {
    run_cmd 2 bench no-such-bench
}

# The benchmarks are never timed in tests; these check that they run and write valid JSON.
test_bench_match_runs() {
    run_cmd 0 bench match --backend cpu --reps 1 --data "$DATA" --json-out "$TMP/m.json"
    python3 - "$TMP/m.json" <<'PY' || fail "bad bench match JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bench"] == "match" and len(d["rows"]) == 3, d
assert all(r["found"] for r in d["rows"]), "a benchmark case found no match"
assert all(r["median_ms"]["total"] > 0 for r in d["rows"])
PY
}

test_bench_hash_quick() {
    run_cmd 0 bench hash --backend cpu --quick --json-out "$TMP/h.json"
    python3 - "$TMP/h.json" <<'PY' || fail "bad bench hash JSON"
import json, sys
d = json.load(open(sys.argv[1]))
orders = {(r["layout"], r["order"]) for r in d["coherent"]}
for layout in {r["layout"] for r in d["coherent"]}:  # the paper's three key orders each
    assert {o for l, o in orders if l == layout} == {"row-major", "morton", "bit-reversal"}, orders
PY
}

# bench tables checks every answer against a binary search itself (exit 2 on a wrong one).
test_bench_tables_runs() {
    run_cmd 0 bench tables --backend cpu --reps 1 --grid 32,128 \
        --cloud "$DATA/pointclouds/kitten.ply" \
        --pair "$DATA/images/box_in_scene.png,$DATA/images/box.png" --json-out "$TMP/t.json"
    python3 - "$TMP/t.json" <<'PY' || fail "bad bench tables JSON"
import json, sys
d = json.load(open(sys.argv[1]))
sets = d["key_sets"]
assert d["bench"] == "tables" and [s["kind"] for s in sets] == ["voxel"] * 2 + ["signature"], d
assert [s["grid"] for s in sets] == [32, 128, 0]
for s in sets:
    assert len(s["schemes"]) == 8 and s["queries"] > 0, s
    assert all(r["find_ms"] > 0 and r["bytes"] > 0 for r in s["schemes"]), s
sig = sets[2]
assert 0.9 < sig["present_share"] <= 1.0, sig  # a query's signatures fill most of the space
PY
    run_cmd 2 bench tables --backend cpu --pair "$DATA/images/box.png"
    expect_one_error_line "--pair"
    run_cmd 2 bench tables --backend cpu --pair "$TMP/none.png,$DATA/images/box.png"
    expect_one_error_line "none.png"
    run_cmd 2 bench tables --backend cpu --cloud "$DATA/bad/empty.ply"
    expect_one_error_line "empty.ply"
}

# bench distmap checks every answer of its first run itself (exit 2 on a wrong one).
test_bench_distmap_quick() {
    run_cmd 0 bench distmap --backend cpu --quick --parts 3 --json-out "$TMP/d.json"
    python3 - "$TMP/d.json" <<'PY' || fail "bad bench distmap JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["benchmark"] == "distmap" and d["parts"] == 3 and len(d["contexts"]) == 3, d
assert d["keys"] == 1 << 14 and all(d[k]["find_present"] > 0 for k in ("one_map", "dist_map")), d
PY
    run_cmd 2 bench distmap --backend cpu --gpus 2
    expect_one_error_line "--gpus"
}

test_bench_dynmap_quick() {
    run_cmd 0 bench dynmap --backend cpu --quick --json-out "$TMP/d.json"
    python3 - "$TMP/d.json" <<'PY' || fail "bad bench dynmap JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["benchmark"] == "dynmap" and len(d["buckets"]) == 12 and len(d["sizes"]) == 30, d
assert {r["variant"] for r in d["buckets"]} == {"atomic64", "accel32", "accel8"}
assert all(r["insert_ms"] > 0 and r["find50_ms"] > 0 and r["slabs_used"] > 0
           for r in d["buckets"] + d["sizes"])
assert d["baseline"]["find_ms"] > 0
PY
}

# --variant picks the variants measured; a name it does not know is one error line, exit 2.
test_bench_dynmap_variant() {
    run_cmd 0 bench dynmap --backend cpu --quick --variant accel8 --json-out "$TMP/d.json"
    python3 - "$TMP/d.json" <<'PY' || fail "bad bench dynmap --variant JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["buckets"]) == 4 and len(d["sizes"]) == 10, d
assert {r["variant"] for r in d["buckets"] + d["sizes"]} == {"accel8"}, d
assert [r["slots_per_slab"] for r in d["buckets"]] == [4] * 4, d
PY
    run_cmd 2 bench dynmap --backend cpu --quick --variant accel16
    expect_one_error_line "accel16"
}

# File names with quotes, backslashes, non-ASCII and even invalid UTF-8 must still give valid
# JSON (jansson; invalid bytes become U+FFFD).
test_json_odd_file_names() {
    local odd=$'$TMP/q"uo\\te caf\xc3\xa9 \xff.png'
    odd=${odd/\$TMP/$TMP}
    cp "$DATA/pairs/dev_02_query.png" "$odd" || fail "cannot make the odd file name"
    run_cmd 0 --json --backend cpu "$DATA/images/box_in_scene.png" "$odd"
    python3 - "$TMP/out" <<'PY' || fail "invalid JSON for an odd file name: $(cat "$TMP/out")"
import json, sys
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # strict: the output itself is valid UTF-8
d = json.loads(raw)
path = d["query"]["path"]
assert '"' in path and "\\" in path and "caf\u00e9" in path and "\ufffd" in path, path
assert d["found"] is True
PY
}

# The cases of each mode, in files of their own.
for part in "$(dirname "${BASH_SOURCE[0]}")"/cli/*.sh; do
    # shellcheck source=/dev/null
    . "$part"
done

if [ $# -ne 1 ] || ! declare -F "$1" >/dev/null; then
    echo "usage: $0 test_NAME" >&2
    exit 2
fi
"$1"
