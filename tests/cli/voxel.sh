# tests/cli/voxel.sh - cli.sh's cases for the voxel mode (sourced by tests/cli.sh, which holds the
# helpers and runs one case: bash tests/cli.sh test_NAME; voxel edit's are in voxel_edit.sh).

# --- voxel (voxel helper) ---

# The issue's accuracy bar: >= 99 % of the kitten's voxels right against the closed bunny mesh
# (scripts/voxel_truth.py: winding numbers; unknown counts as wrong). About a minute: _slow.
test_voxel_kitten_truth_slow() {
    python3 -c 'import numpy, scipy' 2>/dev/null || { echo "numpy/scipy missing: skipped"; exit 77; }
    run_cmd 0 voxel --backend cpu -o "$TMP/k.ply" "$DATA/pointclouds/bunny.ply" "$DATA/pointclouds/kitten.ply"
    python3 "$(dirname "$0")/../scripts/voxel_truth.py" "$TMP/k.ply" \
        --mesh "$DATA/pointclouds/bunny_mesh.off" --goal 0.99 >"$TMP/truth" 2>&1 ||
        fail "kitten labels below 99 %: $(cat "$TMP/truth")"
}
# Fine grids (issue 12): two dense scans of the bunny mesh, 2M points each, made when the test
# runs (scripts/voxel_pair.py, seeded), B turned, shrunk and moved into A. At 1024^3 a voxel
# holds about 2 points, few enough that the barrier along the crossing had gaps; >= 99.99 % of
# the judged voxels of both clouds must be right at 512 and 1024 (judged by ray parity against
# the mesh, checked against winding numbers). GHM_VOXEL_BACKEND (default cpu) picks the backend.
# About two minutes on 2 cores: _slow.
test_voxel_fine_grid_truth_slow() {
    python3 -c 'import numpy, scipy' 2>/dev/null || { echo "numpy/scipy missing: skipped"; exit 77; }
    local s g c mesh
    s="$(dirname "$0")/../scripts"
    python3 "$s/voxel_pair.py" "$DATA/pointclouds/bunny_mesh.off" --points 2000000 \
        --mesh-out "$TMP/B.off" "$TMP/A.ply" "$TMP/B.ply" || fail "voxel_pair.py failed"
    for g in 512 1024; do
        run_cmd 0 voxel --backend "${GHM_VOXEL_BACKEND:-cpu}" --grid $g -o "$TMP/v.ply" \
            "$TMP/A.ply" "$TMP/B.ply"
        for c in 0 1; do
            mesh="$DATA/pointclouds/bunny_mesh.off"
            [ $c = 1 ] || mesh="$TMP/B.off"
            python3 "$s/voxel_truth.py" "$TMP/v.ply" --mesh "$mesh" --cloud $c --method parity \
                --goal 0.9999 >"$TMP/truth" 2>&1 ||
                fail "grid $g cloud $c below 99.99 %: $(cat "$TMP/truth")"
        done
    done
}

# long_pair POINTS: in $TMP, long.off (the bunny mesh stretched long: its y and z cut
# twelvefold) and A.ply, B.ply, B.off: two scans of it crossing along their length
# (scripts/voxel_pair.py).
long_pair() {
    python3 "$(dirname "$0")/../scripts/voxel_pair.py" "$DATA/pointclouds/bunny_mesh.off" \
        --stretch 1 0.0833333333333 0.0833333333333 --points "$1" --angle 2 --scale 0.9 \
        --shift 0.1 0.01 0.008 --mesh-a-out "$TMP/long.off" --mesh-out "$TMP/B.off" \
        "$TMP/A.ply" "$TMP/B.ply" || fail "voxel_pair.py failed"
}

# past 1024 voxels along an axis: two 1M-point scans of the stretched bunny (long_pair) at 2048
# (2048 x 172 x 136 voxels); every judged voxel of both clouds right, as at 1024 for the whole
# bunny
test_voxel_long_grid_truth_slow() {
    python3 -c 'import numpy, scipy' 2>/dev/null || { echo "numpy/scipy missing: skipped"; exit 77; }
    local c mesh
    long_pair 1000000
    run_cmd 0 voxel --json --backend "${GHM_VOXEL_BACKEND:-cpu}" --grid 2048 -o "$TMP/v.ply" \
        "$TMP/A.ply" "$TMP/B.ply"
    [ "$(json_get "$TMP/out" 'j["grid"]["dims"][0]')" -eq 2048 ] || fail "dims: $(cat "$TMP/out")"
    for c in 0 1; do
        mesh="$TMP/long.off"
        [ $c = 1 ] || mesh="$TMP/B.off"
        python3 "$(dirname "$0")/../scripts/voxel_truth.py" "$TMP/v.ply" --mesh "$mesh" \
            --cloud $c --method parity --goal 0.9999 >"$TMP/truth" 2>&1 ||
            fail "cloud $c below 99.99 %: $(cat "$TMP/truth")"
    done
}

