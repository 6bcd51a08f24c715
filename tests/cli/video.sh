# tests/cli/video.sh - cli.sh's cases for the video mode (sourced by tests/cli.sh, which holds
# the helpers and runs one case: bash tests/cli.sh test_NAME).

# --- video (video helper) ---
# Video mode: REFERENCE image, VIDEO file (or - for YUV4MPEG2 on stdin); one line per frame.
MEGA_REF=video/megamind_frame050.png
MEGA=video/Megamind.avi

# Skips (77) in a build without FFmpeg, where only YUV4MPEG2 can be read.
# The CUDA devices this machine has (0 without a driver); need_cuda_devices N skips the test
# (77) unless the build has CUDA and the machine N devices.
cuda_devices() { nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; }
need_cuda_devices() {
    "$BIN" --version | grep -q cuda || exit 77
    [ "$(cuda_devices)" -ge "$1" ] || exit 77
}

need_ffmpeg_build() {
    "$BIN" --backend cpu --quiet --end 0 "$DATA/$MEGA_REF" "$DATA/$MEGA" >/dev/null 2>"$TMP/probe"
    if grep -q "no FFmpeg" "$TMP/probe"; then exit 77; fi
}

# Checks JSON Lines in $TMP/out: every line an object with "frame" (the listed numbers, in
# order), "pts" and "found". Prints nothing; fails with the reason.
check_json_lines() {
    python3 - "$TMP/out" "$@" <<'EOF' || fail "bad JSON Lines output"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
want = [int(x) for x in sys.argv[2:]]
frames = [r["frame"] for r in rows]
if frames != want:
    sys.exit("frames %s..., expected %s..." % (frames[:8], want[:8]))
for r in rows:
    if not isinstance(r["found"], bool) or "pts" not in r:
        sys.exit("line without found/pts: %s" % r)
EOF
}

# All 270 frames of Megamind.avi, one JSON line each, in order, and nothing on stderr when it
# is not a terminal. The slowest video test (about 40 s of CPU on 2 cores, minutes under the
# sanitizers, hence _slow: label slow): the matching options barely change it (edge detection
# dominates), so it runs with the defaults and also checks the results that
# test_video_megamind_identity_and_cut checks on a few frames.
test_video_megamind_all_frames_slow() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json "$DATA/$MEGA_REF" "$DATA/$MEGA"
    [ "$(wc -l <"$TMP/out")" -eq 270 ] || fail "expected 270 lines, got $(wc -l <"$TMP/out")"
    check_json_lines $(seq 0 269)
    check_megamind_results
    [ ! -s "$TMP/err" ] || fail "stderr not empty without a terminal: $(head -c 300 "$TMP/err")"
}

# Frame 50 of $TMP/out is the identity; no frame of 98-153 (another scene) is found.
check_megamind_results() {
    python3 - "$TMP/out" <<'EOF' || fail "wrong results: $(head -c 600 "$TMP/out")"
import json, sys
rows = {r["frame"]: r for r in map(json.loads, open(sys.argv[1]))}
f50 = rows[50]
assert f50["found"], "frame 50 not found"
m = f50["transform"]["matrix"]
ident = [[1, 0, 0], [0, 1, 0]]
err = max(abs(m[i][j] - ident[i][j]) * (1 if j < 2 else 0.01) for i in range(2) for j in range(3))
assert err < 0.01, "frame 50 matrix %s is not the identity" % m
assert abs(f50["pts"] - 50 * 125 / 2997) < 1e-3, "frame 50 pts %s" % f50["pts"]
false_pos = [f for f, r in rows.items() if 98 <= f <= 153 and r["found"]]
assert not false_pos, "found in the other scene: %s" % false_pos
EOF
}

# Frame 50 is the reference itself: the identity. Frames 98-153 are another scene: not found.
test_video_megamind_identity_and_cut() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json --start 50 --end 154 --step 8 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    check_json_lines $(seq 50 8 154)
    check_megamind_results
}

# The synthetic video against its source photo: every frame right by the corner criterion of
# the truth file (2 % of the reference diagonal), and pts as in the truth.
test_video_synthetic_truth() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json "$DATA/images/rubberwhale1.png" "$DATA/video/synthetic_rubberwhale.mp4"
    python3 - "$DATA/video/synthetic_rubberwhale_truth.json" "$TMP/out" <<'EOF' || fail "synthetic video: frames wrong"
import json, math, sys
truth = json.load(open(sys.argv[1]))
W, H = truth["reference_size"]
w, h = truth["frame_size"]
tol = 0.02 * math.hypot(W, H)
rows = {r["frame"]: r for r in map(json.loads, open(sys.argv[2]))}
assert len(rows) == len(truth["truth"]) == 48, "%d lines" % len(rows)
bad = []
for t in truth["truth"]:
    r = rows[t["frame"]]
    if not r["found"]:
        bad.append("frame %d not found" % t["frame"])
        continue
    if abs(r["pts"] - t["pts"]) > 1e-3:
        bad.append("frame %d pts %s, truth %s" % (t["frame"], r["pts"], t["pts"]))
    M, T = r["transform"]["matrix"], t["matrix"]
    for x, y in ((0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1)):
        d = math.hypot(M[0][0] * x + M[0][1] * y + M[0][2] - (T[0][0] * x + T[0][1] * y + T[0][2]),
                       M[1][0] * x + M[1][1] * y + M[1][2] - (T[1][0] * x + T[1][1] * y + T[1][2]))
        if d > tol:
            bad.append("frame %d corner (%d,%d) off by %.1f px (bound %.1f)" % (t["frame"], x, y, d, tol))
            break
