"""geohash_match image matching: paths and arrays, Matcher reuse, reference files, errors."""

import json
import math
import os
import shutil

import numpy as np
import pytest

import geohash_match as gm
from damaged_avi import damage_one_chunk

CPU = dict(backend="cpu")


def truth_pairs(data):
    with open(data("pairs", "truth.json")) as f:
        t = json.load(f)
    return [(os.path.normpath(data("pairs", p["reference"])), data("pairs", p["query"]), p)
            for p in t["pairs"]]


def corner_error(res, truth, w, h):
    m, t = res.matrix, np.array(truth)
    corners = np.array([[0, 0, 1], [w - 1, 0, 1], [w - 1, h - 1, 1], [0, h - 1, 1]], float)
    return float(np.max(np.hypot(*(corners @ m.T - corners @ t.T).T)))


def test_known_pairs_found_where_the_truth_says(data):
    """The six known-transform pairs: found, corners within a pixel of the truth, and the
    result's fields agree with its matrix (so every field is read from the right place)."""
    for ref, query, p in truth_pairs(data):
        r = gm.match(ref, query, **CPU)
        h, w = gm.load_image(query).shape
        assert r.found and r, query
        assert corner_error(r, p["matrix"], w, h) < 1.0, (query, r.matrix, p["matrix"])
        a, c = r.matrix[0][0], r.matrix[1][0]
        assert r.scale == pytest.approx(math.hypot(a, c), rel=1e-6)
        assert r.rotation_deg == pytest.approx(math.degrees(math.atan2(c, a)), abs=1e-6)
        assert (r.tx, r.ty) == (r.matrix[0][2], r.matrix[1][2])
        assert 0.25 <= r.confidence <= 1 and r.votes > 0 and r.inliers > 0
        assert 0 < r.forward_share <= 1 and 0 < r.backward_share <= 1


def test_unrelated_pictures_not_found(data):
    r = gm.match(data("images", "butterfly.jpg"), data("images", "rubberwhale1.png"), **CPU)
    assert not r.found and not r and r.confidence < 0.25


def test_arrays_match_as_files(data):
    """An array gives the result its file gives: grey (H, W) and (H, W, 1), and RGB / RGBA
    arrays whose channels are equal (their luma is that grey, alpha 255 changes nothing)."""
    ref, query = data("images", "box_in_scene.png"), data("pairs", "dev_02_query.png")
    want = gm.match(ref, query, **CPU)
    g = gm.load_image(query)
    assert g.dtype == np.uint8 and g.shape == (260, 188)
    ref_g = gm.load_image(ref)
    for q in (g, g[:, :, None], np.dstack([g, g, g]), np.dstack([g, g, g, np.full_like(g, 255)])):
        got = gm.match(ref_g, q, **CPU)
        assert got.found and np.array_equal(got.matrix, want.matrix), q.shape
        assert (got.votes, got.confidence, got.inliers) == (want.votes, want.confidence,
                                                            want.inliers)
    # a strided view (every other column of a wider array) is taken as the picture it shows
    wide = np.zeros((g.shape[0], 2 * g.shape[1]), np.uint8)
    wide[:, ::2] = g
    assert np.array_equal(gm.match(ref_g, wide[:, ::2], **CPU).matrix, want.matrix)


def test_bad_arrays_refused():
    with pytest.raises(TypeError, match="uint8"):
        gm.match(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.uint8), **CPU)
    with pytest.raises(ValueError, match="C in 1..4"):
        gm.match(np.zeros((8, 8, 5), np.uint8), np.zeros((8, 8), np.uint8), **CPU)
    with pytest.raises(TypeError, match="path or a NumPy"):
        gm.match(42, np.zeros((8, 8), np.uint8), **CPU)
    with pytest.raises(gm.GeohashError):
        gm.match(np.zeros((0, 8), np.uint8), np.zeros((8, 8), np.uint8), **CPU)


def test_matcher_reused_for_many_queries(data):
    """One Matcher, many queries: each result the one-shot match gives, in any order."""
    ref = data("images", "butterfly.jpg")
    queries = [data("pairs", "dev_00_query.png"), data("images", "rubberwhale1.png"),
               data("pairs", "dev_03_query.jpg")]
    one_shot = [gm.match(ref, q, **CPU) for q in queries]
    with gm.Matcher(ref, **CPU) as m:
        assert m.size == (493, 356)
        for q, want in list(zip(queries, one_shot)) * 2 + list(zip(queries, one_shot))[::-1]:
            got = m.match(q)
            assert got.found == want.found and np.array_equal(got.matrix, want.matrix), q
    with pytest.raises(ValueError, match="closed"):
        m.match(queries[0])
    # a matcher made for one query (match() makes one; no table on the CPU) answers the same
    # every time it is asked
    with gm.Matcher(ref, one_query=True, **CPU) as m:
        for q, want in list(zip(queries, one_shot)) * 2:
            got = m.match(q)
            assert got.found == want.found and np.array_equal(got.matrix, want.matrix), q
            assert got.votes == want.votes, q


