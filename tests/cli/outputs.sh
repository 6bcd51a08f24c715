# tests/cli/outputs.sh - cli.sh's cases for outputs: atomic writes and interruption (sourced by tests/cli.sh, which holds
# the helpers and runs one case: bash tests/cli.sh test_NAME).

# --- outputs: atomic writes and interruption (hashing/ghm_file_io.h) ---

# big_clouds: two crossing spheres of 150 000 points with normals, XYZ text, in $TMP. At --grid
# 256 their voxel output as ascii PLY is about 13 MB, long enough to write that a test can find
# the temporary file and stop the writer in the middle.
big_clouds() {
    python3 - "$TMP" <<'PY' || fail "cannot make the clouds"
import math, sys
for name, cx in (("sa.xyz", 0.0), ("sb.xyz", 0.5)):
    n = 150000
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        for i in range(n):
            z = 2 * (i + 0.5) / n - 1
            r = math.sqrt(1 - z * z)
            x, y = r * math.cos(i * 2.399963), r * math.sin(i * 2.399963)
            f.write(f"{x + cx:.6f} {y:.6f} {z:.6f} {x:.6f} {y:.6f} {z:.6f}\n")
PY
}

# big_write GRID OUT: the voxel mode writing the big clouds' output as ascii PLY, in the
# background ($! is its pid) with SIGINT at its default, as in a foreground run (a shell without
# job control starts background commands with SIGINT ignored).
big_write() {
    python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
        "$BIN" voxel --backend cpu --quiet --ascii --grid "$1" -o "$2" "$TMP/sa.xyz" "$TMP/sb.xyz" &
}

# temporaries DIR: the temporary files of atomic writes in DIR (TARGET.tmp.PID.N).
temporaries() { compgen -G "$1/*.tmp.*" || true; }

# catch_write PID DIR: returns 0 with PID stopped (SIGSTOP) while its temporary file exists in
# DIR, i.e. in the middle of writing; 1 when PID ended first.
catch_write() {
    local pid=$1 dir=$2 state
    while read -r _ _ state _ <"/proc/$pid/stat" 2>/dev/null && [ "$state" != Z ]; do
        [ -n "$(temporaries "$dir")" ] || continue
        kill -STOP "$pid"
        [ -n "$(temporaries "$dir")" ] && return 0 # still there now that it cannot move
        kill -CONT "$pid"
    done
    return 1
}

# A run interrupted in the middle of its output (Ctrl-C, kill): it ends by that signal, its
# temporary file is gone and the file it was replacing is untouched.
test_output_interrupted_leaves_no_temporary() {
    big_clouds
    mkdir "$TMP/o" || fail "mkdir"
    local sig num status
    for sig in INT TERM; do
        num=$(kill -l "$sig")
        printf 'old output\n' >"$TMP/o/out.ply"
        big_write 256 "$TMP/o/out.ply"
        local pid=$!
        catch_write "$pid" "$TMP/o" || fail "SIG$sig: the run ended before its output was caught"
        kill -"$sig" "$pid"
        kill -CONT "$pid"
        wait "$pid"
        status=$?
        [ "$status" -eq $((128 + num)) ] || fail "SIG$sig: exit status $status, expected $((128 + num))"
        [ -z "$(temporaries "$TMP/o")" ] || fail "SIG$sig: left behind: $(temporaries "$TMP/o")"
        [ "$(cat "$TMP/o/out.ply")" = "old output" ] || fail "SIG$sig: the old output was changed"
    done
}

# Two runs writing one output path at once: the first is stopped in the middle of its write while
# the second writes the same path from start to end; then the first goes on. Both succeed, and
# the path holds one whole output each time: the second's, then the first's (the last rename).
test_output_two_writers_one_path() {
    big_clouds
    mkdir "$TMP/o" || fail "mkdir"
    run_cmd 0 voxel --backend cpu --quiet --ascii --grid 256 -o "$TMP/first.ply" "$TMP/sa.xyz" "$TMP/sb.xyz"
    run_cmd 0 voxel --backend cpu --quiet --ascii --grid 200 -o "$TMP/second.ply" "$TMP/sa.xyz" "$TMP/sb.xyz"
    cmp -s "$TMP/first.ply" "$TMP/second.ply" && fail "the two outputs should differ"
    big_write 256 "$TMP/o/same.ply"
    local pid=$!
    catch_write "$pid" "$TMP/o" || fail "the first run ended before its output was caught"
    run_cmd 0 voxel --backend cpu --quiet --ascii --grid 200 -o "$TMP/o/same.ply" "$TMP/sa.xyz" "$TMP/sb.xyz"
    cmp -s "$TMP/o/same.ply" "$TMP/second.ply" || fail "the second run's output is not whole"
    kill -CONT "$pid"
    wait "$pid" || fail "the first run failed ($?)"
    cmp -s "$TMP/o/same.ply" "$TMP/first.ply" || fail "the first run's output is not whole"
    [ -z "$(temporaries "$TMP/o")" ] || fail "left behind: $(temporaries "$TMP/o")"
}

