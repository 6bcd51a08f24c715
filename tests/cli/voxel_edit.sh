# tests/cli/voxel_edit.sh - cli.sh's cases for voxel edit (sourced by tests/cli.sh, which holds the
# helpers and runs one case: bash tests/cli.sh test_NAME; tests/cli/voxel.sh has the voxel mode's
# cases and the helpers both share: VOXEL_A, VOXEL_B, json_get, only_out_err, turned_normals).

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