# the same on a device: 200k-point scans at 2048 and 4096, and a voxel edit at 2048, give the
# CPU's PLYs byte for byte
test_voxel_long_grid_cuda_same() {
    "$BIN" --version | grep -q cuda || exit 77
    "$BIN" --backend cuda "$DATA/images/box_in_scene.png" "$DATA/images/box.png" >/dev/null 2>&1 ||
        exit 77 # no usable device here
    python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing: skipped"; exit 77; }
    local g backend
    long_pair 200000
    for g in 2048 4096; do
        for backend in cpu cuda; do
            run_cmd 0 voxel --backend $backend --grid $g -o "$TMP/$backend.ply" "$TMP/A.ply" \
                "$TMP/B.ply"
        done
        cmp -s "$TMP/cpu.ply" "$TMP/cuda.ply" || fail "the CPU and CUDA labels differ at $g"
    done
    edits_agree --grid 2048 "$TMP/A.ply" --subtract "$TMP/B.ply" --intersect "$TMP/B.ply"
}

# a grid past 2^30 voxels (the bunny and the kitten at 2048: 2048 x 1678 x 1305) is refused
# before a voxel is made, one line, no file, naming the finest grid that fits (and it does);
# past 4096 along an axis too
test_voxel_grid_too_large() {
    local fits
    run_cmd 2 voxel --backend cpu --grid 2048 -o "$TMP/never.ply" "$DATA/pointclouds/bunny.ply" \
        "$DATA/pointclouds/kitten.ply"
    expect_one_error_line "--grid"
    grep -qF "2^30 in all" "$TMP/err" || fail "$(cat "$TMP/err")"
    fits=$(sed -n 's/.*a grid of \([0-9]*\) fits$/\1/p' "$TMP/err")
    [ -n "$fits" ] || fail "no way out: $(cat "$TMP/err")"
    run_cmd 2 voxel --backend cpu --grid $((fits + 1)) "$DATA/pointclouds/bunny.ply" \
        "$DATA/pointclouds/kitten.ply"
    run_cmd 0 voxel --backend cpu --json --grid "$fits" "$DATA/pointclouds/bunny.ply" \
        "$DATA/pointclouds/kitten.ply"
    run_cmd 2 voxel --backend cpu --grid 4097 -o "$TMP/never.ply" "$DATA/pointclouds/bunny.ply" \
        "$DATA/pointclouds/kitten.ply"
    expect_one_error_line "--grid"
    [ ! -e "$TMP/never.ply" ] || fail "an output was written"
}

VOXEL_A="$DATA/pointclouds/bunny.ply"
VOXEL_B="$DATA/pointclouds/kitten.ply"

# json_get FILE EXPR: evaluates a Python expression on the JSON object `j` read from FILE.
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# only_out_err: nothing but the captured stdout/stderr is left in $TMP (no partial output).
only_out_err() {
    local extra; extra=$(ls -A "$TMP" | grep -vxE 'out|err' || true)
    [ -z "$extra" ] || fail "files left behind: $extra"
}

