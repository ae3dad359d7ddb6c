"""The array-API (device) paths against the NumPy ones: array-api-strict's two devices and PyTorch on the CPU.

Run by ``tests/test_array_api.py`` in a subprocess with ``SCIPY_ARRAY_API=1`` (which must be set
before scipy is imported, so not in the main test process) and
``sklearn.set_config(array_api_dispatch=True)``.

What is checked, on every backend: a fit on device input equals the NumPy fit (the same
random draws) and keeps its fitted state on that device; transforms stay in the input's
namespace, device and dtype; streams (``partial_fit``, ``merge``, a save and a load onto
the device in between) run on the device and equal the host stream; KernelPCA's solvers,
the bandwidth heuristics and the Gram-error metrics run there and copy only what they say
to the host; scikit-learn's own array-API estimator checks pass; input of another
namespace or device than the model's is refused (scikit-learn's rule) and
:func:`kernelsketch.move_estimator_to` / ``ks.load(xp=, device=)`` move a model or Pipeline.
"""

import os

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":  # pragma: no cover - only run through test_array_api.py
    pytest.skip("needs SCIPY_ARRAY_API=1 (run by tests/test_array_api.py)", allow_module_level=True)

strict = pytest.importorskip("array_api_strict")
import sklearn  # noqa: E402
from sklearn.externals import array_api_compat  # noqa: E402
from sklearn.utils.estimator_checks import estimator_checks_generator  # noqa: E402

import kernelsketch as ks  # noqa: E402
from kernelsketch.utils.array_api import host_array, state_namespace  # noqa: E402

try:  # PyTorch on the CPU, when installed (CI installs the CPU wheel where one is on the machine)
    import torch

    torch.set_num_threads(1)
    TORCH = [pytest.param((array_api_compat.array_namespace(torch.zeros(1)), "cpu"), id="torch-cpu")]
except ImportError:  # pragma: no cover - depends on the machine
    TORCH = [pytest.param(None, id="torch-cpu", marks=pytest.mark.skip(reason="PyTorch is not installed"))]

BACKENDS = [
    pytest.param((strict, strict.Device("CPU_DEVICE")), id="strict-CPU_DEVICE"),
    pytest.param((strict, strict.Device("device1")), id="strict-device1"),
    *TORCH,
]
KERNELS = [
    ("gaussian", {"bandwidth": 1.5}),
    ("laplacian", {"bandwidth": 2.0}),
    ("cauchy", {"bandwidth": 1.0}),
    ("linear", {}),
    ("polynomial", {"degree": 2}),
    ("sigmoid", {"gamma": 0.1}),
    ("cosine", {}),
]
# every estimator with a device path, some with a data-driven bandwidth
ESTIMATORS = {
    "Nystroem": lambda: ks.Nystroem(n_landmarks=50, n_components=10, random_state=0),
    "Nystroem-laplacian": lambda: ks.Nystroem(n_landmarks=40, kernel="laplacian", random_state=0),
    "KernelJL": lambda: ks.KernelJL(n_components=5, n_landmarks=50, random_state=0),
    "SubsampleKPCA": lambda: ks.SubsampleKPCA(n_components=3, n_landmarks=50, random_state=0),
    "RandomFourierFeatures": lambda: ks.RandomFourierFeatures(32, random_state=0),
    "RandomFourierFeatures-paired": lambda: ks.RandomFourierFeatures(32, variant="paired", random_state=0),
    "KernelPCA": lambda: ks.KernelPCA(n_components=4, bandwidth=2.0),
    "KernelPCA-median": lambda: ks.KernelPCA(n_components=4, bandwidth="median", random_state=0),
    "RFKPCA": lambda: ks.RFKPCA(n_components=3, n_random_features=64, bandwidth=2.0, random_state=0),
    "RFKPCA-percentile": lambda: ks.RFKPCA(n_components=3, n_random_features=64, random_state=0),
    "RNCA": lambda: ks.RNCA(n_components=3, n_random_features=64, bandwidth=2.0, random_state=0),
    "StreamingKPCA": lambda: ks.StreamingKPCA(n_components=3, n_random_features=64, bandwidth=2.0, random_state=0),
    "StreamingKPCA-paired": lambda: ks.StreamingKPCA(
        n_components=3, n_random_features=32, variant="paired", sketch_size=8, bandwidth=2.0, random_state=0
    ),
    "FrequentDirections": lambda: ks.FrequentDirections(sketch_size=3, n_components=2, buffer_size="paper"),
    "FrequentDirections-buffer": lambda: ks.FrequentDirections(sketch_size=3, n_components=2, buffer_size=64),
    "StreamingKPCA-buffer": lambda: ks.StreamingKPCA(
        n_components=3, n_random_features=48, buffer_size=100, bandwidth=2.0, random_state=0
    ),
}
STREAMS = [
    "FrequentDirections",
    "FrequentDirections-buffer",
    "StreamingKPCA",
    "StreamingKPCA-paired",
    "StreamingKPCA-buffer",
    "RFKPCA",
    "RNCA",
]


