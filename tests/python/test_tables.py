"""geohash_match hash tables on NumPy arrays, checked against plain NumPy/Python answers."""

import threading

import numpy as np
import pytest

import geohash_match as gm

CPU = dict(backend="cpu")


def random_keys(n, seed, high=1 << 32):
    rng = np.random.default_rng(seed)
    return rng.integers(0, high, n, dtype=np.uint64).astype(np.uint32)


def test_map_matches_a_dict():
    keys = np.concatenate([random_keys(20000, 1), random_keys(500, 2, 1000),
                           np.array([0xFFFFFFFF, 0], np.uint32)])
    values = random_keys(keys.size, 3)
    want = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        want[k] = min(v, want.get(k, v))  # duplicates keep their smallest value
    m = gm.Map(keys, values, **CPU)
    queries = np.concatenate([keys, random_keys(5000, 4)]).reshape(-1, 2)
    got = m.find(queries)
    assert got.shape == queries.shape and got.dtype == np.uint32
    expect = np.array([want.get(k, gm.NOT_FOUND) for k in queries.ravel().tolist()], np.uint32)
    assert np.array_equal(got.ravel(), expect)
    assert m[int(keys[0])] == want[int(keys[0])]
    with pytest.raises(KeyError):
        m[int(max(want) + 1) if max(want) < 0xFFFFFFFF else 1234567]


@pytest.mark.parametrize("scheme", ["cuckoo", "linear", "quadratic", "double", "robin-hood",
                                    "robin-hood-random"])
def test_map_schemes_agree(scheme):
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
    values = rng.integers(0, 1 << 32, keys.size, dtype=np.uint64).astype(np.uint32)
    queries = np.concatenate([keys, rng.integers(0, 1 << 32, 5000, dtype=np.uint64)]).astype(
        np.uint32)
    want = gm.Map(keys, values, **CPU).find(queries)
    got = gm.Map(keys, values, scheme=scheme, load_factor=0.95, **CPU).find(queries)
    assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="scheme"):
        gm.Map(keys, values, scheme="robin", **CPU)


def test_map_options_and_bad_input():
    keys = np.arange(1000, dtype=np.int64) * 3
    m = gm.Map(keys, keys + 1, load_factor=0.5, **CPU)
    assert np.array_equal(m.find([0, 3, 4]), [1, 4, gm.NOT_FOUND])
    assert gm.Map([], [], **CPU).find([1, 2]).tolist() == [gm.NOT_FOUND] * 2
    with pytest.raises(ValueError, match="load_factor"):
        gm.Map(keys, keys, load_factor=1.5, **CPU)
    with pytest.raises(ValueError, match="0 .. 2"):
        gm.Map([-1], [1], **CPU)
    with pytest.raises(ValueError, match="0 .. 2"):
        gm.Map([1 << 32], [1], **CPU)
    with pytest.raises(TypeError, match="integer"):
        gm.Map([1.5], [1], **CPU)
    with pytest.raises(ValueError, match="differ in length"):
        gm.Map([1, 2], [1], **CPU)


def test_set_matches_numpy():
    keys = np.concatenate([random_keys(30000, 5, 50000), [0xFFFFFFFF]]).astype(np.uint32)
    s = gm.Set(keys, **CPU)
    uniq = np.unique(keys)
    assert len(s) == uniq.size
    assert np.array_equal(s.keys(), uniq)
    q = np.arange(0, 60000, dtype=np.uint32)
    assert np.array_equal(s.contains(q), np.isin(q, keys))
    assert 0xFFFFFFFF in s and 50001 not in s


def test_multimap_matches_grouping():
    keys = random_keys(20000, 6, 3000)
    values = np.arange(keys.size, dtype=np.uint32)
    mm = gm.Multimap(keys, values, **CPU)
    groups = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        groups.setdefault(k, []).append(v)  # in input order
    assert len(mm) == len(groups)
    q = np.array([3001, *range(0, 3000, 7), 5000], np.uint32)
    offsets, vals = mm.retrieve(q)
    assert offsets.size == q.size + 1 and offsets[-1] == vals.size
    for i, k in enumerate(q.tolist()):
        assert vals[offsets[i]:offsets[i + 1]].tolist() == groups.get(k, []), k
    assert np.array_equal(mm.count(q), [len(groups.get(k, [])) for k in q.tolist()])
    assert mm[int(keys[0])].tolist() == groups[int(keys[0])]
    assert mm[4000].size == 0
    offsets, vals = mm.retrieve([4000, 4001])
    assert offsets.tolist() == [0, 0, 0] and vals.size == 0


def test_index_two_ways():
    keys = random_keys(10000, 7, 20000)
    ix = gm.Index(keys, **CPU)
    uniq = np.unique(keys)
    assert len(ix) == uniq.size
    assert np.array_equal(ix.keys(), uniq)  # ids in ascending key order
    q = np.arange(0, 20000, 3, dtype=np.uint32)
    ids = ix.ids(q)
    present = np.isin(q, uniq)
    assert np.array_equal(ids[present], np.searchsorted(uniq, q[present]))
    assert np.all(ids[~present] == gm.NOT_FOUND)
    assert np.array_equal(ix.keys(ids[present]), q[present])
    with pytest.raises(gm.GeohashError, match="index keys") as e:
        ix.keys([uniq.size])
    assert e.value.code == -4  # GHM_ERR_INVALID


def test_tables_agree_across_threads_and_contexts():
    """Threads working at once, each on its own context, get the same answers as one does
    alone (the library runs with the GIL released)."""
    keys = random_keys(50000, 8)
    want = gm.Set(keys, **CPU).contains(keys[::-1])
    results = [None] * 4

    def work(i):
        s = gm.Set(keys, backend="cpu", threads=1)
        results[i] = s.contains(keys[::-1])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, want) for r in results)
    shared = gm.Context(backend="cpu", threads=1)
    a, b = gm.Index(keys, context=shared), gm.Set(keys, context=shared)
    assert a.context is b.context is shared
    assert len(a) == len(b)