def test_clones_match_in_parallel(data):
    """Clones (each in a context of its own) answer as their matcher, from several threads at
    once; a clone outlives the matcher it came from; a closed matcher cannot be cloned."""
    import concurrent.futures
    ref = data("images", "butterfly.jpg")
    queries = [data("pairs", "dev_00_query.png"), data("images", "rubberwhale1.png"),
               data("pairs", "dev_03_query.jpg")] * 3
    m = gm.Matcher(ref, threads=2, **CPU)
    want = [m.match(q) for q in queries]
    clones = [m.clone(threads=1) for _ in range(3)]
    assert all(c.context is not m.context and c.context.threads == 1 for c in clones)
    m.close()
    with pytest.raises(ValueError, match="closed"):
        m.clone()
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda i: clones[i % 3].match(queries[i]), range(len(queries))))
    for q, g, w in zip(queries, got, want):
        assert g.found == w.found and np.array_equal(g.matrix, w.matrix), q
    same = clones[0].clone(context=clones[0].context)  # into the same context: one lock
    assert np.array_equal(same.match(queries[0]).matrix, want[0].matrix)


def test_save_and_load_reference(tmp_path, data):
    ref, query = data("images", "butterfly.jpg"), data("pairs", "dev_03_query.jpg")
    m = gm.Matcher(ref, **CPU)
    path = tmp_path / "butterfly.ghm"
    m.save(path)
    assert path.stat().st_size > 0 and os.listdir(tmp_path) == ["butterfly.ghm"]
    loaded = gm.Matcher.load(path, **CPU)
    assert loaded.size == m.size
    assert np.array_equal(loaded.match(query).matrix, m.match(query).matrix)
    with gm.Matcher.load(path, one_query=True, **CPU) as one:
        got, want = one.match(query), m.match(query)
        assert np.array_equal(got.matrix, want.matrix) and got.votes == want.votes
    # a flipped byte: refused, the library's own words
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x40
    bad = tmp_path / "bad.ghm"
    bad.write_bytes(bytes(raw))
    with pytest.raises(gm.GeohashError, match=r"bad\.ghm: .*checksum") as e:
        gm.Matcher.load(bad, **CPU)
    assert e.value.code == -3  # GHM_ERR_FORMAT
    with pytest.raises(gm.GeohashError, match="not a geohash-match reference file"):
        gm.Matcher.load(ref, **CPU)
    with pytest.raises(gm.GeohashError, match="cannot"):
        m.save(tmp_path / "no_such_dir" / "x.ghm")


def test_file_errors_carry_the_library_message(tmp_path, data):
    ref = data("images", "butterfly.jpg")
    with pytest.raises(gm.GeohashError, match=r"no_such\.png: cannot open") as e:
        gm.match(ref, data("images", "no_such.png"), **CPU)
    assert e.value.code == -2  # GHM_ERR_IO
    with pytest.raises(gm.GeohashError, match=r"truncated\.jpg: truncated JPEG data"):
        gm.match(ref, data("bad", "truncated.jpg"), **CPU)
    with pytest.raises(gm.GeohashError, match=r"corrupt_ihdr_crc\.png: .*CRC error"):
        gm.Matcher(data("bad", "corrupt_ihdr_crc.png"), **CPU)
    odd = tmp_path / "caf\u00e9 q.png"
    shutil.copy(data("pairs", "dev_00_query.png"), odd)
    assert gm.match(ref, odd, **CPU).found


def test_backend_threads_seed(data):
    ref, query = data("images", "rubberwhale1.png"), data("pairs", "dev_01_query.png")
    one = gm.match(ref, query, backend="cpu", threads=1)
    two = gm.match(ref, query, backend="cpu", threads=2, seed=1)
    assert one.found and np.array_equal(one.matrix, two.matrix)
    ctx = gm.Context(backend="cpu", threads=1)
    assert ctx.backend == "cpu" and ctx.threads == 1
    assert np.array_equal(gm.Matcher(ref, context=ctx).match(query).matrix, one.matrix)
    with pytest.raises(ValueError, match="auto, cpu, cuda"):
        gm.Context(backend="gpu")
    with pytest.raises(ValueError, match="threads"):
        gm.match(ref, query, backend="cpu", threads=-1)


def test_context_device():
    """device= names the CUDA device; the CPU ignores it; one that does not exist is an error
    that leaves the others usable."""
    assert gm.Context(backend="cpu", device=3).device is None
    with pytest.raises(ValueError, match="device"):
        gm.Context(device=-1)
    n = gm.cuda_device_count()
    assert n >= 0
    if n == 0:
        return
    assert gm.Context(backend="cuda", device=n - 1).device == n - 1
    with pytest.raises(gm.GeohashError, match="device %d" % n):
        gm.Context(backend="cuda", device=n)
    assert gm.Context(backend="cuda").device == 0


def test_cuda_without_a_device_is_an_error():
    ctx = gm.Context()  # auto: CUDA where a device is
    if ctx.backend == "cuda":
        pytest.skip("a CUDA device is present")
    with pytest.raises(gm.GeohashError, match="cuda"):
        gm.Context(backend="cuda")