test_voxel_bunny_kitten_json() {
    run_cmd 0 voxel --backend cpu --json --grid 64 "$VOXEL_A" "$VOXEL_B"
    [ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "expected one JSON line"
    [ "$(json_get "$TMP/out" 'j["grid"]["dims"][0]')" -eq 64 ] || fail "dims: $(cat "$TMP/out")"
    for side in A B; do
        for key in voxels outside inside intersection; do
            [ "$(json_get "$TMP/out" "j['$side']['$key']")" -gt 0 ] || fail "$side.$key is 0"
        done
        [ "$(json_get "$TMP/out" "j['$side']['voxels'] - sum(j['$side'][k] for k in ('outside','inside','intersection','unknown'))")" -eq 0 ] \
            || fail "$side: labels do not add up"
        [ "$(json_get "$TMP/out" "j['$side']['normals']")" = file ] || fail "$side normals"
    done
    [ "$(json_get "$TMP/out" 'j["A"]["intersection"] == j["B"]["intersection"]')" = True ] \
        || fail "intersection counts differ"
    # about a quarter of the kitten lies inside the bunny (data/README.md)
    [ "$(json_get "$TMP/out" '0.15 < j["B"]["inside"] / j["B"]["voxels"] < 0.35')" = True ] \
        || fail "kitten inside fraction: $(cat "$TMP/out")"
}

test_voxel_text_summary() {
    run_cmd 0 voxel --backend cpu "$VOXEL_A" "$VOXEL_B"
    grep -q '^grid 128 x' "$TMP/out" || fail "no grid line: $(cat "$TMP/out")"
    grep -q '^B .*kitten.ply: 5210 points' "$TMP/out" || fail "no B line: $(cat "$TMP/out")"
}

test_voxel_output_ply() {
    run_cmd 0 voxel --backend cpu --json --grid 48 -o "$TMP/vox.ply" "$VOXEL_A" "$VOXEL_B"
    local n; n=$(json_get "$TMP/out" 'j["A"]["voxels"] + j["B"]["voxels"]')
    python3 - "$TMP/vox.ply" "$n" <<'PY' || fail "bad PLY output"
import struct, sys
data = open(sys.argv[1], "rb").read()
head, body = data.split(b"end_header\n", 1)
lines = head.decode().splitlines()
assert lines[0] == "ply" and lines[1] == "format binary_little_endian 1.0", lines[:2]
assert f"element vertex {sys.argv[2]}" in lines, lines
props = [l.split()[1:] for l in lines if l.startswith("property")]
assert props == [["float", "x"], ["float", "y"], ["float", "z"], ["uchar", "cloud"],
                 ["uchar", "label"], ["uchar", "red"], ["uchar", "green"], ["uchar", "blue"]], props
assert len(body) == 17 * int(sys.argv[2]), len(body)
labels = {body[17 * i + 13] for i in range(int(sys.argv[2]))}
clouds = {body[17 * i + 12] for i in range(int(sys.argv[2]))}
assert labels <= {0, 1, 2, 3} and {0, 1, 2} <= labels and clouds == {0, 1}, (labels, clouds)
PY
    run_cmd 0 voxel --backend cpu --quiet --ascii --grid 48 -o "$TMP/vox.ply" "$VOXEL_A" "$VOXEL_B"
    [ ! -s "$TMP/out" ] || fail "--quiet printed: $(cat "$TMP/out")"
    grep -q '^format ascii 1.0' "$TMP/vox.ply" || fail "not ascii"
    [ "$(sed '1,/^end_header/d' "$TMP/vox.ply" | wc -l)" -eq "$n" ] || fail "ascii row count"
    rm -f "$TMP/vox.ply"
    only_out_err
}

# voxel_bad FILE NEEDLE: the bad cloud as A (and as B) gives exit 2, one line naming the file.
voxel_bad() {
    for order in AB BA; do
        if [ $order = AB ]; then
            run_cmd 2 voxel --backend cpu -o "$TMP/never.ply" "$DATA/bad/$1" "$VOXEL_B"
        else
            run_cmd 2 voxel --backend cpu -o "$TMP/never.ply" "$VOXEL_B" "$DATA/bad/$1"
        fi
        expect_one_error_line "$1"
        grep -qF -- "$2" "$TMP/err" || fail "stderr lacks '$2': $(cat "$TMP/err")"
        only_out_err
    done
}
test_voxel_bad_empty() { voxel_bad empty.ply "empty file"; }
test_voxel_bad_off() { voxel_bad OutOfMemory.off "OFF"; }
test_voxel_bad_obj() { voxel_bad malformed.obj "OBJ"; }
test_voxel_bad_list_in_vertex() { voxel_bad issue623_list_in_vertex.ply "line 13"; }
test_voxel_bad_truncated_binary() { voxel_bad truncated_binary.ply "byte offset 29791"; }
test_voxel_bad_lying_count() { voxel_bad lying_vertex_count.ply "353535235358"; }
test_voxel_bad_no_end_header() { voxel_bad no_end_header.ply "end_header"; }
test_voxel_bad_format_line() { voxel_bad bad_format_line.ply "binary_middle_endian"; }
test_voxel_bad_nan() { voxel_bad nan_coordinates.ply "line 12: vertex 1: x is nan"; }
test_voxel_bad_missing() { voxel_bad no_such_cloud.ply "cannot open"; }

test_voxel_no_normals_estimated() {
    run_cmd 0 voxel --backend cpu --json "$DATA/bad/cube_no_normals.ply" "$VOXEL_B"
    [ "$(json_get "$TMP/out" 'j["A"]["normals"]')" = estimated ] || fail "$(cat "$TMP/out")"
    [ "$(json_get "$TMP/out" 'j["B"]["normals"]')" = file ] || fail "$(cat "$TMP/out")"
}

# turned_normals EVERY IN OUT: the ascii PLY IN with every EVERY-th point's normal turned around
# (1: all of them, inward) written to OUT.
turned_normals() {
    awk -v every="$1" 'h && n-- > 0 { k++; if (k % every == 0) $4 = -$4; if (k % every == 0) $5 = -$5
                                      if (k % every == 0) $6 = -$6 }
                       /^element vertex/ { n = $3 } { print } /^end_header/ { h = 1 }' "$2" >"$3"
}