@pytest.fixture(autouse=True)
def dispatch():
    with sklearn.config_context(array_api_dispatch=True):
        yield


def _asarray(backend, A, dtype=None):
    xp, device = backend
    return xp.asarray(A, dtype=dtype, device=device)


def _on(backend, A):
    """A lives in the backend's namespace, on its device."""
    xp, device = backend
    ns = array_api_compat.array_namespace(A)
    return ns.__name__ == xp.__name__ and str(array_api_compat.device(A)) == str(device)


def _state_arrays(est):
    return {k: v for k, v in vars(est).items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel, params", KERNELS, ids=[k for k, _ in KERNELS])
def test_pairwise_kernel_on_the_device_equals_numpy(kernel, params, backend):
    xp = backend[0]
    rng = np.random.default_rng(0)
    Xn, Yn = rng.normal(size=(300, 4)), rng.normal(size=(40, 4))
    K = ks.pairwise_kernel(_asarray(backend, Xn), _asarray(backend, Yn), kernel=kernel, **params)
    assert _on(backend, K) and K.dtype == xp.float64
    np.testing.assert_allclose(
        host_array(K), ks.pairwise_kernel(Xn, Yn, kernel=kernel, **params), rtol=1e-12, atol=1e-13
    )
    K32 = ks.pairwise_kernel(
        _asarray(backend, Xn, xp.float32), _asarray(backend, Yn, xp.float32), kernel=kernel, **params
    )
    assert K32.dtype == xp.float32
    ref = ks.pairwise_kernel(Xn, Yn, kernel=kernel, **params)
    np.testing.assert_allclose(host_array(K32), ref, rtol=2e-4, atol=2e-5)


def test_the_device_path_chunks_under_the_working_memory_budget():
    rng = np.random.default_rng(1)
    Xn = rng.normal(size=(2000, 3))
    with ks.config_context(working_memory=0.05):  # ~50 KiB: many chunks of a 2000 x 2000 block
        K = ks.pairwise_kernel(strict.asarray(Xn), kernel="gaussian", bandwidth=1.0)
    np.testing.assert_allclose(host_array(K), ks.pairwise_kernel(Xn, kernel="gaussian", bandwidth=1.0), atol=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_a_device_fit_equals_the_numpy_fit_and_lives_on_the_device(name, backend):
    xp = backend[0]
    rng = np.random.default_rng(2)
    Xn = rng.normal(size=(300, 4))
    X = _asarray(backend, Xn)
    on_device = ESTIMATORS[name]().fit(X)
    on_host = ESTIMATORS[name]().fit(Xn)
    # scikit-learn's convention: every fitted array attribute in the input's namespace, on its device,
    # equal to the NumPy fit's (the same random_state draws the same landmarks, Z and W everywhere)
    host_state = _state_arrays(on_host)
    assert host_state or state_namespace(on_device) is not None, name  # StreamingKPCA: nested state only
    for attr, ref in host_state.items():
        state = getattr(on_device, attr)
        assert _on(backend, state), attr
        np.testing.assert_allclose(host_array(state), ref, rtol=1e-9, atol=1e-11, err_msg=attr)
    Z = on_device.transform(X)
    assert _on(backend, Z) and Z.dtype == xp.float64
    np.testing.assert_allclose(host_array(Z), on_host.transform(Xn), rtol=1e-9, atol=1e-10)
    Z32 = on_device.transform(_asarray(backend, Xn, xp.float32))
    assert Z32.dtype == xp.float32 and _on(backend, Z32)
    np.testing.assert_allclose(host_array(Z32), on_host.transform(Xn), rtol=1e-3, atol=2e-4)
    # derived attributes (properties) answer where the model lives too
    for attr in ("components_", "eigenvalues_", "singular_values_", "explained_variance_"):
        if hasattr(type(on_host), attr) and isinstance(getattr(type(on_host), attr), property):
            assert _on(backend, getattr(on_device, attr)), attr
            np.testing.assert_allclose(host_array(getattr(on_device, attr)), getattr(on_host, attr), atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", STREAMS)
def test_streams_run_on_the_device_and_equal_the_host_stream(name, backend):
    rng = np.random.default_rng(3)
    Xn = rng.normal(size=(500, 4)) @ rng.normal(size=(4, 4))
    blocks = [slice(0, 170), slice(170, 333), slice(333, 500)]
    dev, host = ESTIMATORS[name](), ESTIMATORS[name]()
    for rows in blocks:
        dev.partial_fit(_asarray(backend, Xn[rows]))
        host.partial_fit(Xn[rows])
    assert state_namespace(dev) is not None and _on(backend, dev.transform(_asarray(backend, Xn[:5])))
    np.testing.assert_allclose(
        host_array(dev.transform(_asarray(backend, Xn))), host.transform(Xn), rtol=1e-8, atol=1e-9
    )
    # merge: two device sketches, and a host sketch joining a device one, equal the host merge
    a, b = ESTIMATORS[name](), ESTIMATORS[name]()
    a.partial_fit(_asarray(backend, Xn[:250]))
    b.partial_fit(_asarray(backend, Xn[250:]))
    ha, hb = ESTIMATORS[name]().partial_fit(Xn[:250]), ESTIMATORS[name]().partial_fit(Xn[250:])
    ha.merge(hb)
    np.testing.assert_allclose(host_array(a.merge(b).transform(_asarray(backend, Xn))), ha.transform(Xn), atol=1e-8)
    c = ESTIMATORS[name]().partial_fit(_asarray(backend, Xn[:250]))
    c.merge(ESTIMATORS[name]().partial_fit(Xn[250:]))
    assert state_namespace(c) is not None
    np.testing.assert_allclose(host_array(c.transform(_asarray(backend, Xn))), ha.transform(Xn), atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_frequent_directions_keeps_its_guarantee_on_the_device(backend):
    rng = np.random.default_rng(4)
    A = rng.normal(size=(800, 20)) * np.linspace(3, 0.1, 20)
    fd = ks.FrequentDirections(sketch_size=6, buffer_size="paper").fit(_asarray(backend, A))
    B = host_array(fd.get_sketch())
    err = np.linalg.norm(A.T @ A - B.T @ B, 2)
    s = np.linalg.svd(A, compute_uv=False)
    tail = float(np.sum(s[2:] ** 2))
    assert err <= fd.error_bound_ * (1 + 1e-9) <= tail / (6 - 2) * (1 + 1e-9)
    assert fd._n_shrinks > 100  # the shrinks ran on the device buffer
    assert fd.squared_frobenius_ == pytest.approx(float(np.sum(A * A)), rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_pca_dense_solver_runs_on_the_device(backend, monkeypatch):
    from kernelsketch.decomposition import kernel_pca

    calls = []
    real = kernel_pca._dense_eigh_on_device
    monkeypatch.setattr(kernel_pca, "_dense_eigh_on_device", lambda *a: calls.append(1) or real(*a))
    Xn = np.random.default_rng(5).normal(size=(120, 3))
    X = _asarray(backend, Xn)
    est = ks.KernelPCA(n_components=5, eigen_solver="dense", bandwidth=1.5, fit_inverse_transform=True).fit(X)
    ref = ks.KernelPCA(n_components=5, eigen_solver="dense", bandwidth=1.5, fit_inverse_transform=True).fit(Xn)
    assert calls == [1] and est._solver_used == "dense"
    np.testing.assert_allclose(host_array(est.eigenvectors_), ref.eigenvectors_, atol=1e-10)
    np.testing.assert_allclose(host_array(est.fit_transform(X)), ref.fit_transform(Xn), atol=1e-10)
    assert _on(backend, est.fit_transform(X))
    back = est.inverse_transform(est.transform(X))
    assert _on(backend, back)
    np.testing.assert_allclose(host_array(back), ref.inverse_transform(ref.transform(Xn)), atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_input_of_another_namespace_is_refused_and_models_move(backend, tmp_path):
    Xn = np.random.default_rng(6).normal(size=(200, 3))
    X = _asarray(backend, Xn)
    on_host = ks.Nystroem(n_landmarks=30, random_state=0).fit(Xn)
    on_device = ks.Nystroem(n_landmarks=30, random_state=0).fit(X)
    # scikit-learn's rule under array_api_dispatch: transform's input where fit's was
    with pytest.raises(ValueError, match=r"Nystroem.transform\(\) must use the same namespace"):
        on_host.transform(X)
    with pytest.raises(ValueError, match=r"must use the same namespace.*move_estimator_to"):
        on_device.transform(Xn)
    stream = ks.FrequentDirections(sketch_size=4).partial_fit(X)
    with pytest.raises(ValueError, match=r"FrequentDirections.partial_fit\(\) must use the same namespace"):
        stream.partial_fit(Xn)
    # with dispatch off, NumPy input takes the NumPy path whatever the model's device
    with sklearn.config_context(array_api_dispatch=False):
        np.testing.assert_allclose(on_device.transform(Xn), on_host.transform(Xn), atol=1e-12)
    # moving a model: a copy, the original unchanged
    moved = ks.move_estimator_to(on_host, backend[0], backend[1])
    assert state_namespace(on_host) is None and _on(backend, moved.landmarks_)
    np.testing.assert_allclose(host_array(moved.transform(X)), on_host.transform(Xn), atol=1e-12)
    back = ks.move_estimator_to(moved, "numpy")
    assert isinstance(back.projection_, np.ndarray)
    # a saved device model is written as host arrays; load(xp=, device=) puts it on a device again
    path = ks.save(on_device, tmp_path / "m.ksm")
    assert isinstance(ks.load(path).projection_, np.ndarray)
    loaded = ks.load(path, xp=backend[0], device=backend[1])
    assert _on(backend, loaded.projection_)
    np.testing.assert_allclose(host_array(loaded.transform(X)), on_host.transform(Xn), atol=1e-12)
    with pytest.raises(ValueError, match="device= needs xp="):
        ks.load(path, device="cpu")


def test_device_input_errors_are_clear():
    est = ks.Nystroem(n_landmarks=20, random_state=0).fit(strict.asarray(np.random.default_rng(0).normal(size=(50, 3))))
    with pytest.raises(ValueError, match="3 features"):
        est.transform(strict.ones((4, 5)))
    bad = strict.asarray(np.array([[0.0, np.nan, 1.0]]))
    with pytest.raises(ValueError, match="NaN or infinity"):
        est.transform(bad)
    with pytest.raises(ValueError, match="NaN or infinity"):
        ks.pairwise_kernel(bad, kernel="gaussian", bandwidth=1.0)
    # device transforms validate as fits do (and as the host transform does): squared distances of
    # values beyond 1e150 would overflow into a silently wrong kernel
    huge = strict.asarray(np.array([[0.0, 1e200, 1.0]]))
    with pytest.raises(ValueError, match="magnitude"):
        est.transform(huge)
    with pytest.raises(ValueError, match="magnitude"):
        ks.pairwise_kernel(huge, kernel="gaussian", bandwidth=1.0)
    for est in (ks.FrequentDirections(), ks.StreamingKPCA(bandwidth=1.0), ks.RFKPCA(bandwidth=1.0)):
        with pytest.raises(ValueError, match="NaN or infinity"):
            est.fit(strict.asarray(np.array([[0.0, 1.0], [np.inf, 1.0]])))
        with pytest.raises(ValueError, match="2-D"):
            est.partial_fit(strict.ones((3,)))
        with pytest.raises(ValueError, match="magnitude"):
            est.fit(strict.asarray(np.array([[0.0, 1.0], [1e200, 1.0]])))
    fd = ks.FrequentDirections(sketch_size=3).partial_fit(strict.ones((4, 3), dtype=strict.float32))
    with pytest.raises(ValueError, match="beyond the range of float32"):
        fd.partial_fit(strict.asarray(np.full((2, 3), 1e100)))
    with pytest.raises(ValueError, match="3 features"):
        fd.partial_fit(strict.ones((2, 4), dtype=strict.float32))


def test_device_blocks_respect_free_device_memory(monkeypatch):
    # issue 16: blocks sized from the device's free memory when it is known; a clear MemoryError otherwise
    from kernelsketch.kernels import array_api

    Xn = np.random.default_rng(5).normal(size=(3000, 3))
    X = strict.asarray(Xn)
    sizes = []
    real = array_api.get_chunk_n_rows

    def spy(row_bytes, n, budget):
        sizes.append(budget)
        return real(row_bytes, n, budget)

    monkeypatch.setattr(array_api, "get_chunk_n_rows", spy)
    monkeypatch.setattr(array_api, "free_device_bytes", lambda xp_, device: 2 * 2**20)  # 2 MiB free
    K = ks.pairwise_kernel(X, kernel="gaussian", bandwidth=1.0)
    assert sizes[-1] == pytest.approx(1.0)  # half of the free memory, below working_memory (256 MiB)
    np.testing.assert_allclose(host_array(K), ks.pairwise_kernel(Xn, kernel="gaussian", bandwidth=1.0), atol=1e-13)
    monkeypatch.setattr(array_api, "free_device_bytes", lambda xp_, device: 1000)  # not one row
    with pytest.raises(MemoryError, match=r"the device has .* MiB free"):
        ks.pairwise_kernel(X, kernel="gaussian", bandwidth=1.0)


# scikit-learn's own array-API estimator checks, for every estimator that declares array_api_support
# (those for namespaces or devices this machine lacks -- CuPy, CUDA, MPS -- skip themselves)
SKLEARN_ESTIMATORS = [
    ks.Nystroem(n_landmarks=10, n_components=4),
    ks.KernelJL(n_components=3, n_landmarks=10),
    ks.SubsampleKPCA(n_components=3, n_landmarks=10),
    ks.RandomFourierFeatures(16),
    ks.KernelPCA(n_components=3, fit_inverse_transform=True),
    ks.RFKPCA(n_components=3, n_random_features=16),
    ks.RNCA(n_components=3, n_random_features=16),
    ks.StreamingKPCA(n_components=3, n_random_features=16, sketch_size=6),
    ks.FrequentDirections(sketch_size=4, n_components=3),
    ks.NystroemKernelKMeans(n_clusters=3, n_landmarks=10, n_init=2),
]
SKLEARN_CHECKS = [
    pytest.param(
        est, check, id=f"{type(est).__name__}-{check.func.__name__}-{'-'.join(map(str, check.keywords.values()))}"
    )
    for est0 in SKLEARN_ESTIMATORS
    for est, check in estimator_checks_generator(est0, legacy=True, mark=None)
    if getattr(check, "func", None) is not None and check.func.__name__.startswith("check_array_api")
]


def test_every_array_api_estimator_is_checked_by_scikit_learn():
    assert {type(e).__name__ for e in SKLEARN_ESTIMATORS} == {
        name for name in ks.__all__ if getattr(getattr(ks, name), "__sklearn_tags__", None) and _declares(name)
    }
    assert len(SKLEARN_CHECKS) >= 10 * 8


def _declares(name):
    cls = getattr(ks, name)
    try:
        return bool(cls().__sklearn_tags__().array_api_support)
    except TypeError:
        return False


@pytest.mark.parametrize("estimator, check", SKLEARN_CHECKS)
def test_scikit_learn_array_api_checks(estimator, check):
    check(estimator)


def _count_host_copies(monkeypatch, *modules):
    """The rows of every device-to-host copy (``to_numpy``) made through ``modules``, as they happen."""
    import kernelsketch.utils.array_api as aa

    copied = []
    real = aa.to_numpy

    def spy(A, xp):
        copied.append(A.shape[0] if A.ndim else 1)
        return real(A, xp)

    for module in (aa, *modules):
        monkeypatch.setattr(module, "to_numpy", spy)
    return copied


@pytest.mark.parametrize("name", ["Nystroem", "KernelJL", "SubsampleKPCA"])
def test_a_landmark_fit_brings_only_the_landmark_rows_to_the_host(name, monkeypatch):
    import kernelsketch.maps.landmark_estimator as le
    import kernelsketch.utils.validation as va

    copied = _count_host_copies(monkeypatch, le, va)
    Xn = np.random.default_rng(7).normal(size=(5000, 3))
    make = lambda: ESTIMATORS[name]().set_params(bandwidth=1.5)  # noqa: E731 - a numeric bandwidth: no heuristic
    est = make().fit(strict.asarray(Xn))
    # the landmarks (50), one row for the map's dimension, and for Nystroem's captured-trace check its 256
    # rows and the fitted state it reads back (landmarks and projection, 50 rows each)
    assert sum(copied) <= 50 + 1 + 256 + 2 * 50, copied
    np.testing.assert_allclose(host_array(est.transform(strict.asarray(Xn[:50]))), make().fit(Xn).transform(Xn[:50]))
    # a data-driven bandwidth resolves, from the device, to the host fit's bandwidth
    est = ESTIMATORS[name]().set_params(bandwidth="median").fit(strict.asarray(Xn))
    ref = ESTIMATORS[name]().set_params(bandwidth="median").fit(Xn)
    assert est.kernel_.bandwidth == ref.kernel_.bandwidth


@pytest.mark.parametrize("method", ["median", "percentile", "mean_sq"])
def test_bandwidth_heuristics_read_only_their_sample_from_the_device(method, monkeypatch):
    import kernelsketch.kernels.bandwidth as bw

    copied = _count_host_copies(monkeypatch, bw)
    Xn = np.random.default_rng(9).normal(size=(400_000, 2))
    h = ks.estimate_bandwidth(strict.asarray(Xn), method, random_state=3)
    assert h == pytest.approx(ks.estimate_bandwidth(Xn, method, random_state=3), rel=1e-12)
    # the rows of 100,000 sampled pairs (at most 200,000), or for mean_sq the column sums only
    assert sum(copied) <= (200_000 if method != "mean_sq" else 2), copied
    with pytest.raises(ValueError, match="identical"):
        ks.estimate_bandwidth(strict.ones((10, 2)), method)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gram_error_metrics_run_on_the_device(backend):
    from kernelsketch import metrics

    rng = np.random.default_rng(8)
    Xn = rng.normal(size=(400, 3))
    Yn = ks.Nystroem(n_landmarks=30, bandwidth=1.5, random_state=0).fit(Xn).transform(Xn)
    X, Y = _asarray(backend, Xn), _asarray(backend, Yn)
    kw = dict(kernel="gaussian", bandwidth=1.5)
    with ks.config_context(working_memory=0.5):  # many row blocks
        for method in ("dense", "blocked", "formula"):
            e = metrics.kernel_frobenius_error(X, Y, method=method, **kw)
            assert e == pytest.approx(metrics.kernel_frobenius_error_dense(Xn, Yn, **kw), rel=1e-10)
        for method in ("dense", "lanczos"):
            e = metrics.kernel_spectral_error(X, Y, method=method, random_state=0, **kw)
            assert e == pytest.approx(metrics.kernel_spectral_error_dense(Xn, Yn, **kw), rel=1e-7)
    # a host factor follows the data to its device
    assert metrics.kernel_frobenius_error(X, Yn, **kw) == pytest.approx(metrics.kernel_frobenius_error(Xn, Yn, **kw))
    with pytest.raises(ValueError, match="400 rows"):
        metrics.kernel_frobenius_error(X, Y[:10, :], **kw)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("solver", ["arpack", "operator"])
def test_kernel_pca_lanczos_runs_its_products_on_the_device(solver, backend, monkeypatch):
    from kernelsketch.decomposition import kernel_pca
    from kernelsketch.kernels.gram_operator import GramOperator

    products = []  # every Lanczos product on the device: the formed centred Gram, or the operator's blocks
    owner, method = (kernel_pca._DeviceMatrix, "_matmat") if solver == "arpack" else (GramOperator, "_device_matmat")
    real = getattr(owner, method)
    monkeypatch.setattr(owner, method, lambda self, V: products.append(1) or real(self, V))
    Xn = np.random.default_rng(10).normal(size=(150, 3))
    kw = dict(n_components=4, eigen_solver=solver, bandwidth=1.5, random_state=0)
    with ks.config_context(working_memory=0.05):  # the operator's blocks: many
        est = ks.KernelPCA(**kw).fit(_asarray(backend, Xn))
    ref = ks.KernelPCA(**kw).fit(Xn)
    assert products and est._solver_used == solver and _on(backend, est.eigenvectors_)
    np.testing.assert_allclose(host_array(est.eigenvalues_), ref.eigenvalues_, rtol=1e-10)
    np.testing.assert_allclose(host_array(est.eigenvectors_), ref.eigenvectors_, atol=1e-8)
    np.testing.assert_allclose(host_array(est.explained_variance_ratio_), ref.explained_variance_ratio_, rtol=1e-10)
    np.testing.assert_allclose(host_array(est.transform(_asarray(backend, Xn))), ref.transform(Xn), atol=1e-8)


def test_a_device_gram_that_cannot_fit_is_a_clear_memory_error(monkeypatch):
    from kernelsketch.kernels import array_api

    monkeypatch.setattr(array_api, "free_device_bytes", lambda xp_, device: 10_000)
    X = strict.asarray(np.random.default_rng(11).normal(size=(100, 2)))
    with pytest.raises(MemoryError, match=r"forms the 100 x 100 Gram matrix.*eigen_solver='operator'"):
        ks.KernelPCA(n_components=2, eigen_solver="dense", bandwidth=1.0).fit(X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nystroem_stream_of_device_blocks_lives_on_the_device(backend):
    # the reservoir of landmark rows is host bookkeeping; the fitted map follows the stream's device
    Xn = np.random.default_rng(12).normal(size=(600, 3))
    dev, host = (ks.Nystroem(n_landmarks=40, bandwidth=1.5, random_state=0) for _ in range(2))
    for rows in (slice(0, 250), slice(250, 600)):
        dev.partial_fit(_asarray(backend, Xn[rows]))
        host.partial_fit(Xn[rows])
        assert _on(backend, dev.landmarks_) and _on(backend, dev.projection_)
    np.testing.assert_array_equal(host_array(dev.landmark_indices_), host.landmark_indices_)
    np.testing.assert_allclose(host_array(dev.transform(_asarray(backend, Xn))), host.transform(Xn), atol=1e-12)
    with pytest.raises(ValueError, match=r"Nystroem.partial_fit\(\) must use the same namespace"):
        dev.partial_fit(Xn[:10])


def test_a_nystroem_stream_copies_only_the_rows_its_reservoir_keeps(monkeypatch):
    import kernelsketch.maps.landmark_estimator as le

    copied = _count_host_copies(monkeypatch, le)  # and utils.array_api's host_rows, which the reservoir uses
    Xn = np.random.default_rng(16).normal(size=(20_000, 3))
    dev = ks.Nystroem(n_landmarks=40, bandwidth=1.5, random_state=0)
    for start in range(0, 20_000, 5_000):
        dev.partial_fit(strict.asarray(Xn[start : start + 5_000]))
    # the first 40 rows, then about 40 ln(20,000 / 40) = 250 accepted rows, one gather each
    assert sum(copied) < 1_000, sum(copied)
    host = ks.Nystroem(n_landmarks=40, bandwidth=1.5, random_state=0)
    for start in range(0, 20_000, 5_000):
        host.partial_fit(Xn[start : start + 5_000])
    np.testing.assert_array_equal(host_array(dev.landmark_indices_), host.landmark_indices_)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("d", [5, 40])  # the covariance route (d <= buffer) and the Gram route
def test_frequent_directions_shrinks_with_a_device_eigh_when_the_gram_is_large(d, backend, monkeypatch):
    from kernelsketch.sketches import frequent_directions

    monkeypatch.setattr(frequent_directions, "DEVICE_EIGH_MIN", 2)  # every shrink diagonalises on the device
    rng = np.random.default_rng(13)
    A = rng.normal(size=(700, d)) * np.linspace(3, 0.2, d)
    dev = ks.FrequentDirections(sketch_size=4, n_components=3, buffer_size="paper").fit(_asarray(backend, A))
    host = ks.FrequentDirections(sketch_size=4, n_components=3, buffer_size="paper").fit(A)
    assert dev._n_shrinks == host._n_shrinks > 50
    assert dev.error_bound_ == pytest.approx(host.error_bound_, rel=1e-9)
    np.testing.assert_allclose(host_array(dev.get_sketch()), host.get_sketch(), atol=1e-8)
    np.testing.assert_allclose(host_array(dev.transform(_asarray(backend, A))), host.transform(A), atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fitted_pipeline_moves_to_a_device_as_a_whole(backend):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    Xn = np.random.default_rng(14).normal(size=(300, 4)) * 3 + 1
    pipe = make_pipeline(StandardScaler(), ks.Nystroem(n_landmarks=30, bandwidth=2.0, random_state=0)).fit(Xn)
    moved = ks.move_estimator_to(pipe, backend[0], backend[1])
    Z = moved.transform(_asarray(backend, Xn))
    assert _on(backend, Z) and _on(backend, moved[0].mean_) and _on(backend, moved[1].landmarks_)
    np.testing.assert_allclose(host_array(Z), pipe.transform(Xn), atol=1e-12)
    assert isinstance(pipe[1].landmarks_, np.ndarray)  # the original is unchanged


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["StreamingKPCA", "RFKPCA", "FrequentDirections"])
def test_a_saved_device_stream_loads_onto_a_device_and_goes_on(name, backend, tmp_path):
    rng = np.random.default_rng(15)
    Xn = rng.normal(size=(400, 4)) @ rng.normal(size=(4, 4))
    dev = ESTIMATORS[name]().partial_fit(_asarray(backend, Xn[:200]))
    path = ks.save(dev, tmp_path / "stream.ksm")
    back = ks.load(path, xp=backend[0], device=backend[1])
    assert state_namespace(back) is not None and _on(backend, back.transform(_asarray(backend, Xn[:3])))
    back.partial_fit(_asarray(backend, Xn[200:]))
    host = ESTIMATORS[name]().partial_fit(Xn[:200]).partial_fit(Xn[200:])
    np.testing.assert_allclose(host_array(back.transform(_asarray(backend, Xn))), host.transform(Xn), atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_kmeans_embeds_and_assigns_on_the_device(backend):
    from sklearn.datasets import make_blobs

    Xn, _ = make_blobs(n_samples=600, centers=4, n_features=3, random_state=0)
    kw = dict(n_clusters=4, n_landmarks=60, bandwidth=3.0, n_init=3, random_state=0)
    X = _asarray(backend, Xn)
    est, ref = ks.NystroemKernelKMeans(**kw).fit(X), ks.NystroemKernelKMeans(**kw).fit(Xn)
    assert _on(backend, est.labels_) and _on(backend, est.cluster_centers_) and _on(backend, est.nystroem_.landmarks_)
    np.testing.assert_array_equal(host_array(est.labels_), ref.labels_)
    labels = est.predict(X)
    assert _on(backend, labels) and labels.dtype == backend[0].int32
    np.testing.assert_array_equal(host_array(labels), ref.predict(Xn))
    np.testing.assert_allclose(host_array(est.transform(X)), ref.transform(Xn), atol=1e-10)
    assert est.score(X) == pytest.approx(ref.score(Xn), rel=1e-9)
    assert _on(backend, est.fit_predict(X))


@pytest.mark.parametrize("name", ["RFKPCA", "StreamingKPCA"])
@pytest.mark.parametrize("how", ["fit", "partial_fit"])
def test_a_random_feature_stream_resolves_its_heuristic_from_the_device(name, how, monkeypatch):
    import kernelsketch.kernels.bandwidth as bw
    import kernelsketch.utils.validation as va

    copied = _count_host_copies(monkeypatch, bw, va)  # va: a check_input on device data would copy it all
    Xn = np.random.default_rng(17).normal(size=(300_000, 2))
    make = {  # a Generator random_state: every draw must come in the host fit's order
        "RFKPCA": lambda: ks.RFKPCA(n_components=2, n_random_features=16, random_state=np.random.default_rng(5)),
        "StreamingKPCA": lambda: ks.StreamingKPCA(
            n_components=2, n_random_features=16, buffer_size=4096, random_state=np.random.default_rng(5)
        ),
    }[name]
    dev = getattr(make(), how)(strict.asarray(Xn))
    host = getattr(make(), how)(Xn)
    assert dev.kernel_.bandwidth == host.kernel_.bandwidth  # the "percentile" heuristic, resolved alike
    np.testing.assert_array_equal(host_array(dev.feature_map_.random_weights_), host.feature_map_.random_weights_)
    assert sum(copied) <= 200_000, sum(copied)  # the sampled pairs' rows at most, never the 300,000 rows
