"""geohash_match hash tables on device arrays (CuPy, __cuda_array_interface__), against the
CPU backend on the same NumPy data. The GPU tests skip without CuPy or a CUDA device; the
argument checks run everywhere (they refuse before anything touches the memory)."""

import numpy as np
import pytest

import geohash_match as gm
from geohash_match import _device


class FakeDeviceArray:
    """An object that claims device memory (the pointer is never read: the checks refuse)."""

    def __init__(self, shape=(4,), typestr="<u4", strides=None, version=3):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (0xDEAD0000, False), "version": version,
                                         "stream": 1}


def test_device_array_on_the_cpu_backend_is_refused():
    with pytest.raises(ValueError, match="cpu backend, which cannot read device arrays"):
        gm.Set(FakeDeviceArray(), backend="cpu")
    s = gm.Set(np.arange(10, dtype=np.uint32), backend="cpu")
    with pytest.raises(ValueError, match="cannot read device arrays"):
        s.contains(FakeDeviceArray())
    m = gm.Map(np.arange(4), np.arange(4), backend="cpu")
    with pytest.raises(ValueError, match="cannot read device arrays"):
        m.find(FakeDeviceArray())


def test_device_argument_checks():
    with pytest.raises(TypeError, match="must be uint32"):
        _device.DeviceArg(FakeDeviceArray(typestr="<i8"), "keys")
    with pytest.raises(ValueError, match="C-contiguous"):
        _device.DeviceArg(FakeDeviceArray(strides=(8,)), "keys")
    with pytest.raises(ValueError, match="C-contiguous"):
        _device.DeviceArg(FakeDeviceArray(shape=(2, 3), strides=(4, 8)), "keys")
    ok = _device.DeviceArg(FakeDeviceArray(shape=(2, 3), strides=(12, 4)), "keys")
    assert ok.size == 6 and ok.shape == (2, 3) and ok.stream == 1
    assert _device.DeviceArg(FakeDeviceArray(version=2), "keys").stream is None


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
        gm.Context(backend="cuda").close()
    except Exception as e:  # no driver, no device, or a library built without CUDA
        pytest.skip("no usable CUDA device: %s" % e)
    return cupy


GPU = dict(backend="cuda")
CPU = dict(backend="cpu")


def random_keys(n, seed, high=1 << 32):
    rng = np.random.default_rng(seed)
    return rng.integers(0, high, n, dtype=np.uint64).astype(np.uint32)


@pytest.mark.parametrize("scheme", ["cuckoo", "linear", "robin-hood", "chaining", "two-level"])
def test_map_on_device_arrays(cp, scheme):
    keys = np.concatenate([random_keys(50000, 1), random_keys(500, 2, 1000)])
    values = random_keys(keys.size, 3)
    queries = np.concatenate([keys, random_keys(20000, 4)]).reshape(-1, 5)
    want = gm.Map(keys, values, scheme=scheme, **CPU).find(queries)
    m = gm.Map(cp.asarray(keys), cp.asarray(values), scheme=scheme, **GPU)
    got = m.find(cp.asarray(queries))
    assert isinstance(got, cp.ndarray) and got.dtype == cp.uint32 and got.shape == queries.shape
    assert np.array_equal(cp.asnumpy(got), want)
    host = m.find(queries)  # host queries of a table built on the device: NumPy answers
    assert isinstance(host, np.ndarray) and np.array_equal(host, want)


def test_set_on_device_arrays(cp):
    keys = np.concatenate([random_keys(30000, 5), np.array([0, 0xFFFFFFFF], np.uint32)])
    queries = np.concatenate([keys, random_keys(30000, 6)])
    s = gm.Set(cp.asarray(keys), **GPU)
    got = s.contains(cp.asarray(queries))
    assert isinstance(got, cp.ndarray) and got.dtype == cp.bool_
    assert np.array_equal(cp.asnumpy(got), gm.Set(keys, **CPU).contains(queries))
    all_keys = s.keys()
    assert isinstance(all_keys, cp.ndarray)
    assert np.array_equal(cp.asnumpy(all_keys), np.unique(keys))


