"""The array-API (device) paths against the NumPy ones, on array-api-strict's CPU and non-default devices.

Run by ``tests/test_array_api.py`` in a subprocess with ``SCIPY_ARRAY_API=1`` (which must be set
before scipy is imported, so not in the main test process) and
``sklearn.set_config(array_api_dispatch=True)``.
"""

import os

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":  # pragma: no cover - only run through test_array_api.py
    pytest.skip("needs SCIPY_ARRAY_API=1 (run by tests/test_array_api.py)", allow_module_level=True)

xp = pytest.importorskip("array_api_strict")
import sklearn  # noqa: E402

import kernelsketch as ks  # noqa: E402

DEVICES = [xp.Device("CPU_DEVICE"), xp.Device("device1")]
KERNELS = [
    ("gaussian", {"bandwidth": 1.5}),
    ("laplacian", {"bandwidth": 2.0}),
    ("cauchy", {"bandwidth": 1.0}),
    ("linear", {}),
    ("polynomial", {"degree": 2}),
    ("sigmoid", {"gamma": 0.1}),
    ("cosine", {}),
]
MAPS = {
    "Nystroem": lambda: ks.Nystroem(n_landmarks=50, n_components=10, random_state=0),
    "KernelJL": lambda: ks.KernelJL(n_components=5, n_landmarks=50, random_state=0),
    "SubsampleKPCA": lambda: ks.SubsampleKPCA(n_components=3, n_landmarks=50, random_state=0),
    "RandomFourierFeatures": lambda: ks.RandomFourierFeatures(32, random_state=0),
    "RandomFourierFeatures-paired": lambda: ks.RandomFourierFeatures(32, variant="paired", random_state=0),
    "Nystroem-laplacian": lambda: ks.Nystroem(n_landmarks=40, kernel="laplacian", random_state=0),
}
# transforms computed on the device from a host fit (their fitted state is not landmarks/projection)
PROJECTIONS = {
    "KernelPCA": lambda: ks.KernelPCA(n_components=4, bandwidth=2.0),
    "RFKPCA": lambda: ks.RFKPCA(n_components=3, n_random_features=64, bandwidth=2.0, random_state=0),
    "RNCA": lambda: ks.RNCA(n_components=3, n_random_features=64, bandwidth=2.0, random_state=0),
    "StreamingKPCA": lambda: ks.StreamingKPCA(n_components=3, n_random_features=64, bandwidth=2.0, random_state=0),
    "FrequentDirections": lambda: ks.FrequentDirections(sketch_size=3, n_components=2),
}


@pytest.mark.parametrize("device", DEVICES, ids=str)
@pytest.mark.parametrize("name", sorted(PROJECTIONS))
def test_projection_transforms_on_the_device_equal_numpy(name, device):
    rng = np.random.default_rng(4)
    Xn = rng.normal(size=(300, 4))
    X = xp.asarray(Xn, device=device)
    est = PROJECTIONS[name]().fit(X)
    ref = PROJECTIONS[name]().fit(Xn).transform(Xn)
    Z = est.transform(X)
    assert Z.device == device and Z.dtype == xp.float64
    np.testing.assert_allclose(_host(Z), ref, rtol=1e-9, atol=1e-10)
    Z32 = est.transform(xp.asarray(Xn, dtype=xp.float32, device=device))
    assert Z32.dtype == xp.float32
    np.testing.assert_allclose(_host(Z32), ref, rtol=1e-3, atol=2e-4)


@pytest.fixture(autouse=True)
def dispatch():
    with sklearn.config_context(array_api_dispatch=True):
        yield


def _host(A):
    return np.asarray(A._array) if hasattr(A, "_array") else np.asarray(A)


@pytest.mark.parametrize("device", DEVICES, ids=str)
@pytest.mark.parametrize("kernel, params", KERNELS, ids=[k for k, _ in KERNELS])
def test_pairwise_kernel_on_the_device_equals_numpy(kernel, params, device):
    rng = np.random.default_rng(0)
    Xn, Yn = rng.normal(size=(300, 4)), rng.normal(size=(40, 4))
    K = ks.pairwise_kernel(xp.asarray(Xn, device=device), xp.asarray(Yn, device=device), kernel=kernel, **params)
    assert type(K).__module__.startswith("array_api_strict") and K.device == device and K.dtype == xp.float64
    np.testing.assert_allclose(_host(K), ks.pairwise_kernel(Xn, Yn, kernel=kernel, **params), rtol=1e-12, atol=1e-13)
    K32 = ks.pairwise_kernel(
        xp.asarray(Xn, dtype=xp.float32, device=device),
        xp.asarray(Yn, dtype=xp.float32, device=device),
        kernel=kernel,
        **params,
    )
    assert K32.dtype == xp.float32
    np.testing.assert_allclose(_host(K32), ks.pairwise_kernel(Xn, Yn, kernel=kernel, **params), rtol=2e-4, atol=2e-5)