if bad:
    sys.exit("\n".join(bad[:10]))
EOF
}

# Text output: one line per frame, then the summary.
test_video_text_output() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --start 49 --end 51 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    [ "$(grep -c '^frame ' "$TMP/out")" -eq 3 ] || fail "expected 3 frame lines: $(cat "$TMP/out")"
    grep -qE '^frame 50 .* found .*scale (0\.99|1\.00)' "$TMP/out" || fail "frame 50 line: $(cat "$TMP/out")"
    grep -q '^summary: 3 frames, 3 found' "$TMP/out" || fail "no summary: $(cat "$TMP/out")"
}

# --start past the last frame: no frame to match (exit 1), and a warning says why.
test_video_start_past_the_end() {
    need_ffmpeg_build
    run_cmd 1 --backend cpu --json --start 5000 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    [ ! -s "$TMP/out" ] || fail "lines for no frame: $(cat "$TMP/out")"
    expect_one_error_line "no frame at or after --start 5000"
}

# --swap: the frame is the reference, the image the query (same picture here: the identity).
test_video_swap() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json --swap --start 50 --end 50 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
m = r["transform"]["matrix"]
assert r["found"] and r["swapped"] and abs(m[0][0] - 1) < 0.01 and abs(m[0][2]) < 1 and abs(m[1][2]) < 1, r
' "$TMP/out" || fail "swap: $(cat "$TMP/out")"
}

# YUV4MPEG2 on standard input gives the same lines as the file (same pixels, same seed).
test_video_y4m_stdin() {
    need_ffmpeg_build
    command -v ffmpeg >/dev/null || exit 77
    ffmpeg -v error -i "$DATA/video/synthetic_rubberwhale.mp4" -frames:v 6 -f yuv4mpegpipe - \
        2>"$TMP/ff" | "$BIN" --backend cpu --json "$DATA/images/rubberwhale1.png" - >"$TMP/piped" 2>"$TMP/err"
    [ "$?" -eq 0 ] || fail "piped run failed: $(cat "$TMP/err" "$TMP/ff")"
    run_cmd 0 --backend cpu --json --end 5 "$DATA/images/rubberwhale1.png" "$DATA/video/synthetic_rubberwhale.mp4"
    python3 - "$TMP/piped" "$TMP/out" <<'EOF' || fail "stdin and file differ"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) == 6, (len(a), len(b))
for x, y in zip(a, b):
    assert x["frame"] == y["frame"] and abs(x["pts"] - y["pts"]) < 1e-3, (x["frame"], y["frame"])
    assert x["found"] == y["found"] and x.get("transform") == y.get("transform"), x["frame"]
EOF
}

# The program does not link FFmpeg: on a machine without its libraries everything else runs,
# a video file gets one line naming the library that cannot be loaded, and YUV4MPEG2 on
# standard input still reads. Hides libavutil in a private mount namespace (needs unshare).
test_video_without_ffmpeg_libs() {
    need_ffmpeg_build
    command -v ffmpeg >/dev/null || exit 77
    ldd "$BIN" | grep -q libav && fail "the program links FFmpeg: $(ldd "$BIN" | grep libav)"
    local lib
    lib=$(ldconfig -p | awk '/libavutil\.so\.[0-9]+ / {print $NF; exit}')
    [ -n "$lib" ] && unshare -rm true 2>/dev/null || exit 77
    ffmpeg -v error -i "$DATA/video/synthetic_rubberwhale.mp4" -frames:v 3 -f yuv4mpegpipe \
        "$TMP/clip.y4m" || fail "ffmpeg could not make the clip"
    unshare -rm sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
        "$BIN" --backend cpu "$DATA/images/rubberwhale1.png" "$DATA/video/synthetic_rubberwhale.mp4" \
        >"$TMP/out" 2>"$TMP/err"
    [ "$?" -eq 2 ] || fail "expected exit 2; stderr: $(cat "$TMP/err")"
    expect_one_error_line synthetic_rubberwhale.mp4
    grep -q "cannot load FFmpeg's libavutil" "$TMP/err" || fail "$(cat "$TMP/err")"
    unshare -rm sh -c 'mount --bind /dev/null "$1" && shift && exec "$@" - <"$0"' "$TMP/clip.y4m" \
        "$lib" "$BIN" --backend cpu --json "$DATA/images/rubberwhale1.png" >"$TMP/out" 2>"$TMP/err"
    [ "$?" -eq 0 ] || fail "YUV4MPEG2 without FFmpeg: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/out")" -eq 3 ] || fail "expected 3 frames: $(cat "$TMP/out")"
    unshare -rm sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
        "$BIN" --backend cpu "$DATA/images/box_in_scene.png" "$DATA/images/box.png" >"$TMP/out" 2>"$TMP/err"
    [ "$?" -eq 0 ] || fail "an image pair without FFmpeg: $(cat "$TMP/err")"
}

test_video_y4m_stdin_bad_header() {
    printf 'YUV4MPEG2 W16 H8 F25:1 C420p10\n' | "$BIN" --backend cpu "$DATA/images/box.png" - >"$TMP/out" 2>"$TMP/err"
    [ "$?" -eq 2 ] || fail "expected exit 2"
    expect_one_error_line "standard input"
    grep -q "not supported" "$TMP/err" || fail "$(cat "$TMP/err")"
}

