# tests/cli/voxel.sh - cli.sh's cases for the voxel mode and voxel edit (sourced by tests/cli.sh, which holds
# the helpers and runs one case: bash tests/cli.sh test_NAME).

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
# past 1024 voxels along an axis: the bunny mesh stretched to a long shape (its y and z cut
# twelvefold), two 1M-point scans crossing along it, at 2048 (2048 x 172 x 136 voxels); every
# judged voxel of both clouds right, as at 1024 for the whole bunny
test_voxel_long_grid_truth_slow() {
    python3 -c 'import numpy, scipy' 2>/dev/null || { echo "numpy/scipy missing: skipped"; exit 77; }
    local s c mesh
    s="$(dirname "$0")/../scripts"
    python3 - "$DATA/pointclouds/bunny_mesh.off" "$TMP/long.off" <<'PY' || fail "stretch failed"
import sys
w = open(sys.argv[1]).read().split()
nv, nf = int(w[1]), int(w[2])
v = [float(x) for x in w[4:4 + 3 * nv]]
with open(sys.argv[2], "w") as o:
    o.write("OFF\n%d %d 0\n" % (nv, nf))
    for i in range(nv):
        o.write("%.9g %.9g %.9g\n" % (v[3 * i], v[3 * i + 1] / 12, v[3 * i + 2] / 12))
    f = w[4 + 3 * nv:]
    for i in range(nf):
        o.write(" ".join(f[4 * i:4 * i + 4]) + "\n")
PY
    python3 "$s/voxel_pair.py" "$TMP/long.off" --points 1000000 --angle 2 --scale 0.9 \
        --shift 0.1 0.01 0.008 --mesh-out "$TMP/B.off" "$TMP/A.ply" "$TMP/B.ply" ||
        fail "voxel_pair.py failed"
    run_cmd 0 voxel --json --backend "${GHM_VOXEL_BACKEND:-cpu}" --grid 2048 -o "$TMP/v.ply" \
        "$TMP/A.ply" "$TMP/B.ply"
    [ "$(json_get "$TMP/out" 'j["grid"]["dims"][0]')" -eq 2048 ] || fail "dims: $(cat "$TMP/out")"
    for c in 0 1; do
        mesh="$TMP/long.off"
        [ $c = 1 ] || mesh="$TMP/B.off"
        python3 "$s/voxel_truth.py" "$TMP/v.ply" --mesh "$mesh" --cloud $c --method parity \
            --goal 0.9999 >"$TMP/truth" 2>&1 || fail "cloud $c below 99.99 %: $(cat "$TMP/truth")"
    done
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

# --- voxel edit (issue 12: a voxel set in a GhmDynmap, edited by clouds in order) ---

# A cloud too sparse for the grid even at the widest neighbourhood: its probe's fill leaks through
# the gaps of its barrier, and the conflicts its rounds leave (over 1 in 200 probed voxels) are an
# error, not a solid short of its inside. A 3k-point scan of the bunny mesh (scripts/voxel_pair.py)
# at 160^3 leaves 1.8 % (its solid 98.8 % right), refused: one line, nothing written; at 128^3
# 0.4 %, an answer, right on >= 99 % of the voxels (scripts/voxel_edit_truth.py).
test_voxel_edit_too_sparse() {
    python3 -c 'import numpy, scipy' 2>/dev/null || { echo "numpy/scipy missing: skipped"; exit 77; }
    python3 "$(dirname "$0")/../scripts/voxel_pair.py" "$DATA/pointclouds/bunny_mesh.off" \
        --points 3000 "$TMP/s3k.ply" "$TMP/s3k_b.ply" || fail "voxel_pair.py failed"
    run_cmd 2 voxel edit --backend cpu --grid 160 -o "$TMP/never.ply" "$TMP/s3k.ply"
    expect_one_error_line "s3k.ply: is too sparse for this grid"
    grep -q "use a coarser --grid" "$TMP/err" || fail "no advice: $(cat "$TMP/err")"
    [ ! -e "$TMP/never.ply" ] || fail "an output was written"
    run_cmd 0 voxel edit --backend cpu --grid 128 --json -o "$TMP/solid.ply" "$TMP/s3k.ply"
    json_get "$TMP/out" 'j["steps"][0]["conflicts"] > 0' | grep -qx True ||
        fail "expected conflicts left: $(cat "$TMP/out")"
    python3 "$(dirname "$0")/../scripts/voxel_edit_truth.py" add "$TMP/solid.ply" \
        --mesh "$DATA/pointclouds/bunny_mesh.off" --goal 0.99 >"$TMP/truth" 2>&1 ||
        fail "add: $(cat "$TMP/truth")"
}

# The issue's bar: subtract and intersect agree with the bunny mesh's inside test on >= 99 % of the
# kitten solid's voxels farther than 1.5 voxels from the mesh (scripts/voxel_edit_truth.py: ray
# parity); the set before is the union of the two results (each voxel is inside or not). And the
# bunny made solid is its mesh's inside (add). At --grid 128 and 96, where the 40k-point bunny's
# voxels leave gaps in some grid rows' ends: a probe that stopped at each row's last voxel of
# the cloud (not one beyond, as now) lost the bunny's inside along such rows (subtract 94.5 %,
# add 96.0 %). Four seconds on 2 cores (two minutes until the truth's band test was bounded): _slow.
test_voxel_edit_truth_slow() {
    python3 -c 'import numpy, scipy' 2>/dev/null || { echo "numpy/scipy missing: skipped"; exit 77; }
    local truth; truth="$(dirname "$0")/../scripts/voxel_edit_truth.py"
    local mesh="$DATA/pointclouds/bunny_mesh.off"
    local fine="--backend cpu --grid 128"
    run_cmd 0 voxel edit $fine -o "$TMP/diff.ply" "$VOXEL_B" --subtract "$VOXEL_A"
    run_cmd 0 voxel edit $fine -o "$TMP/inter.ply" "$VOXEL_B" --intersect "$VOXEL_A"
    run_cmd 0 voxel edit --backend cpu --grid 96 -o "$TMP/solid.ply" "$VOXEL_A"
    for op in subtract intersect; do
        local after="$TMP/diff.ply"; [ $op = intersect ] && after="$TMP/inter.ply"
        python3 "$truth" $op "$after" --before "$TMP/diff.ply" --before "$TMP/inter.ply" \
            --mesh "$mesh" --goal 0.99 >"$TMP/truth" 2>&1 || fail "$op: $(cat "$TMP/truth")"
    done
    python3 "$truth" add "$TMP/solid.ply" --mesh "$mesh" --goal 0.99 >"$TMP/truth" 2>&1 ||
        fail "add: $(cat "$TMP/truth")"
}

# A probe whose labels do not settle: a dense 160k-point scan of the bunny mesh intersected by the
# 40k-point bunny.ply at 256^3 (radius 2: its gaps let the fill through by its surface, four
# rounds of conflicts); the step reports the pairs the last round left (361), the base none, and
# the intersection is still right on >= 99 % of the voxels (99.9 %; so is the difference).
# Thirty seconds on 2 cores: _slow.
test_voxel_edit_conflicts_slow() {
    python3 -c 'import numpy, scipy' 2>/dev/null || { echo "numpy/scipy missing: skipped"; exit 77; }
    python3 "$(dirname "$0")/../scripts/voxel_pair.py" "$DATA/pointclouds/bunny_mesh.off" \
        --points 160000 "$TMP/A.ply" "$TMP/B.ply" || fail "voxel_pair.py failed"
    run_cmd 0 voxel edit --backend cpu --json --grid 256 -o "$TMP/inter.ply" "$TMP/A.ply" \
        --intersect "$VOXEL_A"
    json_get "$TMP/out" '[(s["radius"], s["conflicts"] > 0) for s in j["steps"]]' |
        grep -qx '\[(1, False), (2, True)\]' || fail "conflicts: $(cat "$TMP/out")"
    run_cmd 0 voxel edit --backend cpu --grid 256 -o "$TMP/diff.ply" "$TMP/A.ply" \
        --subtract "$VOXEL_A"
    for op in subtract intersect; do
        local after="$TMP/diff.ply"; [ $op = intersect ] && after="$TMP/inter.ply"
        python3 "$(dirname "$0")/../scripts/voxel_edit_truth.py" $op "$after" \
            --before "$TMP/diff.ply" --before "$TMP/inter.ply" \
            --mesh "$DATA/pointclouds/bunny_mesh.off" --goal 0.99 >"$TMP/truth" 2>&1 ||
            fail "$op: $(cat "$TMP/truth")"
    done
}

# The JSON counts add up: each step's set size is the last one's plus added minus erased; the set's
# labels sum to its size; the PLY has one vertex per voxel; a difference keeps fewer voxels than
# the kitten solid had, an intersection fewer still, and the order of the edits is kept.
test_voxel_edit_json_counts() {
    run_cmd 0 voxel edit --backend cpu --json --grid 48 -o "$TMP/set.ply" "$VOXEL_B" \
        --subtract "$VOXEL_A" --add "$VOXEL_A" --intersect "$VOXEL_B"
    [ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "expected one JSON line"
    python3 - "$TMP/out" "$TMP/set.ply" <<'PY' || fail "bad counts: $(cat "$TMP/out")"
import json, sys
j = json.load(open(sys.argv[1]))
steps, s = j["steps"], j["set"]
assert [x["op"] for x in steps] == ["base", "subtract", "add", "intersect"], steps
assert j["grid"]["dims"][0] == 48 or max(j["grid"]["dims"]) == 48
prev = 0
for x in steps:
    assert x["voxels"] == prev + x["added"] - x["erased"], x
    assert 0 < x["cloud_voxels"] <= x["probed"] and 0 < x["inside"] <= x["probed"], x
    t = x["timings_ms"]
    assert t["upload"] == 0 and 0 < t["classify"] <= t["step"], t  # the CPU uploads nothing
    assert x["conflicts"] == 0, x  # two closed scans at 48^3: every probe's labels settle
    prev = x["voxels"]
assert steps[0]["voxels"] == steps[0]["cloud_voxels"] + steps[0]["inside"]
assert steps[1]["erased"] > 0 and steps[1]["added"] == 0 and steps[1]["relabelled"] > 0
assert steps[2]["added"] > 0 and steps[3]["erased"] > 0
assert s["voxels"] == prev == s["surface"] + s["interior"] + s["cut"]
head = open(sys.argv[2], "rb").read(2000).split(b"end_header")[0].decode()
assert f"element vertex {s['voxels']}" in head, head
for prop in ("x", "count", "nx", "label", "red"):
    assert f" {prop}\n" in head, prop
PY
    # (kitten - bunny) + bunny is kitten + bunny, voxel for voxel
    run_cmd 0 voxel edit --backend cpu --json --grid 48 "$VOXEL_B" --subtract "$VOXEL_A" --add "$VOXEL_A"
    local a; a=$(json_get "$TMP/out" 'j["set"]["voxels"]')
    run_cmd 0 voxel edit --backend cpu --json --grid 48 "$VOXEL_B" --add "$VOXEL_A"
    [ "$(json_get "$TMP/out" 'j["set"]["voxels"]')" -eq "$a" ] || fail "(k - b) + b != k + b"
}

test_voxel_edit_text_and_preview() {
    run_cmd 0 voxel edit --backend cpu --grid 48 --preview "$TMP/set.png" "$VOXEL_B" --intersect "$VOXEL_A"
    grep -q '^base ' "$TMP/out" && grep -q '^intersect ' "$TMP/out" && grep -q '^set: ' "$TMP/out" ||
        fail "text: $(cat "$TMP/out")"
    [ "$(head -c 8 "$TMP/set.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "not a PNG"
    run_cmd 0 voxel edit --help
    for word in --add --subtract --intersect --grid --preview --json "Exit status"; do
        grep -qF -- "$word" "$TMP/out" || fail "help lacks $word"
    done
    run_cmd 0 voxel --help
    grep -qF 'voxel edit' "$TMP/out" || fail "voxel --help does not point at voxel edit"
}

# voxel_edit_bad FILE NEEDLE: the bad cloud as BASE and as an edit: exit 2, one line naming the
# file, no output written.
# moved_cloud IN.ply DX OUT.ply: the ASCII PLY cloud IN moved by DX along x.
moved_cloud() {
    python3 -c 'import sys
head, body = open(sys.argv[1]).read().split("end_header\n")
print(head + "end_header")
for line in body.split("\n")[:-1]:
    v = line.split()
    print(float(v[0]) + float(sys.argv[2]), *v[1:])' "$1" "$2" >"$3"
}

voxel_edit_bad() {
    run_cmd 2 voxel edit --backend cpu -o "$TMP/never.ply" "$1" --add "$VOXEL_B"
    expect_one_error_line "$(basename "$1")"
    grep -qF -- "$2" "$TMP/err" || fail "stderr lacks '$2': $(cat "$TMP/err")"
    run_cmd 2 voxel edit --backend cpu -o "$TMP/never.ply" "$VOXEL_B" --subtract "$1"
    expect_one_error_line "$(basename "$1")"
    [ ! -e "$TMP/never.ply" ] || fail "an output was written"
}

test_voxel_edit_bad_input() {
    voxel_edit_bad "$DATA/bad/truncated_binary.ply" "byte offset 29791"
    voxel_edit_bad "$DATA/bad/empty.ply" "empty file"
    voxel_edit_bad "$DATA/bad/no_such_cloud.ply" "cannot open"
    voxel_edit_bad "$DATA/bad/OutOfMemory.off" "OFF"
    # a flat patch has no inside: a clear error, nothing written
    python3 -c 'for i in range(40):
    for j in range(40): print(i / 40, j / 40, 0.5, 0, 0, 1)' >"$TMP/plane.xyz"
    voxel_edit_bad "$TMP/plane.xyz" "has no inside at this grid"
    rm -f "$TMP/plane.xyz"
    # normals inward or either way give no inside to edit with; estimated, they do
    turned_normals 1 "$VOXEL_B" "$TMP/inward.ply"
    voxel_edit_bad "$TMP/inward.ply" "its normals point inward"
    turned_normals 2 "$VOXEL_B" "$TMP/mixed.ply"
    voxel_edit_bad "$TMP/mixed.ply" "its normals point either way"
    run_cmd 0 voxel edit --backend cpu --normals estimate "$VOXEL_A" --subtract "$TMP/inward.ply"
    rm -f "$TMP/inward.ply" "$TMP/mixed.ply"
    # so far from the origin that float coordinates cannot hold the voxel centres apart
    moved_cloud "$VOXEL_B" 1e5 "$TMP/far.ply"
    run_cmd 2 voxel edit --backend cpu --grid 128 -o "$TMP/never.ply" "$TMP/far.ply"
    expect_one_error_line "not representable in float coordinates"
    [ ! -e "$TMP/never.ply" ] || fail "an output was written"
    rm -f "$TMP/far.ply"
    run_cmd 2 voxel edit "$VOXEL_A" "$VOXEL_B"
    grep -q "one BASE" "$TMP/err" || fail "$(cat "$TMP/err")"
    run_cmd 2 voxel edit --add "$VOXEL_A"
    grep -q missing "$TMP/err" || fail "$(cat "$TMP/err")"
    run_cmd 2 voxel edit --grid 0 "$VOXEL_A"
    expect_one_error_line --grid
    run_cmd 2 voxel edit --unite "$VOXEL_A" "$VOXEL_A"
    run_cmd 2 voxel edit -o /nonexistent_dir/x.ply "$VOXEL_B"
    expect_one_error_line /nonexistent_dir/x.ply
    only_out_err
}

# The set is the same for any number of threads (slots are claimed in any order; the output is
# sorted by voxel, and merges add in a fixed order).
test_voxel_edit_threads_agree() {
    run_cmd 0 voxel edit --backend cpu --threads 1 --grid 48 -o "$TMP/t1.ply" "$VOXEL_B" \
        --subtract "$VOXEL_A" --add "$VOXEL_A"
    run_cmd 0 voxel edit --backend cpu --threads 2 --grid 48 -o "$TMP/t2.ply" "$VOXEL_B" \
        --subtract "$VOXEL_A" --add "$VOXEL_A"
    cmp -s "$TMP/t1.ply" "$TMP/t2.ply" || fail "1 and 2 threads differ"
    # over 16384 grid rows (200 x 164 x 128) the probe's spans are made on the threads, widened
    # over the rows for these sparse clouds (radius 3 and 2)
    for t in 1 2; do
        run_cmd 0 voxel edit --backend cpu --threads $t --json --grid 200 -o "$TMP/t$t.ply" \
            "$VOXEL_B" --intersect "$VOXEL_A"
    done
    json_get "$TMP/out" '[s["radius"] for s in j["steps"]] == [3, 2]' | grep -qx True ||
        fail "expected radii 3 and 2: $(cat "$TMP/out")"
    cmp -s "$TMP/t1.ply" "$TMP/t2.ply" || fail "1 and 2 threads differ at --grid 200"
}

# edits_agree ARGS...: voxel edit ARGS makes the same set and the same steps' counts on the CPU
# and CUDA backends (their JSON left in $TMP/cpu.json and $TMP/cuda.json).
edits_agree() {
    for backend in cpu cuda; do
        run_cmd 0 voxel edit --backend $backend --json -o "$TMP/$backend.ply" "$@"
        mv "$TMP/out" "$TMP/$backend.json"
    done
    cmp -s "$TMP/cpu.ply" "$TMP/cuda.ply" || fail "the CPU and CUDA sets differ: $*"
    python3 -c 'import json, sys
a, b = (json.load(open(f))["steps"] for f in sys.argv[1:])
keys = ("probed", "inside", "unknown", "cloud_voxels", "radius", "added", "erased", "voxels",
        "conflicts")
sys.exit(0 if [[s[k] for k in keys] for s in a] == [[s[k] for k in keys] for s in b] else 1)' \
        "$TMP/cpu.json" "$TMP/cuda.json" || fail "the CPU and CUDA steps' counts differ: $*"
}

# The set lives in a GhmDynmap on the context's backend: on CUDA the same edit writes the same
# set, byte for byte, as on the CPU. Needs a device.
test_voxel_edit_cuda_same_set() {
    "$BIN" --version | grep -q cuda || exit 77
    "$BIN" --backend cuda "$DATA/images/box_in_scene.png" "$DATA/images/box.png" >/dev/null 2>&1 ||
        exit 77 # no usable device here
    # the same sets and steps (each probe's rows made on the device there), with a dense cloud
    # and with a sparse one (radius 2: the rows' spans widened)
    edits_agree --grid 48 "$VOXEL_B" --subtract "$VOXEL_A" --add "$VOXEL_A" --intersect "$VOXEL_B"
    [ "$(json_get "$TMP/cuda.json" 'j["backend"]')" = cuda ] || fail "$(cat "$TMP/cuda.json")"
    # every step sends its cloud up: part of its classify time
    json_get "$TMP/cuda.json" 'all(0 < s["timings_ms"]["upload"] < s["timings_ms"]["classify"]
        for s in j["steps"])' | grep -qx True || fail "upload times: $(cat "$TMP/cuda.json")"
    edits_agree --grid 128 "$VOXEL_A" --subtract "$VOXEL_B" --intersect "$VOXEL_B"
    json_get "$TMP/cpu.json" '[s["radius"] for s in j["steps"]]' | grep -qx '\[1, 2, 2\]' ||
        fail "radii: $(cat "$TMP/cpu.json")"
    rm -f "$TMP/cpu.json" "$TMP/cuda.json" "$TMP/cpu.ply" "$TMP/cuda.ply"
    # an intersect by a cloud apart from the set empties it; the next edits start from nothing
    moved_cloud "$VOXEL_B" 1.5 "$TMP/apart.ply"
    for backend in cpu cuda; do
        run_cmd 0 voxel edit --backend $backend --grid 64 -o "$TMP/$backend.ply" "$TMP/apart.ply" \
            --intersect "$VOXEL_B" --intersect "$VOXEL_A" --add "$VOXEL_A"
    done
    cmp -s "$TMP/cpu.ply" "$TMP/cuda.ply" || fail "the CPU and CUDA sets differ after an empty set"
    rm -f "$TMP/apart.ply"
    # far enough from the origin that the grid no longer proves each centre in its own voxel
    # (6e4 > 2^21 voxel sizes), near enough that they are: the probe's rows made on the host and
    # checked against its keys, and on a device the probe voxelized through the table
    moved_cloud "$VOXEL_B" 60000 "$TMP/far_a.ply"
    moved_cloud "$VOXEL_B" 60000.15 "$TMP/far_b.ply"
    edits_agree --grid 48 "$TMP/far_a.ply" --subtract "$TMP/far_b.ply" --add "$TMP/far_b.ply"
    rm -f "$TMP/far_a.ply" "$TMP/far_b.ply"
    # inward normals: on a device the check runs beside the probe's run; a sparse flat patch
    # (radius 2 at this grid) has no inside beyond its barrier, which a device finds where its
    # labels are: each edit refused with the CPU's line and nothing written
    turned_normals 1 "$VOXEL_B" "$TMP/inward.ply"
    edit_refused_alike "$VOXEL_A" "$TMP/inward.ply" "its normals point inward"
    python3 -c 'for i in range(40):
    for j in range(40): print(i / 40, j / 40, 0.5, 0, 0, 1)' >"$TMP/plane.xyz"
    edit_refused_alike "$VOXEL_B" "$TMP/plane.xyz" "has no inside at this grid"
    rm -f "$TMP/inward.ply" "$TMP/plane.xyz"
    # a 3k-point scan of the bunny at 160^3 (test_voxel_edit_too_sparse; the conflicts, printed,
    # the same)
    if python3 -c 'import numpy' 2>/dev/null; then
        python3 "$(dirname "$0")/../scripts/voxel_pair.py" "$DATA/pointclouds/bunny_mesh.off" \
            --points 3000 "$TMP/s3k.ply" "$TMP/s3k_b.ply" || fail "voxel_pair.py failed"
        edit_refused_alike "$TMP/s3k.ply" "$VOXEL_A" "s3k.ply: is too sparse for this grid" 160
    fi
}

# BASE --subtract CLOUD at 64 voxels (or $4) refused on the CPU and CUDA backends with the same
# line (naming $3) and nothing written.
edit_refused_alike() {
    for backend in cpu cuda; do
        run_cmd 2 voxel edit --backend $backend --grid "${4:-64}" -o "$TMP/never.ply" "$1" \
            --subtract "$2"
        expect_one_error_line "$3"
        [ ! -e "$TMP/never.ply" ] || fail "an output was written ($backend)"
        cp "$TMP/err" "$TMP/err_$backend"
    done
    cmp -s "$TMP/err_cpu" "$TMP/err_cuda" ||
        fail "the CPU and CUDA errors differ: $(cat "$TMP/err_cpu" "$TMP/err_cuda")"
    rm -f "$TMP/err_cpu" "$TMP/err_cuda"
}

# --backend auto on a coarse grid (one step or an edit) runs on the CPU; a fine grid or a sweep
# keeps the device, and so does --backend cuda. Needs a device to mean anything.
test_voxel_auto_coarse_on_cpu() {
    "$BIN" --version | grep -q cuda || exit 77
    "$BIN" --backend cuda "$DATA/images/box_in_scene.png" "$DATA/images/box.png" >/dev/null 2>&1 ||
        exit 77 # no usable device here
    local want
    for args in "cpu --grid 64" "cpu --grid 128" "cuda --grid 160" "cuda --grid 64 --sweep 3" \
        "cuda --voxel-size 0.01"; do
        set -- $args
        want=$1
        shift
        run_cmd 0 voxel --verbose --json "$@" "$VOXEL_A" "$VOXEL_B"
        [ "$(head -1 "$TMP/out" | json_get /dev/stdin 'j["backend"]')" = "$want" ] ||
            fail "voxel $*: want $want: $(head -c 300 "$TMP/out")"
    done
    run_cmd 0 voxel edit --json --grid 48 "$VOXEL_B" --subtract "$VOXEL_A"
    [ "$(json_get "$TMP/out" 'j["backend"]')" = cpu ] || fail "edit: $(head -c 300 "$TMP/out")"
    grep -q "runs on the CPU" "$TMP/err" && fail "a quiet run spoke: $(cat "$TMP/err")"
    run_cmd 0 voxel edit --backend cuda --json --grid 48 "$VOXEL_B" --subtract "$VOXEL_A"
    [ "$(json_get "$TMP/out" 'j["backend"]')" = cuda ] || fail "edit cuda: $(head -c 300 "$TMP/out")"
}