# Normals that point inward or either way make the other cloud's labels wrong: a warning naming
# the file, "normals_check" in the JSON; --normals estimate sets it right.
test_voxel_normals_checked() {
    turned_normals 1 "$VOXEL_B" "$TMP/inward.ply"
    turned_normals 2 "$VOXEL_B" "$TMP/mixed.ply"
    run_cmd 0 voxel --backend cpu --json --grid 64 "$VOXEL_A" "$VOXEL_B"
    [ ! -s "$TMP/err" ] || fail "a warning for good normals: $(cat "$TMP/err")"
    [ "$(json_get "$TMP/out" 'j["A"]["normals_check"], j["B"]["normals_check"]')" = \
        "consistent consistent" ] || fail "$(cat "$TMP/out")"
    local want
    want=$(json_get "$TMP/out" 'j["A"]["inside"]')
    run_cmd 0 voxel --backend cpu --json --grid 64 "$VOXEL_A" "$TMP/inward.ply"
    expect_one_error_line "inward.ply: its normals point inward"
    [ "$(json_get "$TMP/out" 'j["B"]["normals_check"]')" = inward ] || fail "$(cat "$TMP/out")"
    [ "$(json_get "$TMP/out" 'j["A"]["inside"]')" -gt "$((want * 2))" ] ||
        fail "A's inside with B's inward normals (B's outside taken as inside): $(cat "$TMP/out")"
    run_cmd 0 voxel --backend cpu --json --grid 64 "$TMP/mixed.ply" "$VOXEL_A"
    expect_one_error_line "mixed.ply: its normals point either way"
    [ "$(json_get "$TMP/out" 'j["A"]["normals_check"]')" = mixed ] || fail "$(cat "$TMP/out")"
    # estimated, the kitten's inside is found again: every A voxel labelled as with the file's
    run_cmd 0 voxel --backend cpu --json --grid 64 --normals estimate "$VOXEL_A" "$TMP/inward.ply"
    [ ! -s "$TMP/err" ] || fail "$(cat "$TMP/err")"
    [ "$(json_get "$TMP/out" 'j["B"]["normals"], "normals_check" in j["B"]')" = \
        "estimated False" ] || fail "$(cat "$TMP/out")"
    [ "$(json_get "$TMP/out" 'j["A"]["inside"]')" -gt "$((want * 9 / 10))" ] ||
        fail "A's inside with B's normals estimated: $(cat "$TMP/out") against $want"
    run_cmd 2 voxel --normals flipped "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line "--normals: 'flipped' is not one of file, estimate"
}

# Two clouds in different units (the parasaurolophus in millimetres, the bunny in metres): a
# warning naming the smaller; clouds of one size get none.
test_voxel_units_warning() {
    run_cmd 0 voxel --backend cpu --grid 32 "$DATA/pointclouds/parasaurolophus_6700.ply" "$VOXEL_A"
    expect_one_error_line "bunny.ply: it is 227 times smaller than"
    grep -q "same units" "$TMP/err" || fail "$(cat "$TMP/err")"
    run_cmd 0 voxel --backend cpu --grid 32 "$VOXEL_A" "$VOXEL_B"
    [ ! -s "$TMP/err" ] || fail "a warning for clouds of one size: $(cat "$TMP/err")"
    awk '/^element vertex/ { n = $3 } h && n-- > 0 { $1 *= 1000; $2 *= 1000; $3 *= 1000 } { print }
         /^end_header/ { h = 1 }' "$VOXEL_B" >"$TMP/kitten_mm.ply"
    # the base then falls in one voxel of the edit's grid: the warning says why it has no inside
    run_cmd 2 voxel edit --backend cpu --grid 32 "$VOXEL_B" --add "$TMP/kitten_mm.ply"
    grep -q "warning: .*kitten_mm.ply: it is 1000 times larger than" "$TMP/err" ||
        fail "$(cat "$TMP/err")"
    grep -q "kitten.ply: has no inside at this grid" "$TMP/err" || fail "$(cat "$TMP/err")"
}