test_video_bad_empty() {
    need_ffmpeg_build
    run_cmd 2 --backend cpu "$DATA/$MEGA_REF" "$DATA/bad/empty.mp4"
    expect_one_error_line empty.mp4
    grep -q "empty" "$TMP/err" || fail "$(cat "$TMP/err")"
}

test_video_bad_text_file() {
    need_ffmpeg_build
    printf 'just some text,\nnot a video at all\n' >"$TMP/clip.mp4"
    run_cmd 2 --backend cpu "$DATA/$MEGA_REF" "$TMP/clip.mp4"
    expect_one_error_line clip.mp4
}

# The first quarter of Megamind.avi: the frames it holds are printed, then one error line
# saying that the file ends early, and exit 2.
test_video_bad_truncated() {
    need_ffmpeg_build
    run_cmd 2 --backend cpu --json --step 10 "$DATA/$MEGA_REF" "$DATA/bad/truncated.avi"
    check_json_lines $(seq 0 10 60)
    expect_one_error_line truncated.avi
    grep -q "ends early" "$TMP/err" || fail "$(cat "$TMP/err")"
}

# A copy of the AVI $1 with one video chunk (the 100th or later of a usual size) overwritten
# with noise, written to $2 (tests/python/damaged_avi.py, which the Python case shares).
DAMAGED_AVI="$(cd "$(dirname "${BASH_SOURCE[0]}")/../python" && pwd)/damaged_avi.py"
make_damaged_avi() {
    python3 "$DAMAGED_AVI" "$1" "$2" || fail "cannot make the damaged copy"
}

# One video chunk of a copy of Megamind.avi overwritten with noise: warnings, a "damaged" line
# per lost frame, and the frames after it still matched.
test_video_bad_damaged_frame() {
    need_ffmpeg_build
    make_damaged_avi "$DATA/$MEGA" "$TMP/damaged.avi"
    "$BIN" --backend cpu --json --start 96 --end 106 "$DATA/$MEGA_REF" "$TMP/damaged.avi" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    [ "$got" -le 1 ] || fail "exit $got: $(cat "$TMP/err")"
    check_json_lines $(seq 96 106)
    grep -q '"damaged"' "$TMP/out" || fail "no damaged frame reported: $(cat "$TMP/out")"
    grep -q 'warning: .*damaged.avi: frame' "$TMP/err" || fail "no warning: $(cat "$TMP/err")"
}

# The decoder's own words reach the warning (the program passes FFmpeg's log lines to the
# library, which installs no callback itself): some damaged frame says more than a fallback.
test_video_damaged_frame_decoder_words() {
    need_ffmpeg_build
    make_damaged_avi "$DATA/$MEGA" "$TMP/damaged.avi"
    "$BIN" --backend cpu --json --start 96 --end 106 "$DATA/$MEGA_REF" "$TMP/damaged.avi" >"$TMP/out" 2>"$TMP/err"
    grep 'warning: .*damaged.avi: frame' "$TMP/err" | grep -v '(the decoder concealed errors)' |
        grep -qv '(damaged data)' || fail "no decoder message in: $(cat "$TMP/err")"
}

# A media file without a video stream (a WAV written here; the name lies).
test_video_bad_no_video_stream() {
    need_ffmpeg_build
    python3 -c '
import sys, wave
w = wave.open(sys.argv[1], "wb"); w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000)
w.writeframes(b"\0\0" * 8000); w.close()' "$TMP/sound.wav"
    mv "$TMP/sound.wav" "$TMP/sound.mp4"
    run_cmd 2 --backend cpu "$DATA/$MEGA_REF" "$TMP/sound.mp4"
    expect_one_error_line sound.mp4
    grep -q "no video stream" "$TMP/err" || fail "$(cat "$TMP/err")"
}

test_video_bad_selection() {
    run_cmd 2 --backend cpu --start 10 --end 5 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    grep -qF -- "--end" "$TMP/err" || fail "$(cat "$TMP/err")"
    run_cmd 2 --backend cpu --step 0 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    grep -qF -- "--step" "$TMP/err" || fail "$(cat "$TMP/err")"
}

# --jobs: frames matched by several workers at once come out in order and byte for byte as with
# one worker (the per-frame "timings_ms" aside, which are wall times).
strip_timings() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }

test_video_jobs_same_output() {
    need_ffmpeg_build
    local sel="--start 40 --end 170 --step 2"
    run_cmd 0 --backend cpu --json --jobs 1 $sel "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/one"
    [ ! -s "$TMP/err" ] || fail "stderr with one job: $(head -c 300 "$TMP/err")"
    run_cmd 0 --backend cpu --json --jobs 3 $sel "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/three"
    [ ! -s "$TMP/err" ] || fail "stderr with three jobs: $(head -c 300 "$TMP/err")"
    [ "$(wc -l <"$TMP/one")" -eq 66 ] || fail "expected 66 lines, got $(wc -l <"$TMP/one")"
    cmp -s "$TMP/one" "$TMP/three" || fail "--jobs 1 and --jobs 3 differ: $(diff "$TMP/one" "$TMP/three" | head -c 600)"
    check_json_lines $(seq 40 2 170)
    # text output: the same frame lines and summary counts (its timings aside)
    run_cmd 0 --backend cpu --jobs 1 --start 96 --end 103 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    sed 's/; matching .*//' "$TMP/out" >"$TMP/one"
    run_cmd 0 --backend cpu --jobs 4 --start 96 --end 103 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    sed 's/; matching .*//' "$TMP/out" >"$TMP/four"
    cmp -s "$TMP/one" "$TMP/four" || fail "text differs: $(diff "$TMP/one" "$TMP/four" | head -c 600)"
    grep -q '^summary: 8 frames, 2 found, 0 damaged$' "$TMP/four" || fail "summary: $(tail -1 "$TMP/four")"
}