needs_ffmpeg = pytest.mark.skipif(not gm.have_ffmpeg(), reason="a build without FFmpeg")


@needs_ffmpeg
def test_match_video_against_the_truth(data):
    """The synthetic video against its source photo: every frame found where the truth file
    says (2 % of the reference diagonal, as on the command line), pts as in the truth."""
    with open(data("video", "synthetic_rubberwhale_truth.json")) as f:
        truth = json.load(f)
    w, h = truth["frame_size"]
    tol = 0.02 * math.hypot(*truth["reference_size"])
    frames = list(gm.match_video(data("images", "rubberwhale1.png"),
                                 data("video", "synthetic_rubberwhale.mp4"), **CPU))
    assert [f.frame for f in frames] == [t["frame"] for t in truth["truth"]]
    for f, t in zip(frames, truth["truth"]):
        assert f.found and f.damaged is None, f.frame
        assert f.pts == pytest.approx(t["pts"], abs=1e-3)
        assert corner_error(f.result, t["matrix"], w, h) < tol, f.frame


@needs_ffmpeg
def test_match_video_selection_and_matcher_reuse(data):
    ref, video = data("video", "megamind_frame050.png"), data("video", "Megamind.avi")
    m = gm.Matcher(ref, **CPU)
    frames = list(gm.match_video(m, video, start=48, end=56, step=2))
    assert [f.frame for f in frames] == [48, 50, 52, 54, 56]
    f50 = frames[1].result
    assert f50.found and np.allclose(f50.matrix, [[1, 0, 0], [0, 1, 0]], atol=0.01)
    assert m.match(ref).found  # the matcher given stays open
    # threads > 0 bounds the decoder's threads too: the same frames and answers
    one = list(gm.match_video(m, video, start=48, end=56, step=2, threads=1))
    assert [(f.frame, f.result.matrix.tolist()) for f in one] == \
        [(f.frame, f.result.matrix.tolist()) for f in frames]


@needs_ffmpeg
def test_match_video_late_start_from_key_frame(data):
    """A start past frame 0 of an MP4 with a key frame every 12 frames is reached from the key
    frame before it (frame 24 for 30): the frames, times and answers of a reading from the
    first frame."""
    ref, video = data("video", "megamind_frame050.png"), data("video", "megamind_gop12.mp4")
    m = gm.Matcher(ref, **CPU)
    every = [f for f in gm.match_video(m, video, end=40) if f.frame >= 30]
    late = list(gm.match_video(m, video, start=30, end=40))
    assert [f.frame for f in late] == list(range(30, 41))
    def answers(frames):
        return [(f.frame, f.pts, f.result.found, f.result.votes, f.result.confidence)
                for f in frames]
    assert answers(late) == answers(every)


@needs_ffmpeg
def test_match_video_decode_choice(data):
    """decode= takes "cpu" or "gpu"; "gpu" needs the CUDA backend, and where there is a device
    its frames and answers are the CPU decoding's (H.264)."""
    ref, video = data("video", "megamind_frame050.png"), data("video", "megamind_gop12.mp4")
    with pytest.raises(ValueError, match="decode"):
        list(gm.match_video(ref, video, decode="npu", **CPU))
    with pytest.raises(gm.GeohashError, match="CUDA backend"):
        list(gm.match_video(ref, video, decode="gpu", **CPU))
    if gm.cuda_device_count() == 0:
        return
    m = gm.Matcher(ref, backend="cuda")
    def answers(frames):
        return [(f.frame, f.pts, f.result.found, f.result.votes, f.result.confidence)
                for f in frames]
    assert answers(gm.match_video(m, video, decode="gpu", start=13)) == \
        answers(gm.match_video(m, video, start=13))


@needs_ffmpeg
def test_match_video_errors(data):
    ref = data("video", "megamind_frame050.png")
    with pytest.raises(gm.GeohashError, match=r"empty\.mp4: .*empty"):
        list(gm.match_video(ref, data("bad", "empty.mp4"), **CPU))
    seen = []
    with pytest.raises(gm.GeohashError, match=r"truncated\.avi: .*ends early"):
        for f in gm.match_video(ref, data("bad", "truncated.avi"), step=10, **CPU):
            seen.append(f.frame)
    assert seen == list(range(0, 70, 10))


@needs_ffmpeg
def test_match_video_damaged_frame(tmp_path, data):
    """One video chunk of a copy of Megamind.avi overwritten with noise (damaged_avi.py, as in
    tests/cli/video.sh): the lost frames come as damaged, with the reason, and the frames after
    them are matched."""
    d = damage_one_chunk(open(data("video", "Megamind.avi"), "rb").read())
    video = tmp_path / "damaged.avi"
    video.write_bytes(d)
    frames = list(gm.match_video(data("video", "megamind_frame050.png"), video, start=96,
                                 end=106, **CPU))
    assert [f.frame for f in frames] == list(range(96, 107))
    damaged = [f for f in frames if f.damaged]
    assert damaged and all(f.result is None and not f.found for f in damaged)
    assert all(f.result is not None for f in frames if not f.damaged)