def test_the_device_path_chunks_under_the_working_memory_budget():
    rng = np.random.default_rng(1)
    Xn = rng.normal(size=(2000, 3))
    with ks.config_context(working_memory=0.05):  # ~50 KiB: many chunks of a 2000 x 2000 block
        K = ks.pairwise_kernel(xp.asarray(Xn), kernel="gaussian", bandwidth=1.0)
    np.testing.assert_allclose(_host(K), ks.pairwise_kernel(Xn, kernel="gaussian", bandwidth=1.0), atol=1e-13)


@pytest.mark.parametrize("device", DEVICES, ids=str)
@pytest.mark.parametrize("name", sorted(MAPS))
def test_transform_on_the_device_equals_numpy_and_stays_there(name, device):
    rng = np.random.default_rng(2)
    Xn = rng.normal(size=(400, 4))
    X = xp.asarray(Xn, device=device)
    on_device = MAPS[name]().fit(X)
    on_host = MAPS[name]().fit(Xn)
    # same random state, same draws: the device-input fit is the host fit, and its state lives on the device
    for attr in ("landmarks_", "projection_", "random_weights_", "landmark_indices_"):
        if getattr(on_host, attr, None) is not None:
            state = getattr(on_device, attr)
            assert type(state).__module__.startswith("array_api_strict") and state.device == device, attr
            np.testing.assert_array_equal(_host(state), getattr(on_host, attr))
    Z = on_device.transform(X)
    assert Z.device == device and Z.dtype == xp.float64
    np.testing.assert_allclose(_host(Z), on_host.transform(Xn), rtol=1e-10, atol=1e-12)
    Z32 = on_device.transform(xp.asarray(Xn, dtype=xp.float32, device=device))
    assert Z32.dtype == xp.float32 and Z32.device == device
    np.testing.assert_allclose(_host(Z32), on_host.transform(Xn), rtol=1e-3, atol=1e-4)
    # NumPy input to a device-fitted model takes the NumPy path (its state copied to the host)
    Zh = on_device.transform(Xn)
    assert isinstance(Zh, np.ndarray)
    np.testing.assert_allclose(Zh, on_host.transform(Xn), rtol=1e-10, atol=1e-12)
    # and a host-fitted model transforms device input on the device
    Zd = on_host.transform(X)
    assert Zd.device == device
    np.testing.assert_allclose(_host(Zd), on_host.transform(Xn), rtol=1e-10, atol=1e-12)


def test_device_input_errors_are_clear():
    est = ks.Nystroem(n_landmarks=20, random_state=0).fit(np.random.default_rng(0).normal(size=(50, 3)))
    with pytest.raises(ValueError, match="3 features"):
        est.transform(xp.ones((4, 5)))
    bad = xp.asarray(np.array([[0.0, np.nan, 1.0]]))
    with pytest.raises(ValueError, match="NaN or infinity"):
        est.transform(bad)
    with pytest.raises(ValueError, match="NaN or infinity"):
        ks.pairwise_kernel(bad, kernel="gaussian", bandwidth=1.0)


def test_a_device_fitted_model_saves_host_arrays(tmp_path):
    est = ks.KernelJL(n_components=3, n_landmarks=30, random_state=0).fit(
        xp.asarray(np.random.default_rng(3).normal(size=(40, 4)))
    )
    assert type(est.projection_).__module__.startswith("array_api_strict")  # fitted state on the device
    path = ks.save(est, tmp_path / "m.ksm")
    back = ks.load(path)
    assert isinstance(back.projection_, np.ndarray)  # written and read back as host arrays
    X = xp.asarray(np.ones((5, 4)))
    np.testing.assert_allclose(_host(back.transform(X)), _host(est.transform(X)), rtol=1e-12)


def test_device_blocks_respect_free_device_memory(monkeypatch):
    # issue 16: blocks sized from the device's free memory when it is known; a clear MemoryError otherwise
    from kernelsketch.kernels import array_api

    Xn = np.random.default_rng(5).normal(size=(3000, 3))
    X = xp.asarray(Xn)
    sizes = []
    real = array_api.get_chunk_n_rows

    def spy(row_bytes, n, budget):
        sizes.append(budget)
        return real(row_bytes, n, budget)

    monkeypatch.setattr(array_api, "get_chunk_n_rows", spy)
    monkeypatch.setattr(array_api, "free_device_bytes", lambda xp_, device: 2 * 2**20)  # 2 MiB free
    K = ks.pairwise_kernel(X, kernel="gaussian", bandwidth=1.0)
    assert sizes[-1] == pytest.approx(1.0)  # half of the free memory, below working_memory (256 MiB)
    np.testing.assert_allclose(_host(K), ks.pairwise_kernel(Xn, kernel="gaussian", bandwidth=1.0), atol=1e-13)
    monkeypatch.setattr(array_api, "free_device_bytes", lambda xp_, device: 1000)  # not one row
    with pytest.raises(MemoryError, match=r"the device has .* MiB free"):
        ks.pairwise_kernel(X, kernel="gaussian", bandwidth=1.0)