# More workers than frames left: eight jobs over a short selection that ends early (the reader
# stops while workers still match) give one job's lines. scripts/test.sh also runs this under
# ThreadSanitizer.
test_video_jobs_eight_early_end() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json --jobs 1 --start 95 --end 101 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/one"
    run_cmd 0 --backend cpu --json --jobs 8 --start 95 --end 101 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/eight"
    [ "$(wc -l <"$TMP/one")" -eq 7 ] || fail "expected 7 lines, got $(wc -l <"$TMP/one")"
    cmp -s "$TMP/one" "$TMP/eight" || fail "--jobs 1 and --jobs 8 differ: $(diff "$TMP/one" "$TMP/eight" | head -c 600)"
}

# --swap builds a matcher per frame in each worker: the same lines as with one job.
test_video_jobs_swap() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json --swap --jobs 1 --start 48 --end 52 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/one"
    run_cmd 0 --backend cpu --json --swap --jobs 2 --start 48 --end 52 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/two"
    [ "$(wc -l <"$TMP/two")" -eq 5 ] || fail "expected 5 lines: $(cat "$TMP/two")"
    cmp -s "$TMP/one" "$TMP/two" || fail "swap: --jobs 1 and 2 differ"
}

# --gpus deals the video's workers across CUDA devices. What cannot be done is refused with one
# line and status 2 before the video is read (standard input is never touched): a count on the
# CPU, more devices than the machine has, fewer jobs than devices, a count that is no number.
test_video_gpus_refused() {
    local ref="$DATA/images/rubberwhale1.png"
    run_cmd 2 --backend cpu --gpus 2 "$ref" - </dev/null
    expect_one_error_line "--gpus"
    grep -q "needs the CUDA backend" "$TMP/err" || fail "$(cat "$TMP/err")"
    for bad in 0 two -1; do
        run_cmd 2 --backend cpu --gpus "$bad" "$ref" - </dev/null
        expect_one_error_line "--gpus"
    done
    "$BIN" --backend cuda "$DATA/images/box_in_scene.png" "$DATA/images/box.png" >/dev/null 2>&1 ||
        return 0 # no usable device: the rest needs one
    local have
    have=$(cuda_devices)
    [ "$have" -ge 1 ] || return 0
    run_cmd 2 --backend cuda --gpus $((have + 1)) "$ref" - </dev/null
    expect_one_error_line "--gpus"
    grep -q "this machine has $have CUDA device" "$TMP/err" || fail "$(cat "$TMP/err")"
    if [ "$have" -ge 2 ]; then
        run_cmd 2 --backend cuda --gpus 2 --jobs 1 "$ref" - </dev/null
        expect_one_error_line "--jobs"
    fi
}

# --gpus all on the CPU backend is the plain run: the same lines.
test_video_gpus_all_on_cpu() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json --jobs 2 --start 96 --end 101 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/plain"
    run_cmd 0 --backend cpu --json --jobs 2 --gpus all --start 96 --end 101 "$DATA/$MEGA_REF" "$DATA/$MEGA"
    strip_timings "$TMP/out" >"$TMP/all"
    [ "$(wc -l <"$TMP/all")" -eq 6 ] || fail "expected 6 lines: $(cat "$TMP/all")"
    cmp -s "$TMP/plain" "$TMP/all" || fail "--gpus all on the CPU changed the output"
}

# Two or more GPUs: the frames matched on every device give the lines of one device, byte for
# byte apart from timings, in order (the default workers, 4 per device, and --swap). The clip
# is piped as YUV4MPEG2 so that it runs where FFmpeg's libraries are not installed.
test_video_gpus_same_output() {
    need_cuda_devices 2
    command -v ffmpeg >/dev/null || exit 77
    ffmpeg -v error -i "$DATA/$MEGA" -vf "select=between(n\,40\,139)" -vsync 0 \
        -f yuv4mpegpipe -pix_fmt gray "$TMP/clip.y4m" || fail "ffmpeg could not make the clip"
    local g
    for g in 1 2 all; do
        "$BIN" --backend cuda --json --gpus $g "$DATA/$MEGA_REF" - <"$TMP/clip.y4m" \
            >"$TMP/out.$g" 2>"$TMP/err.$g"
        [ "$?" -le 1 ] || fail "--gpus $g: $(cat "$TMP/err.$g")"
        [ ! -s "$TMP/err.$g" ] || fail "--gpus $g wrote to stderr: $(head -c 300 "$TMP/err.$g")"
        strip_timings "$TMP/out.$g" >"$TMP/lines.$g"
    done
    [ "$(wc -l <"$TMP/lines.1")" -eq 100 ] || fail "expected 100 lines, got $(wc -l <"$TMP/lines.1")"
    grep -q '"found":true' "$TMP/lines.1" || fail "no frame found on one device"
    cmp -s "$TMP/lines.1" "$TMP/lines.2" || fail "--gpus 1 and 2 differ: $(diff "$TMP/lines.1" "$TMP/lines.2" | head -c 600)"
    cmp -s "$TMP/lines.1" "$TMP/lines.all" || fail "--gpus 1 and all differ"
    for g in 1 2; do
        "$BIN" --backend cuda --json --swap --jobs 2 --gpus $g --end 5 "$DATA/$MEGA_REF" - \
            <"$TMP/clip.y4m" >"$TMP/out.$g" 2>"$TMP/err.$g"
        [ "$?" -le 1 ] || fail "--swap --gpus $g: $(cat "$TMP/err.$g")"
        strip_timings "$TMP/out.$g" >"$TMP/swap.$g"
    done
    [ "$(wc -l <"$TMP/swap.2")" -eq 6 ] || fail "swap: expected 6 lines: $(cat "$TMP/swap.2")"
    cmp -s "$TMP/swap.1" "$TMP/swap.2" || fail "swap: --gpus 1 and 2 differ"
}