# Outputs that are not files: a device or a pipe is written in place (-o /dev/stdout into a pipe
# works), a full device is an error naming it, and the device stays a device (the rename of a
# temporary file over it, run as root, made /dev/full a regular file); results that never reach
# standard output make the run fail, whatever the mode.
test_output_devices_and_full_stdout() {
    local clouds="$DATA/pointclouds/bunny.ply $DATA/pointclouds/kitten.ply"
    # shellcheck disable=SC2086
    "$BIN" voxel --backend cpu --grid 32 --ascii -o /dev/stdout $clouds 2>"$TMP/err" | head -1 >"$TMP/out"
    [ "$(cat "$TMP/out")" = ply ] || fail "-o /dev/stdout into a pipe: '$(cat "$TMP/out")' $(cat "$TMP/err")"
    [ -e /dev/full ] || return 0
    # shellcheck disable=SC2086
    run_cmd 2 voxel --backend cpu --grid 32 -o /dev/full $clouds
    expect_one_error_line "/dev/full"
    grep -q "No space left on device" "$TMP/err" || fail "no reason given: $(cat "$TMP/err")"
    [ -c /dev/full ] || fail "/dev/full is no longer a device"
    local cmd
    local pair="$DATA/images/butterfly.jpg $DATA/pairs/dev_00_query.png"
    for cmd in "voxel --backend cpu --grid 32 $clouds" "voxel --json --backend cpu --grid 32 $clouds" \
        "--backend cpu $pair" "--help" "--json --backend cpu $pair" \
        "--json --backend cpu $pair $DATA/pairs/dev_03_query.jpg" \
        "--json --backend cpu --search $DATA/pairs/dev_00_query.png $DATA/images/butterfly.jpg"; do
        # shellcheck disable=SC2086
        "$BIN" $cmd >/dev/full 2>"$TMP/err"
        local got=$?
        [ "$got" -eq 2 ] || fail "'$cmd' > /dev/full exited $got, expected 2"
        # one line, with the reason: the run stops at the first result it cannot write
        expect_one_error_line "standard output: No space left on device"
    done
}

# An output that names an input (a typo, a completion too far) is refused before any work, and
# the input is left as it was; a link to the input counts as the input. A new file is written.
test_output_over_an_input_refused() {
    cp "$DATA/pointclouds/kitten.ply" "$TMP/k.ply"
    cp "$DATA/images/box_in_scene.png" "$TMP/s.png"
    ln -s "$TMP/s.png" "$TMP/link.png"
    local vox=(voxel --backend cpu --grid 32)
    run_cmd 2 "${vox[@]}" -o "$TMP/k.ply" "$DATA/pointclouds/bunny.ply" "$TMP/k.ply"
    expect_one_error_line "-o: '$TMP/k.ply' is the input"
    run_cmd 2 "${vox[@]}" --preview "$TMP/k.ply" "$TMP/k.ply" "$DATA/pointclouds/bunny.ply"
    expect_one_error_line "--preview"
    run_cmd 2 voxel edit --backend cpu --grid 32 -o "$TMP/k.ply" "$DATA/pointclouds/bunny.ply" \
        --subtract "$TMP/k.ply"
    expect_one_error_line "is the input"
    cmp -s "$TMP/k.ply" "$DATA/pointclouds/kitten.ply" || fail "the cloud was written over"
    run_cmd 2 --backend cpu --overlay "$TMP/link.png" "$TMP/s.png" "$DATA/images/box.png"
    expect_one_error_line "--overlay: '$TMP/link.png' is the input $TMP/s.png"
    run_cmd 2 --backend cpu --save-ref "$TMP/s.png" "$TMP/s.png" "$DATA/images/box.png"
    expect_one_error_line "--save-ref"
    cmp -s "$TMP/s.png" "$DATA/images/box_in_scene.png" || fail "the reference was written over"
    run_cmd 0 --backend cpu --overlay "$TMP/o.png" "$TMP/s.png" "$DATA/images/box.png"
    [ -s "$TMP/o.png" ] || fail "no overlay written"
}