def test_multimap_on_device_arrays(cp):
    keys = random_keys(40000, 7, 5000)
    values = random_keys(keys.size, 8)
    queries = np.concatenate([random_keys(3000, 9, 6000), np.array([], np.uint32)])
    cpu = gm.Multimap(keys, values, **CPU)
    mm = gm.Multimap(cp.asarray(keys), cp.asarray(values), **GPU)
    offsets, vals = mm.retrieve(cp.asarray(queries))
    want_offsets, want_vals = cpu.retrieve(queries)
    assert isinstance(offsets, cp.ndarray) and isinstance(vals, cp.ndarray)
    assert np.array_equal(cp.asnumpy(offsets), want_offsets)
    assert np.array_equal(cp.asnumpy(vals), want_vals)
    assert np.array_equal(cp.asnumpy(mm.count(cp.asarray(queries))), cpu.count(queries))
    empty_offsets, empty_vals = mm.retrieve(cp.asarray(np.array([7000000], np.uint32)))
    assert cp.asnumpy(empty_offsets).tolist() == [0, 0] and empty_vals.size == 0


def test_index_on_device_arrays(cp):
    keys = random_keys(30000, 10, 100000)
    ix = gm.Index(cp.asarray(keys), **GPU)
    cpu = gm.Index(keys, **CPU)
    ids = ix.ids(cp.asarray(keys))
    assert np.array_equal(cp.asnumpy(ids), cpu.ids(keys))
    assert np.array_equal(cp.asnumpy(ix.keys(ids)), keys)
    assert np.array_equal(cp.asnumpy(ix.keys()), np.unique(keys))
    with pytest.raises(gm.GeohashError):
        ix.keys(cp.asarray(np.array([len(ix)], np.uint32)))


def test_device_errors(cp):
    keys = cp.arange(100, dtype=cp.uint32)
    with pytest.raises(TypeError, match="must be uint32"):
        gm.Set(keys.astype(cp.int64), **GPU)
    s = gm.Set(keys, **GPU)
    with pytest.raises(ValueError, match="C-contiguous"):
        s.contains(keys[::2])
    with pytest.raises(ValueError, match="cannot read device arrays"):
        gm.Set(keys, **CPU)
    assert s.contains(keys[::2].copy()).all()  # a contiguous copy is fine


def test_keys_written_on_a_busy_stream(cp):
    """Keys still being written on CuPy's stream when the build starts: the library must wait
    for that stream (the interface's "stream"), or it reads the memory before the keys land."""
    n = 1 << 22
    want = (np.arange(n, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    want_d = cp.asarray(want)
    cp.cuda.Device().synchronize()
    for attempt in range(3):
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            x = cp.ones((4096, 4096), dtype=cp.float32)
            for _ in range(10):  # tens of milliseconds queued ahead of the keys
                x = x @ x * cp.float32(1e-3)
            keys = cp.zeros(n, dtype=cp.uint32)
            keys += want_d
            m = gm.Map(keys, keys, **GPU)
            got = m.find(keys)
        stream.synchronize()
        assert np.array_equal(cp.asnumpy(got), want), "attempt %d" % attempt


def test_results_without_cupy(cp, monkeypatch):
    """Without CuPy, results are DeviceArray: __cuda_array_interface__ and get()."""
    monkeypatch.setattr(_device, "cupy", None)
    keys = random_keys(10000, 11)
    m = gm.Map(cp.asarray(keys), cp.asarray(keys), **GPU)
    got = m.find(cp.asarray(keys))
    assert isinstance(got, _device.DeviceArray) and got.shape == keys.shape
    assert np.array_equal(got.get(), keys)
    assert np.array_equal(cp.asnumpy(cp.asarray(got)), keys)  # zero-copy view by CuPy
    s = gm.Set(cp.asarray(keys), **GPU)
    assert s.contains(got).get().all()  # a DeviceArray is a device argument too
    assert np.array_equal(s.keys().get(), np.unique(keys))
    ix = gm.Index(cp.asarray(keys), **GPU)
    assert np.array_equal(ix.keys().get(), np.unique(keys))