# Two or more GPUs on a file that can be entered at key frames: the frames are cut in parts,
# one reader and decoder per device, and the lines are still those of one device, byte for byte
# apart from timings (JSON and text with its summary, closed and open groups of pictures). A file
# read from its first frame only (an AVI) keeps one reader whose frames are dealt to the devices.
test_video_gpus_parts_same_output() {
    need_cuda_devices 2
    need_ffmpeg_build
    local ref="$DATA/$MEGA_REF" clip g
    for clip in "$DATA/video/megamind_gop12.mp4" "$DATA/video/megamind_gop12_open.mp4"; do
        for g in 1 2; do
            "$BIN" --backend cuda --json --verbose --gpus $g --start 5 "$ref" "$clip" \
                >"$TMP/out.$g" 2>"$TMP/err.$g"
            [ "$?" -le 1 ] || fail "--gpus $g: $(cat "$TMP/err.$g")"
            strip_timings "$TMP/out.$g" >"$TMP/lines.$g"
            "$BIN" --backend cuda --gpus $g --start 5 "$ref" "$clip" 2>&1 |
                sed 's/; matching .*//' >"$TMP/text.$g"
        done
        [ "$(wc -l <"$TMP/lines.2")" -eq 91 ] || fail "$clip: $(wc -l <"$TMP/lines.2") lines"
        grep -q "2 parts on 2 CUDA devices, each with its own CPU decoder" "$TMP/err.2" ||
            fail "$clip was not cut in parts: $(cat "$TMP/err.2")"
        cmp -s "$TMP/lines.1" "$TMP/lines.2" ||
            fail "$clip: --gpus 1 and 2 differ: $(diff "$TMP/lines.1" "$TMP/lines.2" | head -c 600)"
        cmp -s "$TMP/text.1" "$TMP/text.2" ||
            fail "$clip text: $(diff "$TMP/text.1" "$TMP/text.2" | head -c 600)"
    done
    "$BIN" --backend cuda --json --verbose --gpus 2 --start 90 --end 99 "$ref" "$DATA/$MEGA" \
        >"$TMP/out" 2>"$TMP/err"
    [ "$?" -le 1 ] || fail "AVI: $(cat "$TMP/err")"
    grep -q "matching workers on 2 CUDA devices" "$TMP/err" || fail "AVI: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/out")" -eq 10 ] || fail "AVI: $(wc -l <"$TMP/out") lines"
}

# --decode gpu: the frames decoded by NVDEC, the file cut in 4 parts per device, give the lines
# of the CPU's decoding byte for byte apart from timings (H.264, closed and open groups of
# pictures, JSON and text; on two devices where there are two: 8 parts).
test_video_decode_gpu_same_output() {
    need_cuda_devices 1
    need_ffmpeg_build
    local have
    have=$(cuda_devices)
    local ref="$DATA/$MEGA_REF" clip g
    for clip in "$DATA/video/megamind_gop12.mp4" "$DATA/video/megamind_gop12_open.mp4"; do
        "$BIN" --backend cuda --json "$ref" "$clip" >"$TMP/out" 2>"$TMP/err"
        [ "$?" -le 1 ] || fail "CPU decoding: $(cat "$TMP/err")"
        strip_timings "$TMP/out" >"$TMP/lines.cpu"
        "$BIN" --backend cuda "$ref" "$clip" 2>&1 | sed 's/; matching .*//' >"$TMP/text.cpu"
        for g in 1 2; do
            [ "$g" -le "$have" ] || continue
            "$BIN" --backend cuda --json --verbose --decode gpu --gpus $g "$ref" "$clip" \
                >"$TMP/out" 2>"$TMP/err"
            [ "$?" -le 1 ] || fail "--decode gpu --gpus $g: $(cat "$TMP/err")"
            grep -q "$((4 * g)) parts on $g CUDA device.*own GPU decoder" "$TMP/err" ||
                fail "$clip was not cut in $((4 * g)) parts: $(cat "$TMP/err")"
            strip_timings "$TMP/out" >"$TMP/lines.gpu"
            cmp -s "$TMP/lines.cpu" "$TMP/lines.gpu" ||
                fail "$clip --gpus $g: $(diff "$TMP/lines.cpu" "$TMP/lines.gpu" | head -c 600)"
            "$BIN" --backend cuda --decode gpu --gpus $g "$ref" "$clip" 2>&1 |
                sed 's/; matching .*//' >"$TMP/text.gpu"
            cmp -s "$TMP/text.cpu" "$TMP/text.gpu" ||
                fail "$clip text: $(diff "$TMP/text.cpu" "$TMP/text.gpu" | head -c 600)"
        done
    done
}