# A cloud piped in as - (a converter's output): the same answer as the file; one - at most.
test_voxel_cloud_from_stdin() {
    run_cmd 0 voxel --backend cpu --json --grid 32 "$VOXEL_A" "$VOXEL_B"
    json_get "$TMP/out" 'j["B"]' | sed 's/.file.: [^,]*,//' >"$TMP/want"
    cat "$VOXEL_B" | "$BIN" voxel --backend cpu --json --grid 32 "$VOXEL_A" - >"$TMP/out" ||
        fail "voxel A - failed"
    json_get "$TMP/out" 'j["B"]' | sed 's/.file.: [^,]*,//' >"$TMP/got"
    cmp -s "$TMP/want" "$TMP/got" || fail "B from - differs: $(cat "$TMP/got") vs $(cat "$TMP/want")"
    run_cmd 2 voxel --backend cpu - - </dev/null
    expect_one_error_line "only one of A and B"
    printf 'not a cloud\n' | "$BIN" voxel --backend cpu - "$VOXEL_A" >"$TMP/out" 2>"$TMP/err" &&
        fail "a bad cloud on standard input was read"
    expect_one_error_line "standard input: line 1"
    cat "$VOXEL_B" | "$BIN" voxel edit --backend cpu --grid 32 "$VOXEL_A" --subtract - \
        >"$TMP/out" 2>"$TMP/err" || fail "voxel edit ... --subtract - failed: $(cat "$TMP/err")"
    run_cmd 2 voxel edit --backend cpu "$VOXEL_A" --add - --subtract - </dev/null
    expect_one_error_line "only one cloud can be read from standard input"
}

test_voxel_bad_options() {
    run_cmd 2 voxel --grid 0 "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line --grid
    run_cmd 2 voxel --voxel-size 1e-9 "$VOXEL_A" "$VOXEL_B"
    grep -q 'at most 4096 per axis' "$TMP/err" || fail "$(cat "$TMP/err")"
    run_cmd 2 voxel --transform-b 1,2,3 "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line --transform-b
    run_cmd 2 voxel --transform-b 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1 --rotate-b 1,2,3 "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line --rotate-b
    run_cmd 2 voxel "$VOXEL_A"
    grep -q missing "$TMP/err" || fail "$(cat "$TMP/err")"
    run_cmd 2 voxel -o /nonexistent_dir/x.ply "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line /nonexistent_dir/x.ply
    run_cmd 0 voxel --help
    grep -q -- --sweep "$TMP/out" || fail "help lacks --sweep"
}

test_voxel_sweep_json_lines() {
    run_cmd 0 voxel --backend cpu --json --grid 48 --sweep 4 --rotate-b 0,0,40 \
        --translate-b 0.1,0,0 -o "$TMP/last.ply" "$VOXEL_A" "$VOXEL_B"
    [ "$(wc -l <"$TMP/out")" -eq 4 ] || fail "expected 4 lines: $(cat "$TMP/out")"
    python3 - "$TMP/out" <<'PY' || fail "bad JSON Lines"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["step"] for r in rows] == [0, 1, 2, 3]
assert abs(rows[0]["t"]) < 1e-12 and abs(rows[-1]["t"] - 1) < 1e-12
assert len({json.dumps(r["grid"]) for r in rows}) == 1          # one grid for the sweep
assert rows[0]["B"]["inside"] != rows[-1]["B"]["inside"]        # B did move
PY
    [ -s "$TMP/last.ply" ] || fail "no output of the last step"
}

