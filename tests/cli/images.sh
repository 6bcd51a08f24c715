# tests/cli/images.sh - cli.sh's cases for image input, image matching, many queries in one run and --search (sourced by tests/cli.sh, which holds
# the helpers and runs one case: bash tests/cli.sh test_NAME).

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

# --- image matching (matching helper) ---
# json_field FILE EXPR: evaluates a Python expression on the parsed JSON object j.
json_field() {
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

test_match_pair_json() {
    run_cmd 0 --backend cpu --json "$DATA/images/box_in_scene.png" "$DATA/pairs/dev_02_query.png"
    python3 -c 'import json,sys; json.load(sys.stdin)' <"$TMP/out" || fail "not JSON: $(cat "$TMP/out")"
    [ "$(json_field "$TMP/out" 'j["found"]')" = True ] || fail "not found: $(cat "$TMP/out")"
    # truth: scale 1.0364, rotation -29.754, translation (82.48, 130.56)
    python3 - "$TMP/out" <<'PY' || fail "transform off: $(cat "$TMP/out")"
import json, sys
j = json.load(open(sys.argv[1]))
t = j["transform"]
assert abs(t["scale"] - 1.0364) < 0.01 and abs(t["rotation_deg"] + 29.754) < 0.5, t
assert abs(t["tx"] - 82.48) < 3 and abs(t["ty"] - 130.56) < 3, t
assert len(j["corners"]) == 4 and 0 <= j["confidence"] <= 1 and j["votes"] > 0
assert j["backend"] == "cpu" and j["query"]["width"] == 188 and j["reference"]["height"] == 384
for k in ("edges", "bases", "signatures", "voting", "verification", "total"):
    assert k in j["timings_ms"], k
PY
}

test_match_text_output() {
    run_cmd 0 --backend cpu "$DATA/images/butterfly.jpg" "$DATA/pairs/dev_00_query.png"
    grep -q "found" "$TMP/out" && grep -q "scale 1.23" "$TMP/out" || fail "summary: $(cat "$TMP/out")"
    run_cmd 0 --backend cpu --quiet "$DATA/images/butterfly.jpg" "$DATA/pairs/dev_00_query.png"
    [ ! -s "$TMP/out" ] || fail "--quiet printed: $(cat "$TMP/out")"
}

test_match_unrelated_not_found() {
    run_cmd 1 --backend cpu --json "$DATA/images/butterfly.jpg" "$DATA/images/rubberwhale1.png"
    [ "$(json_field "$TMP/out" 'j["found"]')" = False ] || fail "false match: $(cat "$TMP/out")"
    run_cmd 1 --backend cpu "$DATA/video/megamind_frame050.png" "$DATA/images/box.png"
}

test_match_help() {
    for args in "--help" "match --help"; do
        # shellcheck disable=SC2086
        run_cmd 0 $args
        for word in --overlay --save-ref --load-ref --max-points --basis-prob --min-dist --quant \
            --min-confidence --top-candidates --search "QUERY..." voxel "Exit status"; do
            grep -qF -- "$word" "$TMP/out" || fail "'$args' does not mention $word"
        done
    done
}

# The arguments swapped (the scene as QUERY): no match, and a warning saying the order; none when
# the order is right, nor for a query not found that is not clearly larger (butterfly.jpg,
# 493x356, in rubberwhale1.png, 584x388: the other way round, 1.3 times its area).
test_match_swapped_arguments_hint() {
    run_cmd 1 --backend cpu "$DATA/images/box.png" "$DATA/images/box_in_scene.png"
    expect_one_error_line "give them the other way round"
    run_cmd 0 --backend cpu "$DATA/images/box_in_scene.png" "$DATA/images/box.png"
    [ ! -s "$TMP/err" ] || fail "$(cat "$TMP/err")"
    run_cmd 1 --backend cpu "$DATA/images/rubberwhale1.png" "$DATA/images/box.png"
    [ ! -s "$TMP/err" ] || fail "$(cat "$TMP/err")"
    run_cmd 1 --backend cpu "$DATA/images/butterfly.jpg" "$DATA/images/rubberwhale1.png"
    [ ! -s "$TMP/err" ] || fail "$(cat "$TMP/err")"
}

test_match_save_load_ref() {
    run_cmd 0 --backend cpu --save-ref "$TMP/ref.ghm" "$DATA/images/butterfly.jpg"
    [ -s "$TMP/ref.ghm" ] || fail "no reference file written"
    ls "$TMP" | grep -q 'tmp\.' && fail "temporary file left behind"
    run_cmd 0 --backend cpu --json "$DATA/images/butterfly.jpg" "$DATA/pairs/dev_03_query.jpg"
    json_field "$TMP/out" 'j["transform"]["matrix"]' >"$TMP/direct"
    run_cmd 0 --backend cpu --json --load-ref "$TMP/ref.ghm" "$DATA/pairs/dev_03_query.jpg"
    json_field "$TMP/out" 'j["transform"]["matrix"]' >"$TMP/loaded"
    cmp -s "$TMP/direct" "$TMP/loaded" || fail "matrices differ: $(cat "$TMP/direct") vs $(cat "$TMP/loaded")"
    [ ! -s "$TMP/err" ] || fail "$(cat "$TMP/err")"
    # a reference-side option cannot change a saved reference: a warning says it is ignored
    run_cmd 0 --backend cpu --json --load-ref "$TMP/ref.ghm" --corners 500 \
        "$DATA/pairs/dev_03_query.jpg"
    expect_one_error_line "warning: --corners: has no effect with --load-ref"
    json_field "$TMP/out" 'j["transform"]["matrix"]' >"$TMP/loaded"
    cmp -s "$TMP/direct" "$TMP/loaded" || fail "--corners changed a saved reference's answer"
}

test_match_damaged_ref() {
    run_cmd 0 --backend cpu --save-ref "$TMP/ref.ghm" "$DATA/images/box.png"
    size=$(stat -c %s "$TMP/ref.ghm")
    # flip one byte in the middle of the payload
    python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=0x40; open(p,"wb").write(b)' "$TMP/ref.ghm"
    run_cmd 2 --backend cpu --load-ref "$TMP/ref.ghm" "$DATA/images/box.png"
    expect_one_error_line ref.ghm
    grep -q "checksum" "$TMP/err" || fail "not reported as damaged: $(cat "$TMP/err")"
    run_cmd 0 --backend cpu --save-ref "$TMP/good.ghm" "$DATA/images/box.png"
    head -c $((size / 3)) "$TMP/good.ghm" >"$TMP/short.ghm"
    run_cmd 2 --backend cpu --load-ref "$TMP/short.ghm" "$DATA/images/box.png"
    expect_one_error_line short.ghm
    grep -q "truncated" "$TMP/err" || fail "not reported as truncated: $(cat "$TMP/err")"
    run_cmd 2 --backend cpu --load-ref "$DATA/images/box.png" "$DATA/images/box.png"
    expect_one_error_line box.png
    grep -q "not a geohash-match reference file" "$TMP/err" || fail "foreign file: $(cat "$TMP/err")"
    run_cmd 2 --backend cpu --load-ref "$DATA/images/no_such.ghm" "$DATA/images/box.png"
    expect_one_error_line no_such.ghm
}

test_match_overlay() {
    run_cmd 0 --backend cpu --overlay "$TMP/o.png" "$DATA/images/box_in_scene.png" "$DATA/images/box.png"
    [ "$(head -c 8 "$TMP/o.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || fail "overlay is not a PNG"
    # without a match there is no outline to draw, but the file is still written
    run_cmd 1 --backend cpu --overlay "$TMP/n.png" "$DATA/images/butterfly.jpg" "$DATA/images/rubberwhale1.png"
    [ -s "$TMP/n.png" ] || fail "no overlay written"
}

test_match_bad_option_values() {
    run_cmd 2 --backend cpu --basis-prob 0 "$DATA/images/box_in_scene.png" "$DATA/images/box.png"
    grep -qF -- --basis-prob "$TMP/err" || fail "error does not name --basis-prob"
    run_cmd 2 --backend cpu --min-dist 0.5 --max-dist 0.2 "$DATA/images/box_in_scene.png" "$DATA/images/box.png"
    grep -qF -- --max-dist "$TMP/err" || fail "error does not name --max-dist"
}

# --- many queries in one run, and --search (issue 14) ---
# Several query images against one reference: one line each, in order, naming the query; the
# reference's tables are built once. Exit 0 when any was found.
test_multi_images_text() {
    run_cmd 0 --backend cpu "$DATA/images/butterfly.jpg" "$DATA/pairs/dev_00_query.png" \
        "$DATA/images/rubberwhale1.png" "$DATA/pairs/dev_03_query.jpg"
    [ "$(wc -l <"$TMP/out")" -eq 3 ] || fail "expected 3 lines: $(cat "$TMP/out")"
    sed -n 1p "$TMP/out" | grep -q "^$DATA/pairs/dev_00_query.png: found, .*scale 1.23" ||
        fail "line 1: $(cat "$TMP/out")"
    sed -n 2p "$TMP/out" | grep -q "^$DATA/images/rubberwhale1.png: no match" ||
        fail "line 2: $(cat "$TMP/out")"
    sed -n 3p "$TMP/out" | grep -q "^$DATA/pairs/dev_03_query.jpg: found, " ||
        fail "line 3: $(cat "$TMP/out")"
    [ ! -s "$TMP/err" ] || fail "stderr: $(cat "$TMP/err")"
    # none found: exit 1
    run_cmd 1 --backend cpu "$DATA/images/butterfly.jpg" "$DATA/images/rubberwhale1.png" \
        "$DATA/images/box.png"
    [ "$(grep -c ': no match' "$TMP/out")" -eq 2 ] || fail "$(cat "$TMP/out")"
}

# --json: one object per query (JSON Lines), "query" naming it, the same fields as for one
# pair, and each the same as the single-pair run of that query gives (timings aside).
test_multi_images_json() {
    run_cmd 0 --backend cpu --json "$DATA/images/box_in_scene.png" "$DATA/pairs/dev_02_query.png" \
        "$DATA/images/butterfly.jpg" "$DATA/images/box.png"
    mv "$TMP/out" "$TMP/multi.json"
    run_cmd 0 --backend cpu --json "$DATA/images/box_in_scene.png" "$DATA/pairs/dev_02_query.png"
    python3 - "$TMP/multi.json" "$TMP/out" "$DATA" <<'PY' || fail "bad JSON Lines: $(cat "$TMP/multi.json")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
single = json.load(open(sys.argv[2]))
data = sys.argv[3]
names = [r["query"]["path"] for r in rows]
assert names == [data + "/pairs/dev_02_query.png", data + "/images/butterfly.jpg",
                 data + "/images/box.png"], names
assert [r["found"] for r in rows] == [True, False, True], [r["found"] for r in rows]
assert all(r["reference"]["path"] == data + "/images/box_in_scene.png" for r in rows)
for r in (rows[0], single):
    del r["timings_ms"]
assert rows[0] == single, (rows[0], single)
PY
}

# A directory stands for its PNG and JPEG images (by content), sorted by name; other files,
# hidden files and subdirectories are left out. An empty directory is an error.
test_multi_directory() {
    mkdir -p "$TMP/q/sub" "$TMP/empty" || fail "mkdir"
    cp "$DATA/pairs/dev_03_query.jpg" "$TMP/q/b_query"      # a JPEG without its suffix
    cp "$DATA/pairs/dev_00_query.png" "$TMP/q/a.png"
    cp "$DATA/images/rubberwhale1.png" "$TMP/q/c.png"
    cp "$DATA/images/box.png" "$TMP/q/.hidden.png"
    cp "$DATA/images/box.png" "$TMP/q/sub/d.png"
    printf 'not an image\n' >"$TMP/q/notes.txt"
    run_cmd 0 --backend cpu --json "$DATA/images/butterfly.jpg" "$TMP/q"
    python3 - "$TMP/out" "$TMP/q" <<'PY' || fail "directory: $(cat "$TMP/out")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
d = sys.argv[2]
assert [r["query"]["path"] for r in rows] == [d + "/a.png", d + "/b_query", d + "/c.png"], rows
assert [r["found"] for r in rows] == [True, True, False]
PY
    run_cmd 2 --backend cpu "$DATA/images/butterfly.jpg" "$TMP/empty" "$DATA/pairs/dev_00_query.png"
    expect_one_error_line "$TMP/empty"
    grep -q "no PNG or JPEG image" "$TMP/err" || fail "$(cat "$TMP/err")"
    grep -q "dev_00_query.png: found" "$TMP/out" || fail "the query after it: $(cat "$TMP/out")"
}

# Files named like pictures that are not PNG or JPEG (a phone's HEIC photo) or cannot be read
# (a link to nothing) are not left out of a directory without a word: each gets its error line,
# the others are answered, exit 2 at the end.
test_multi_directory_unreadable_pictures() {
    mkdir -p "$TMP/q" || fail "mkdir"
    cp "$DATA/pairs/dev_00_query.png" "$TMP/q/a.png"
    printf 'ftypheic' >"$TMP/q/IMG_0001.HEIC"
    ln -s "$TMP/nowhere.jpg" "$TMP/q/b.jpg"
    printf 'not an image\n' >"$TMP/q/notes.txt"
    run_cmd 2 --backend cpu "$DATA/images/butterfly.jpg" "$TMP/q"
    [ "$(wc -l <"$TMP/err")" -eq 2 ] || fail "expected 2 error lines: $(cat "$TMP/err")"
    grep -q "IMG_0001.HEIC: not a PNG or JPEG image" "$TMP/err" || fail "$(cat "$TMP/err")"
    grep -q "b.jpg: cannot open" "$TMP/err" || fail "$(cat "$TMP/err")"
    grep -q "a.png: found" "$TMP/out" || fail "$(cat "$TMP/out")"
}

# A bad file among good ones: its one error line, every other query still answered, exit 2
# at the end (even though some were found).
test_multi_bad_file_among_good() {
    run_cmd 2 --backend cpu --json "$DATA/images/butterfly.jpg" "$DATA/pairs/dev_00_query.png" \
        "$DATA/bad/corrupt_ihdr_crc.png" "$DATA/images/no_such_file.png" "$DATA/pairs/dev_03_query.jpg"
    [ "$(wc -l <"$TMP/err")" -eq 2 ] || fail "expected 2 error lines: $(cat "$TMP/err")"
    grep -q "corrupt_ihdr_crc.png: .*CRC error" "$TMP/err" || fail "$(cat "$TMP/err")"
    grep -q "no_such_file.png" "$TMP/err" || fail "$(cat "$TMP/err")"
    python3 - "$TMP/out" <<'PY' || fail "the good queries: $(cat "$TMP/out")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert [r["query"]["path"].rsplit("/", 1)[1] for r in rows] == ["dev_00_query.png",
                                                                  "dev_03_query.jpg"], rows
assert all(r["found"] for r in rows)
PY
}

# Several workers (--jobs), each decoding the query it takes: the same lines in the same order
# as one worker, bad files and an empty directory among good ones reported in their turn.
test_multi_jobs_same_output() {
    mkdir -p "$TMP/empty" || fail "mkdir"
    local q=("$DATA/pairs/dev_00_query.png" "$DATA/bad/corrupt_ihdr_crc.png"
        "$DATA/images/rubberwhale1.png" "$TMP/empty" "$DATA/pairs/dev_03_query.jpg"
        "$DATA/images/no_such_file.png" "$DATA/images/box.png" "$DATA/pairs/dev_00_query.png")
    run_cmd 2 --backend cpu --jobs 1 "$DATA/images/butterfly.jpg" "${q[@]}"
    mv "$TMP/out" "$TMP/out1"
    mv "$TMP/err" "$TMP/err1"
    [ "$(wc -l <"$TMP/out1")" -eq 5 ] || fail "expected 5 lines: $(cat "$TMP/out1")"
    [ "$(wc -l <"$TMP/err1")" -eq 3 ] || fail "expected 3 error lines: $(cat "$TMP/err1")"
    for jobs in 3 8; do
        run_cmd 2 --backend cpu --jobs "$jobs" "$DATA/images/butterfly.jpg" "${q[@]}"
        cmp -s "$TMP/out1" "$TMP/out" || fail "--jobs $jobs: $(diff "$TMP/out1" "$TMP/out")"
        cmp -s "$TMP/err1" "$TMP/err" || fail "--jobs $jobs: $(diff "$TMP/err1" "$TMP/err")"
    done
}

# --overlay draws one query: refused with several.
test_multi_overlay_refused() {
    run_cmd 2 --backend cpu --overlay "$TMP/o.png" "$DATA/images/butterfly.jpg" \
        "$DATA/pairs/dev_00_query.png" "$DATA/pairs/dev_03_query.jpg"
    expect_one_error_line --overlay
    [ ! -e "$TMP/o.png" ] || fail "an overlay was written"
}

# --load-ref with several queries: REFERENCE comes first (only the background of overlays).
test_multi_load_ref() {
    run_cmd 0 --backend cpu --save-ref "$TMP/ref.ghm" "$DATA/images/butterfly.jpg"
    run_cmd 0 --backend cpu --load-ref "$TMP/ref.ghm" "$DATA/images/butterfly.jpg" \
        "$DATA/pairs/dev_00_query.png" "$DATA/pairs/dev_03_query.jpg"
    [ "$(grep -c ': found' "$TMP/out")" -eq 2 ] || fail "$(cat "$TMP/out")"
    grep -q "^$DATA/images/butterfly.jpg" "$TMP/out" && fail "REFERENCE taken as a query"
    return 0
}

# A video among the queries: its frame lines name it (text prefix, JSON "query").
test_multi_with_video() {
    need_ffmpeg_build
    run_cmd 0 --backend cpu --json --start 50 --end 51 "$DATA/$MEGA_REF" "$DATA/$MEGA" "$DATA/$MEGA_REF"
    python3 - "$TMP/out" "$DATA/$MEGA" "$DATA/$MEGA_REF" <<'PY' || fail "video lines: $(cat "$TMP/out")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert [r["query"]["path"] for r in rows] == [sys.argv[2]] * 2 + [sys.argv[3]], rows
assert [r.get("frame") for r in rows] == [50, 51, None] and all(r["found"] for r in rows)
PY
    run_cmd 0 --backend cpu --start 50 --end 50 "$DATA/$MEGA_REF" "$DATA/$MEGA" "$DATA/$MEGA_REF"
    grep -q "^$DATA/$MEGA: frame 50 " "$TMP/out" || fail "$(cat "$TMP/out")"
    grep -q "^$DATA/$MEGA: summary: 1 frames" "$TMP/out" || fail "$(cat "$TMP/out")"
}

# --search QUERY REFERENCE...: every reference answered, found ones first by confidence; with
# --json a "rank" from 1. A bad reference: its error line, the others ranked, exit 2.
test_search_ranking() {
    run_cmd 0 --backend cpu --json --search "$DATA/pairs/dev_00_query.png" "$DATA/images/rubberwhale1.png" \
        "$DATA/images/box_in_scene.png" "$DATA/images/butterfly.jpg"
    python3 - "$TMP/out" "$DATA" <<'PY' || fail "ranking: $(cat "$TMP/out")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert len(rows) == 3 and [r["rank"] for r in rows] == [1, 2, 3], rows
assert rows[0]["reference"]["path"] == sys.argv[2] + "/images/butterfly.jpg" and rows[0]["found"]
assert not rows[1]["found"] and not rows[2]["found"]
assert rows[1]["confidence"] >= rows[2]["confidence"]
assert all(r["query"]["path"] == sys.argv[2] + "/pairs/dev_00_query.png" for r in rows)
assert abs(rows[0]["transform"]["scale"] - 1.238) < 0.01
PY
    run_cmd 2 --backend cpu --search "$DATA/pairs/dev_00_query.png" "$DATA/bad/truncated.jpg" \
        "$DATA/images/rubberwhale1.png" "$DATA/images/butterfly.jpg"
    expect_one_error_line truncated.jpg
    [ "$(wc -l <"$TMP/out")" -eq 2 ] || fail "expected 2 lines: $(cat "$TMP/out")"
    sed -n 1p "$TMP/out" | grep -q "^$DATA/images/butterfly.jpg: found" || fail "$(cat "$TMP/out")"
}

# --search takes saved reference files and directories as references too; nothing found: 1.
test_search_reference_files() {
    run_cmd 0 --backend cpu --save-ref "$TMP/butterfly.ghm" "$DATA/images/butterfly.jpg"
    mkdir "$TMP/refs" && cp "$DATA/images/box.png" "$DATA/images/rubberwhale1.png" "$TMP/refs/" ||
        fail "copy"
    run_cmd 0 --backend cpu --search "$DATA/pairs/dev_03_query.jpg" "$TMP/refs" "$TMP/butterfly.ghm"
    [ "$(wc -l <"$TMP/out")" -eq 3 ] || fail "expected 3 lines: $(cat "$TMP/out")"
    sed -n 1p "$TMP/out" | grep -q "^$TMP/butterfly.ghm: found" || fail "$(cat "$TMP/out")"
    run_cmd 1 --backend cpu --search "$DATA/pairs/dev_03_query.jpg" "$TMP/refs"
    run_cmd 2 --backend cpu --search "$DATA/pairs/dev_03_query.jpg"
    grep -q -- "--search: missing REFERENCE" "$TMP/err" || fail "$(cat "$TMP/err")"
    run_cmd 2 --backend cpu --search "$DATA/bad/empty.png" "$TMP/refs"
    expect_one_error_line empty.png
}