# --decode takes cpu or gpu, and gpu needs the CUDA backend: one error line, status 2.
test_video_decode_bad() {
    run_cmd 2 --decode npu "$DATA/$MEGA_REF" "$DATA/$MEGA"
    expect_one_error_line --decode
    run_cmd 2 --backend cpu --decode gpu "$DATA/$MEGA_REF" "$DATA/$MEGA"
    expect_one_error_line --decode
    grep -q "needs the CUDA backend" "$TMP/err" || fail "$(cat "$TMP/err")"
}

# mpirun_cmd RANKS ARGS...: the program as RANKS MPI ranks on this machine (MPI over loopback),
# stdout and stderr in $TMP/out and $TMP/err; skips (77) where the build has no MPI or mpirun
# cannot start two processes here. OpenMPI's own allocations outlive MPI_Finalize, so leak
# checking is off for these runs (the sanitizer build's other tests check ours).
mpirun_cmd() {
    local ranks=$1; shift
    "$BIN" --version | grep -q "MPI ranks" || exit 77
    command -v mpirun >/dev/null || exit 77
    local flags=(--oversubscribe)
    [ "$(id -u)" -ne 0 ] || flags+=(--allow-run-as-root)
    timeout 60 mpirun "${flags[@]}" -n 2 true >/dev/null 2>&1 || exit 77
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" timeout 300 \
        mpirun "${flags[@]}" -n "$ranks" "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
}

# Under mpirun the selected frames of one video file are split between the ranks in ranges;
# rank 0 prints every line in frame order and the summary of all: the output of one process,
# byte for byte (timings aside), for 2 ranks and for 3 (uneven ranges), JSON and text, and
# with more ranks than frames. The exit status is the same on every rank.
test_video_mpi_ranks_same_output() {
    need_ffmpeg_build
    local sel="--start 40 --end 99 --step 3" ref="$DATA/$MEGA_REF" clip="$DATA/$MEGA"
    run_cmd 0 --backend cpu --threads 1 --json $sel "$ref" "$clip"
    strip_timings "$TMP/out" >"$TMP/one"
    local r
    for r in 2 3; do
        mpirun_cmd $r --backend cpu --threads 1 --json $sel "$ref" "$clip" ||
            fail "$r ranks exited $?: $(head -c 600 "$TMP/err")"
        strip_timings "$TMP/out" >"$TMP/many"
        [ "$(wc -l <"$TMP/many")" -eq 20 ] || fail "$r ranks: $(wc -l <"$TMP/many") lines, not 20"
        cmp -s "$TMP/one" "$TMP/many" ||
            fail "$r ranks differ from one: $(diff "$TMP/one" "$TMP/many" | head -c 600)"
    done
    run_cmd 0 --backend cpu --threads 1 --start 96 --end 99 "$ref" "$clip"
    sed 's/; matching .*//' "$TMP/out" >"$TMP/one"
    mpirun_cmd 3 --backend cpu --threads 1 --start 96 --end 99 "$ref" "$clip" ||
        fail "text, 3 ranks: $(head -c 600 "$TMP/err")"
    sed 's/; matching .*//' "$TMP/out" >"$TMP/many"
    cmp -s "$TMP/one" "$TMP/many" || fail "text differs: $(diff "$TMP/one" "$TMP/many" | head -c 600)"
    grep -q '^summary: 4 frames, ' "$TMP/many" || fail "summary: $(tail -1 "$TMP/many")"
    mpirun_cmd 3 --backend cpu --threads 1 --json --start 96 --end 96 "$ref" "$clip" ||
        fail "one frame, 3 ranks: $(head -c 600 "$TMP/err")"
    [ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "one frame, 3 ranks: $(cat "$TMP/out")"
}

# damaged_gop12 OUT: megamind_gop12.mp4 (a key frame every 12 frames) with the middle of frame
# 39's packet (a P-frame, the 38th in decode order) overwritten, so that frames 37-39 come out
# damaged: after the key frame at 36, before a range that starts at 40. Needs ffprobe.
damaged_gop12() {
    local size pos
    cp "$DATA/video/megamind_gop12.mp4" "$1"
    IFS=, read -r size pos < <(ffprobe -v error -select_streams v -show_entries packet=size,pos \
        -of csv=p=0 "$1" | sed -n 38p)
    [ -n "$pos" ] && [ "$size" -gt 8 ] || fail "ffprobe found no packet 37 in $1"
    head -c $((size / 2)) /dev/zero | tr '\0' '\145' |
        dd of="$1" bs=1 seek=$((pos + size / 4)) conv=notrunc status=none
}

# A rank whose range starts past a key frame enters the file there (ghm_video_select): the
# lines of one process, byte for byte, for closed and open groups of pictures. With frames
# damaged between the key frame and the rank's range, their lines come once, from the rank whose
# range holds them, and so does each warning; the frames that follow them up to the next key
# frame are concealed otherwise by a decoder that entered at that key frame (as by another
# number of decoding threads), so there only the numbers and the damaged lines are compared.
test_video_mpi_ranks_key_frames() {
    need_ffmpeg_build
    command -v ffprobe >/dev/null || exit 77
    damaged_gop12 "$TMP/damaged.mp4"
    local ref="$DATA/$MEGA_REF" clip status
    for clip in "$DATA/video/megamind_gop12.mp4" "$DATA/video/megamind_gop12_open.mp4" \
        "$TMP/damaged.mp4"; do
        "$BIN" --backend cpu --threads 1 --json --start 20 --end 59 "$ref" "$clip" \
            >"$TMP/out" 2>"$TMP/err.one"
        status=$?
        [ "$status" -le 1 ] || fail "one process exited $status: $(head -c 600 "$TMP/err.one")"
        frames_or_all "$clip" "$TMP/out" >"$TMP/one"
        mpirun_cmd 2 --backend cpu --threads 1 --json --start 20 --end 59 "$ref" "$clip"
        [ "$?" -le 1 ] || fail "2 ranks exited $?: $(head -c 600 "$TMP/err")"
        frames_or_all "$clip" "$TMP/out" >"$TMP/many"
        [ "$(wc -l <"$TMP/many")" -eq 40 ] || fail "$clip: $(wc -l <"$TMP/many") lines, not 40"
        cmp -s "$TMP/one" "$TMP/many" ||
            fail "$clip: 2 ranks differ from one: $(diff "$TMP/one" "$TMP/many" | head -c 600)"
        [ "$(grep -c 'is damaged' "$TMP/err")" -eq "$(grep -c 'is damaged' "$TMP/err.one")" ] ||
            fail "$clip: warnings differ: $(grep 'is damaged' "$TMP/err")"
    done
    [ "$(grep -c '"damaged"' "$TMP/one")" -ge 1 ] || fail "no damaged frame in the damaged copy"
}

# frames_or_all CLIP OUT: the lines of OUT without timings; for the damaged copy only each line's
# frame number and damage.
frames_or_all() {
    case "$1" in
    *damaged*) sed -E 's/^(\{"frame":[0-9]+).*("damaged":"[^"]*").*/\1 \2/; s/^(\{"frame":[0-9]+),.*/\1/' "$2" ;;
    *) strip_timings "$2" ;;
    esac
}