# --gpus: a bad value, or several devices without CUDA, is one line and exit 2; "all" without
# a device runs as without the option.
test_voxel_gpus_bad() {
    run_cmd 2 voxel --gpus 0 --sweep 3 "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line --gpus
    run_cmd 2 voxel --gpus two --sweep 3 "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line --gpus
    run_cmd 2 voxel --backend cpu --gpus 2 --sweep 3 "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line "needs the CUDA backend"
    run_cmd 0 voxel --backend cpu --gpus all --grid 32 --sweep 2 "$VOXEL_A" "$VOXEL_B"
    [ ! -s "$TMP/err" ] || fail "--gpus all on the CPU: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/out")" -eq 2 ] || fail "expected 2 lines: $(cat "$TMP/out")"
}

# --gpus 2 deals a sweep's steps to two devices: the lines (timings aside) and the last step's
# PLY are one device's; one step warns and runs on one device.
test_voxel_sweep_gpus_same_output() {
    need_cuda_devices 2
    local sweep=(--grid 96 --sweep 7 --rotate-b 0,0,40 --translate-b 0.1,0,0) g
    for g in 1 2; do
        run_cmd 0 voxel --backend cuda --json --gpus $g -o "$TMP/last.$g.ply" "${sweep[@]}" \
            "$VOXEL_A" "$VOXEL_B"
        strip_timings "$TMP/out" >"$TMP/lines.$g"
        run_cmd 0 voxel --backend cuda --gpus $g "${sweep[@]}" "$VOXEL_A" "$VOXEL_B"
        sed -E 's/ \| [0-9.]+ ms$//' "$TMP/out" >"$TMP/text.$g"
    done
    [ "$(wc -l <"$TMP/lines.2")" -eq 7 ] || fail "expected 7 lines: $(cat "$TMP/lines.2")"
    cmp -s "$TMP/lines.1" "$TMP/lines.2" ||
        fail "--gpus 1 and 2 differ: $(diff "$TMP/lines.1" "$TMP/lines.2" | head -c 600)"
    cmp -s "$TMP/text.1" "$TMP/text.2" || fail "text: $(diff "$TMP/text.1" "$TMP/text.2")"
    cmp -s "$TMP/last.1.ply" "$TMP/last.2.ply" || fail "the last step's PLY differs"
    run_cmd 0 voxel --backend cuda --gpus 2 --grid 32 "$VOXEL_A" "$VOXEL_B"
    expect_one_error_line "one step runs on one device"
}