# A YUV4MPEG2 file is split between ranks too: its frame count follows from its size (FFmpeg's
# reader of it declares none), so both ranks match frames (one "matching worker" line each
# with --verbose) and rank 0 prints what one process prints.
test_video_mpi_ranks_y4m_file() {
    command -v ffmpeg >/dev/null || exit 77
    ffmpeg -v error -i "$DATA/video/synthetic_rubberwhale.mp4" -frames:v 8 -f yuv4mpegpipe \
        -pix_fmt gray "$TMP/clip.y4m" || fail "ffmpeg could not make the clip"
    local ref="$DATA/images/rubberwhale1.png"
    run_cmd 0 --backend cpu --threads 1 --json --start 2 "$ref" "$TMP/clip.y4m"
    strip_timings "$TMP/out" >"$TMP/one"
    [ "$(wc -l <"$TMP/one")" -eq 6 ] || fail "one process: $(wc -l <"$TMP/one") lines, not 6"
    mpirun_cmd 2 --backend cpu --threads 1 --json --verbose --start 2 "$ref" "$TMP/clip.y4m" ||
        fail "2 ranks exited $?: $(head -c 600 "$TMP/err")"
    strip_timings "$TMP/out" >"$TMP/many"
    cmp -s "$TMP/one" "$TMP/many" || fail "2 ranks differ: $(diff "$TMP/one" "$TMP/many" | head -c 600)"
    [ "$(grep -c 'matching worker' "$TMP/err")" -eq 2 ] ||
        fail "the file was not split: $(grep 'matching worker' "$TMP/err")"
}

# Anything but one video file is rank 0's alone under mpirun: an image pair prints once.
test_mpi_ranks_other_runs_once() {
    mpirun_cmd 2 --backend cpu "$DATA/images/box_in_scene.png" "$DATA/images/box.png" ||
        fail "image pair, 2 ranks: $(head -c 600 "$TMP/err")"
    [ "$(grep -c 'found' "$TMP/out")" -eq 1 ] || fail "printed $(grep -c found "$TMP/out") times"
    mpirun_cmd 2 --backend cpu "$DATA/images/box_in_scene.png" "$DATA/images/no_such.png"
    [ "$?" -eq 2 ] || fail "a missing file under 2 ranks did not exit 2"
}

# Every rank reads the same options, so what is wrong with them is said once, by rank 0, and
# --help is printed once; the exit status is the same on every rank.
test_mpi_ranks_option_errors_once() {
    mpirun_cmd 3 --backend cpu --no-such-option a.png b.png
    [ "$?" -eq 2 ] || fail "an unknown option under 3 ranks did not exit 2"
    [ "$(grep -c 'no-such-option' "$TMP/err")" -eq 1 ] || fail "said: $(cat "$TMP/err")"
    [ "$(grep -c -- '--help' "$TMP/err")" -eq 1 ] || fail "hinted: $(cat "$TMP/err")"
    mpirun_cmd 3 --backend cpu --min-dist 0.5 --max-dist 0.2 a.png b.png
    [ "$?" -eq 2 ] || fail "a bad option value under 3 ranks did not exit 2"
    [ "$(grep -c -- '--max-dist' "$TMP/err")" -eq 1 ] || fail "said: $(cat "$TMP/err")"
    mpirun_cmd 3 --help || fail "--help under 3 ranks exited $?"
    [ "$(grep -c '^Usage: ' "$TMP/out")" -eq 1 ] || fail "help printed $(grep -c '^Usage: ' "$TMP/out") times"
    mpirun_cmd 2 bench distmap --backend cpu --quick --gpus 2
    [ "$?" -eq 2 ] || fail "--gpus under mpirun did not exit 2"
    [ "$(grep -c -- '--gpus' "$TMP/err")" -eq 1 ] || fail "said: $(cat "$TMP/err")"
}