# Under mpirun a sweep is cut into ranges of steps, one per rank: rank 0 prints every line in
# step order, the lines (timings aside) and the last step's PLY are one process's, a warning
# about a cloud (the inward normals carried into every line's JSON) is said once; a one-step run
# and an edit stay rank 0's alone, and a missing cloud is one line.
test_voxel_sweep_mpi_ranks() {
    local sweep=(--backend cpu --grid 48 --sweep 7 --rotate-b 0,0,40 --translate-b 0.1,0,0) f
    turned_normals 1 "$VOXEL_B" "$TMP/inward.ply"
    for f in json text; do
        local as=(); [ $f = json ] && as=(--json)
        run_cmd 0 voxel "${as[@]}" "${sweep[@]}" -o "$TMP/one.ply" "$VOXEL_A" "$TMP/inward.ply"
        strip_timings "$TMP/out" | sed -E 's/ \| [0-9.]+ ms$//' >"$TMP/one"
        cp "$TMP/err" "$TMP/one.err"
        mpirun_cmd 3 voxel "${as[@]}" "${sweep[@]}" -o "$TMP/three.ply" "$VOXEL_A" \
            "$TMP/inward.ply" || fail "3 ranks, $f: $(head -c 600 "$TMP/err")"
        strip_timings "$TMP/out" | sed -E 's/ \| [0-9.]+ ms$//' >"$TMP/three"
        [ "$(wc -l <"$TMP/three")" -eq 7 ] || fail "$f: $(cat "$TMP/three")"
        cmp -s "$TMP/one" "$TMP/three" || fail "$f: $(diff "$TMP/one" "$TMP/three" | head -c 600)"
        cmp -s "$TMP/one.ply" "$TMP/three.ply" || fail "$f: the last step's PLY differs"
        expect_one_error_line "inward.ply: its normals point inward"
        cmp -s "$TMP/one.err" "$TMP/err" || fail "$f: said $(cat "$TMP/err")"
    done
    mpirun_cmd 2 voxel --json "${sweep[@]}" "$VOXEL_A" "$TMP/inward.ply" || fail "2 ranks"
    [ "$(grep -c '"normals_check":"inward"' "$TMP/out")" -eq 7 ] ||
        fail "the verdict is not in every line: $(cat "$TMP/out")"
    mpirun_cmd 2 voxel --json --backend cpu --grid 32 "$VOXEL_A" "$VOXEL_B" ||
        fail "one step, 2 ranks: $(head -c 600 "$TMP/err")"
    [ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "one step printed $(wc -l <"$TMP/out") lines"
    mpirun_cmd 2 voxel edit --json --backend cpu --grid 32 "$VOXEL_A" --subtract "$VOXEL_B" ||
        fail "an edit, 2 ranks: $(head -c 600 "$TMP/err")"
    [ "$(wc -l <"$TMP/out")" -eq 1 ] && grep -q '"op":"subtract"' "$TMP/out" ||
        fail "an edit printed: $(cat "$TMP/out")"
    mpirun_cmd 2 voxel --backend cpu --sweep 3 "$VOXEL_A" "$TMP/no_such.ply"
    [ "$?" -eq 2 ] || fail "a missing cloud under 2 ranks did not exit 2"
    [ "$(grep -c 'no_such.ply' "$TMP/err")" -eq 1 ] || fail "said: $(cat "$TMP/err")"
    printf 'ply\nformat binary_little_endian 1.0\nelement vertex 9\n' >"$TMP/cut.ply"
    mpirun_cmd 3 voxel --backend cpu --sweep 3 "$TMP/cut.ply" "$VOXEL_B"
    [ "$?" -eq 2 ] || fail "a damaged cloud under 3 ranks did not exit 2"
    [ "$(grep -c 'cut.ply' "$TMP/err")" -eq 1 ] || fail "said: $(cat "$TMP/err")"
}

test_voxel_preview() {
    run_cmd 0 voxel --backend cpu --quiet --grid 64 --preview "$TMP/view.png" --preview-axis x \
        "$VOXEL_A" "$VOXEL_B"
    [ "$(head -c 8 "$TMP/view.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
        || fail "not a PNG"
}

test_voxel_threads_agree() {
    run_cmd 0 voxel --backend cpu --threads 1 --grid 64 -o "$TMP/t1.ply" "$VOXEL_A" "$VOXEL_B"
    run_cmd 0 voxel --backend cpu --threads 2 --grid 64 -o "$TMP/t2.ply" "$VOXEL_A" "$VOXEL_B"
    cmp -s "$TMP/t1.ply" "$TMP/t2.ply" || fail "1 and 2 threads differ"
}

test_voxel_xyz_input_same_as_ply() {
    # the kitten as XYZ text (x y z nx ny nz), named .txt: recognised by content
    sed '1,/^end_header/d' "$VOXEL_B" >"$TMP/kitten.txt"
    run_cmd 0 voxel --backend cpu --json --grid 64 "$VOXEL_A" "$TMP/kitten.txt"
    mv "$TMP/out" "$TMP/xyz.json"
    run_cmd 0 voxel --backend cpu --json --grid 64 "$VOXEL_A" "$VOXEL_B"
    python3 - "$TMP/xyz.json" "$TMP/out" <<'PY' || fail "XYZ and PLY inputs differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
keys = ("points", "voxels", "outside", "inside", "intersection", "unknown", "normals")
assert all(a[s][k] == b[s][k] for s in "AB" for k in keys), (a, b)
PY
    rm -f "$TMP/kitten.txt" "$TMP/xyz.json"
}

test_voxel_identity_transform() {
    run_cmd 0 voxel --backend cpu --json --grid 64 "$VOXEL_A" "$VOXEL_B"
    mv "$TMP/out" "$TMP/plain.json"
    run_cmd 0 voxel --backend cpu --json --grid 64 --transform-b 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1 \
        "$VOXEL_A" "$VOXEL_B"
    python3 - "$TMP/plain.json" "$TMP/out" <<'PY' || fail "identity transform changed the result"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["grid"] == b["grid"] and a["A"] == b["A"] and a["B"] == b["B"]
PY
    # a shift that takes the kitten away from the bunny: nothing crosses, all unknown
    run_cmd 0 voxel --backend cpu --json --grid 64 --translate-b 5,0,0 "$VOXEL_A" "$VOXEL_B"
    [ "$(json_get "$TMP/out" 'j["B"]["intersection"] == 0 and j["B"]["unknown"] == j["B"]["voxels"]')" = True ] \
        || fail "$(cat "$TMP/out")"
    rm -f "$TMP/plain.json"
}