# A process that an MPI launcher started (its environment says so) but that cannot load the
# program's MPI module (geohash-match-mpi.so, beside it or installed) stops with one line and
# exit 2 before doing anything: going on alone, every rank would do the whole run. The same
# program without the launcher's variables runs, needing no MPI.
test_mpi_module_missing_one_line() {
    "$BIN" --version | grep -q "MPI ranks" || exit 77
    mkdir -p "$TMP/alone/bin"
    cp "$BIN" "$TMP/alone/bin/geohash-match"
    OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$TMP/alone/bin/geohash-match" --backend cpu \
        "$DATA/images/butterfly.jpg" "$DATA/pairs/dev_00_query.png" >"$TMP/out" 2>"$TMP/err"
    [ "$?" -eq 2 ] || fail "without its module under a launcher: not exit 2"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "MPI module geohash-match-mpi.so" "$TMP/err" ||
        fail "said: $(cat "$TMP/err")"
    [ ! -s "$TMP/out" ] || fail "printed: $(cat "$TMP/out")"
    "$TMP/alone/bin/geohash-match" --backend cpu "$DATA/images/butterfly.jpg" \
        "$DATA/pairs/dev_00_query.png" >"$TMP/out" 2>"$TMP/err" ||
        fail "without a launcher: exit $?: $(cat "$TMP/err")"
}

# bench distmap under mpirun: one part per rank (ghm_dist_map_create_ranked over MPI), every
# answer checked by the benchmark itself; rank 0 alone prints; --gpus and --parts refused.
test_bench_distmap_mpi_ranks() {
    mpirun_cmd 3 bench distmap --backend cpu --threads 1 --quick --json-out "$TMP/d.json" ||
        fail "3 ranks: $(head -c 600 "$TMP/err")"
    [ "$(grep -c '^split map  ' "$TMP/out")" -eq 1 ] || fail "printed: $(cat "$TMP/out")"
    grep -q "over 3 MPI ranks, device data through host memory" "$TMP/out" ||
        fail "printed: $(cat "$TMP/out")"
    python3 - "$TMP/d.json" <<'PY' || fail "bad bench distmap JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["parts"] == 3 and d["mpi_ranks"] == 3 and d["dist_map"]["find_present"] > 0, d
PY
    mpirun_cmd 2 bench distmap --backend cpu --quick --parts 2
    [ "$?" -eq 2 ] || fail "--parts under mpirun did not exit 2"
    grep -q -- "--parts: under mpirun every rank is one part" "$TMP/err" || fail "$(cat "$TMP/err")"
}

# bench distmap as 2 MPI ranks on two GPUs of this machine: builds and finds go through the
# ranks' windows (each maps the other's by CUDA IPC) and every answer, present and absent, is
# checked by the benchmark itself, at 2^14 and 2^20 keys.
test_bench_distmap_mpi_cuda_ipc() {
    need_cuda_devices 2
    local log2
    for log2 in 14 20; do
        mpirun_cmd 2 bench distmap --backend cuda --log2 $log2 --reps 1 ||
            fail "2 ranks, 2^$log2: $(head -c 600 "$TMP/err")"
        grep -q "over 2 MPI ranks, device data through CUDA IPC" "$TMP/out" ||
            fail "printed: $(cat "$TMP/out")"
    done
}

# A truncated file and a damaged frame with several workers: the same lines, warnings, error
# line and exit status as with one.
test_video_jobs_bad_input() {
    need_ffmpeg_build
    local j
    for j in 1 3; do
        "$BIN" --backend cpu --json --jobs $j --step 10 "$DATA/$MEGA_REF" "$DATA/bad/truncated.avi" \
            >"$TMP/out" 2>"$TMP/err.$j"
        echo "exit $?" >>"$TMP/err.$j"
        strip_timings "$TMP/out" >"$TMP/out.$j"
    done
    cmp -s "$TMP/out.1" "$TMP/out.3" || fail "truncated: stdout differs"
    cmp -s "$TMP/err.1" "$TMP/err.3" || fail "truncated: stderr differs: $(cat "$TMP/err.1" "$TMP/err.3")"
    grep -q "exit 2" "$TMP/err.3" || fail "truncated: $(cat "$TMP/err.3")"
    make_damaged_avi "$DATA/$MEGA" "$TMP/damaged.avi"
    for j in 1 3; do
        "$BIN" --backend cpu --json --jobs $j --start 96 --end 106 "$DATA/$MEGA_REF" "$TMP/damaged.avi" \
            >"$TMP/out" 2>"$TMP/err.$j"
        echo "exit $?" >>"$TMP/err.$j"
        strip_timings "$TMP/out" >"$TMP/out.$j"
    done
    grep -q '"damaged"' "$TMP/out.3" || fail "no damaged frame reported: $(cat "$TMP/out.3")"
    cmp -s "$TMP/out.1" "$TMP/out.3" || fail "damaged: stdout differs"
    cmp -s "$TMP/err.1" "$TMP/err.3" || fail "damaged: stderr differs: $(cat "$TMP/err.1" "$TMP/err.3")"
}

test_video_bad_jobs() {
    local v
    for v in -1 many 257 1.5; do
        run_cmd 2 --backend cpu --jobs "$v" "$DATA/$MEGA_REF" "$DATA/$MEGA"
        expect_one_error_line --jobs
    done
}
