"""Random Fourier features: kernel approximation rates, unbiasedness, the fast cosine, the contract."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from scipy.spatial.distance import cdist
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch.kernels import estimate_bandwidth
from kernelsketch.maps import RandomFourierFeatures
from kernelsketch.maps.fast_cosine import TILE_ELEMENTS, fast_cos, fast_cos_sin, fast_sin

from .reference import naive_kernel

KERNELS = ["gaussian", "laplacian", "cauchy"]
MAPS = [("cos", False), ("paired", False), ("cos", True), ("paired", True)]


@parametrize_with_checks(
    [
        RandomFourierFeatures(n_random_features=50, bandwidth=1.0),
        RandomFourierFeatures(bandwidth="median", variant="paired", random_state=0),
        RandomFourierFeatures(n_random_features=30, kernel="laplacian", bandwidth=2.0, random_state=0),
        RandomFourierFeatures(n_random_features=30, orthogonal=True, bandwidth=2.0, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- fast cosine ---------------------------------------------------------------


@pytest.fixture(params=["numba", "numpy"])
def cos_backend(request, monkeypatch):
    """Run a fast-cosine test through the compiled kernel and through the numpy tiles."""
    import kernelsketch.maps.fast_cosine as fc

    if request.param == "numba":
        pytest.importorskip("numba")
    monkeypatch.setattr(fc, "USE_NUMBA", request.param == "numba")
    monkeypatch.setattr(fc, "NUMBA_MIN_ELEMENTS", 0)  # the compiled kernel for any size (small calls default to numpy)
    return request.param


@pytest.mark.usefixtures("cos_backend")
@pytest.mark.parametrize("limit", [1.0, 100.0, 1e4, 3e6, 1e9])
def test_fast_cos_sin_match_numpy(limit):
    t = np.random.default_rng(0).uniform(-limit, limit, 200_003)
    c, s = fast_cos_sin(t, np.empty_like(t), np.empty_like(t))
    assert np.max(np.abs(c - np.cos(t))) <= 5e-16
    assert np.max(np.abs(s - np.sin(t))) <= 5e-16


@pytest.mark.usefixtures("cos_backend")
def test_fast_cos_rows_with_and_without_huge_arguments():
    """2-D input: rows holding a huge argument take libm, the others the polynomial; all exact."""
    rng = np.random.default_rng(5)
    T = rng.uniform(-50, 50, (64, 300))
    T[7, 13] = 5e6
    T[40, 0] = -3e9
    shift = rng.uniform(0, 2 * np.pi, 300)
    expected_c, expected_s = 0.3 * np.cos(T + shift), 0.3 * np.sin(T + shift)
    c, s = fast_cos_sin(T.copy(), np.empty_like(T), np.empty_like(T), shift=shift, scale=0.3)
    assert np.max(np.abs(c - expected_c)) <= 2e-16
    assert np.max(np.abs(s - expected_s)) <= 2e-16
    Tin = T.copy()
    fast_sin(Tin, out=np.empty_like(T), shift=shift)
    np.testing.assert_allclose(Tin, T + shift, rtol=0, atol=0)  # documented side effect: t += shift


def test_fast_cos_backends_agree(monkeypatch):
    pytest.importorskip("numba")
    import kernelsketch.maps.fast_cosine as fc

    monkeypatch.setattr(fc, "NUMBA_MIN_ELEMENTS", 0)

    T = np.random.default_rng(6).uniform(-1e3, 1e3, (200, 500))
    a = fast_cos(T, out=np.empty_like(T), scale=0.7)
    fc.USE_NUMBA = False
    try:
        b = fast_cos(T, out=np.empty_like(T), scale=0.7)
    finally:
        fc.USE_NUMBA = True
    assert np.max(np.abs(a - b)) <= 4e-16


@pytest.mark.usefixtures("cos_backend")
def test_fast_cos_special_points_and_shapes():
    k = np.arange(-1000, 1001, dtype=np.float64)
    t = np.concatenate([k * np.pi, k * np.pi / 2, k * np.pi / 4, [0.0, -0.0, 1e-300, 5e-324]])
    assert np.max(np.abs(fast_cos(t) - np.cos(t))) <= 5e-16
    assert np.max(np.abs(fast_sin(t) - np.sin(t))) <= 5e-16
    # a few huge arguments in a tile of ordinary ones: only they take the libm path
    t = np.random.default_rng(2).uniform(-20, 20, 5000)
    t[[3, 700, 4999]] = [4e6, -1e12, 1e300]
    c, s = fast_cos_sin(t, np.empty_like(t), np.empty_like(t), scale=2.0)
    assert np.max(np.abs(c - 2 * np.cos(t))) <= 1e-15
    assert np.max(np.abs(s - 2 * np.sin(t))) <= 1e-15
    # wide rows (tiles split columns), non-contiguous output, shift and scale
    rng = np.random.default_rng(1)
    T = rng.uniform(-30, 30, (3, TILE_ELEMENTS + 17))
    shift = rng.uniform(0, 2 * np.pi, T.shape[1])
    expected = 0.5 * np.cos(T + shift)
    big = np.zeros((3, 2 * T.shape[1]))
    fast_cos_sin(T.copy(), cos_out=big[:, ::2], shift=shift, scale=0.5)
    assert np.max(np.abs(big[:, ::2] - expected)) <= 5e-16
    assert not big[:, 1::2].any()
    inplace = T.copy()
    fast_cos(inplace, out=inplace, shift=shift, scale=0.5)
    assert np.max(np.abs(inplace - expected)) <= 5e-16


@pytest.mark.usefixtures("cos_backend")
def test_fast_cos_float32_and_errors():
    t = np.linspace(-50, 50, 1001, dtype=np.float32)
    out = fast_cos(t)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.cos(t))
    with pytest.raises(ValueError, match="cos_out or sin_out"):
        fast_cos_sin(t)
    with pytest.raises(TypeError, match="float32 or float64"):
        fast_cos(np.arange(3))
    with pytest.raises(ValueError, match="shape"):
        fast_cos(np.zeros((2, 3)), shift=np.zeros(2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_gemm_and_cosine_tiles_give_the_two_pass_features(monkeypatch, dtype):
    """The dense transform runs the GEMM and the cosine tile by tile (gemm_map with shifted_cos_tiles): the
    cosine's numbers are the two-pass route's (float32: numpy's cos of the tile; float64: the compiled
    kernel, whose libm rows are there too) and the features sqrt(2/m) cos(XW + b) to rounding."""
    import kernelsketch.kernels.tiled_gemm as tg
    import kernelsketch.maps.fast_cosine as fc
    import kernelsketch.maps.random_fourier_features as rf

    if dtype == np.float64:
        pytest.importorskip("numba")
        monkeypatch.setattr(fc, "NUMBA_MIN_ELEMENTS", 0)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 7)).astype(dtype)
    X[5, 0] = 1e7  # one row of huge arguments: libm's row
    m = RandomFourierFeatures(n_random_features=300, bandwidth=1.0, random_state=0).fit(X)
    calls = []
    monkeypatch.setattr(rf, "gemm_map", lambda *a, **k: calls.append(1) or tg.gemm_map(*a, **k))
    fused = m.transform(X)
    assert calls, "the dense transform did not take the fused route"
    W, b, scale = m.random_weights_.astype(dtype), m.random_offset_.astype(dtype), np.sqrt(2.0 / 300)
    T = X @ W
    if dtype == np.float32:  # numpy's float32 cos of the float32 product: float32's rounding of the features
        exact = scale * np.cos(X.astype(np.float64) @ m.random_weights_ + m.random_offset_)
        assert np.max(np.abs(fused - exact)[np.arange(len(X)) != 5]) <= 1e-5
    else:
        from kernelsketch.maps import _cosine_numba

        rows, two_pass = T.copy(), T.copy()
        _cosine_numba.shifted_cos_rows(rows, b, scale)
        _cosine_numba.kernel(two_pass, b, True, two_pass, True, np.empty((1, 1)), False, scale)
        np.testing.assert_array_equal(rows, two_pass)
        exact = scale * np.cos(X.astype(np.float64) @ m.random_weights_ + m.random_offset_)
        assert np.max(np.abs(fused - exact)) <= 1e-14
    monkeypatch.setattr(rf, "shifted_cos_tiles", lambda *a: None)  # the two-pass route
    np.testing.assert_allclose(fused, m.transform(X), rtol=0, atol=1e-6 if dtype == np.float32 else 1e-15)


# -- the map agrees with its definition ------------------------------------------


@pytest.mark.parametrize("variant", ["cos", "paired"])
def test_transform_is_the_formula(variant, rng):
    X = rng.normal(size=(300, 7))
    rff = RandomFourierFeatures(64, bandwidth=1.5, variant=variant, random_state=3).fit(X)
    W, b, m = rff.random_weights_, rff.random_offset_, 64
    T = X @ W
    ref = np.sqrt(2 / m) * (np.cos(T + b) if b is not None else np.hstack([np.cos(T), np.sin(T)]))
    Z = rff.transform(X)
    assert np.max(np.abs(Z - ref)) <= 1e-15
    np.testing.assert_array_equal(rff.gram_factor(X), Z)


@pytest.mark.parametrize("variant", ["cos", "paired"])
def test_sparse_float32_and_chunking(variant, rng):
    X = sp.random(200, 30, density=0.2, format="csr", random_state=0)
    rff = RandomFourierFeatures(40, bandwidth=1.0, variant=variant, random_state=0).fit(X)
    Zd = rff.transform(X.toarray())
    np.testing.assert_allclose(rff.transform(X), Zd, rtol=0, atol=1e-14)
    with kernelsketch.config_context(working_memory=40 * 8 * 7 / 2**20):  # ~7 rows per chunk
        np.testing.assert_allclose(rff.transform(X), Zd, rtol=0, atol=1e-14)
        np.testing.assert_allclose(rff.transform(X.toarray()), Zd, rtol=0, atol=1e-14)
    Z32 = rff.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, Zd, rtol=0, atol=1e-5)


def test_seed_reproducible_and_data_independent(rng):
    X = rng.normal(size=(50, 4))
    a = RandomFourierFeatures(32, bandwidth=1.0, random_state=7).fit(X)
    b = RandomFourierFeatures(32, bandwidth=1.0, random_state=7).fit(X[:3] + 100.0)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    c = RandomFourierFeatures(32, bandwidth=1.0, random_state=8).fit(X)
    assert not np.allclose(a.transform(X), c.transform(X))


@pytest.mark.parametrize(
    "params,match",
    [
        ({"kernel": "polynomial"}, "shift-invariant"),
        ({"kernel": "linear"}, "shift-invariant"),
        ({"kernel": kernelsketch.get_kernel("polynomial", degree=2)}, "shift-invariant"),
        ({"orthogonal": True, "kernel": "laplacian"}, "only valid for the Gaussian"),
        ({"variant": "paired", "n_random_features": 7}, "even"),
        ({"n_random_features": 0}, "n_random_features"),
        ({"variant": "sin"}, "variant"),
        ({"bandwidth": -1.0}, "bandwidth"),
    ],
)
def test_bad_params(params, match, rng):
    with pytest.raises(ValueError, match=match):
        RandomFourierFeatures(**{"bandwidth": 1.0, **params}).fit(rng.normal(size=(5, 2)))


def test_bad_input(rng):
    rff = RandomFourierFeatures(8, bandwidth=1.0, random_state=0).fit(rng.normal(size=(5, 3)))
    with pytest.raises(ValueError, match="3 features"):
        rff.transform(rng.normal(size=(5, 4)))
    with pytest.raises(ValueError, match="NaN"):
        rff.transform(np.full((2, 3), np.nan))


# -- statistics ---------------------------------------------------------------------


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("variant,orthogonal", MAPS)
def test_unbiased(kernel, variant, orthogonal, rng):
    """Each feature's contribution m z_j(x) z_j(y) averages to k(x, y): a z-test over 60,000 features."""
    if orthogonal and kernel != "gaussian":
        pytest.skip("orthogonal features are Gaussian-only")
    X = rng.normal(size=(4, 3)) * 0.7
    m = 60_000
    Z = RandomFourierFeatures(
        m, kernel=kernel, bandwidth=1.5, variant=variant, orthogonal=orthogonal, random_state=11
    ).fit_transform(X)
    K = naive_kernel(X, X, kernel, bandwidth=1.5)
    n_freq = m // 2 if variant == "paired" else m
    for i, j in [(0, 1), (1, 2), (0, 3), (2, 2)]:
        if variant == "paired":  # one term per frequency: cos(w.x)cos(w.y) + sin(w.x)sin(w.y)
            terms = (Z[i, :n_freq] * Z[j, :n_freq] + Z[i, n_freq:] * Z[j, n_freq:]) * n_freq
        else:
            terms = Z[i] * Z[j] * m
        se = terms.std() / np.sqrt(len(terms))
        # orthogonal blocks are dependent within a block of d=3 columns: inflate the SE a little
        assert abs(terms.mean() - K[i, j]) <= 4.5 * max(se, 1e-12) * (1.5 if orthogonal else 1.0), (i, j)


def _slope(ms, errs):
    return np.polyfit(np.log(ms), np.log(errs), 1)[0]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("variant,orthogonal", MAPS)
def test_error_falls_like_inverse_sqrt_m(kernel, variant, orthogonal, rng):
    if orthogonal and kernel != "gaussian":
        pytest.skip("orthogonal features are Gaussian-only")
    X = rng.normal(size=(40, 5))
    K = naive_kernel(X, X, kernel, bandwidth=3.0)
    ms = np.array([32, 128, 512, 2048])
    errs = []
    for m in ms:
        e = [
            np.mean(np.abs(Z @ Z.T - K))
            for Z in (
                RandomFourierFeatures(
                    int(m), kernel=kernel, bandwidth=3.0, variant=variant, orthogonal=orthogonal, random_state=s
                ).fit_transform(X)
                for s in range(6)
            )
        ]
        errs.append(np.mean(e))
    assert -0.62 <= _slope(ms, errs) <= -0.38, errs


def test_orthogonal_beats_plain_for_gaussian(rng):
    X = rng.normal(size=(60, 8))
    K = naive_kernel(X, X, "gaussian", bandwidth=4.0)

    def err(orth):
        return np.mean(
            [
                np.mean(np.abs(Z @ Z.T - K))
                for Z in (
                    RandomFourierFeatures(64, bandwidth=4.0, orthogonal=orth, random_state=s).fit_transform(X)
                    for s in range(20)
                )
            ]
        )

    assert err(True) < 0.85 * err(False)


def test_paired_beats_offset(rng):
    """The [cos, sin] pairing removes the phase noise: lower error at equal m (Sutherland & Schneider)."""
    X = rng.normal(size=(60, 5))
    K = naive_kernel(X, X, "gaussian", bandwidth=3.0)

    def err(variant):
        return np.mean(
            [
                np.mean(np.abs(Z @ Z.T - K))
                for Z in (
                    RandomFourierFeatures(128, bandwidth=3.0, variant=variant, random_state=s).fit_transform(X)
                    for s in range(20)
                )
            ]
        )

    assert err("paired") < err("cos")


@pytest.fixture(scope="module")
def cpu_2000():
    from kernelsketch.datasets import load_dataset

    X, _ = load_dataset("cpu")
    X = np.asarray(X, dtype=np.float64)[np.random.default_rng(0).permutation(len(X))[:2000]]
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    h = estimate_bandwidth(X, "median", random_state=0)
    return X, h, np.exp(-cdist(X, X, "sqeuclidean") / h**2)


def spectral_error(K, Y):
    D = K - Y @ Y.T
    return abs(eigsh(D, k=1, which="LM", return_eigenvectors=False, v0=np.ones(len(K)))[0]) / len(K)


def test_cpu_gram_converges(cpu_2000):
    X, h, K = cpu_2000
    errs = [
        np.mean(
            [
                spectral_error(K, RandomFourierFeatures(m, bandwidth=h, random_state=s).fit(X).gram_factor(X))
                for s in range(2)
            ]
        )
        for m in (50, 200, 800)
    ]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.5 * errs[0]


def test_small_calls_never_import_numba_large_ones_load_it():
    # issue 28: importing numba and loading the kernel costs ~0.3 s per process; a script of small
    # transforms never pays it, the first call of >= NUMBA_MIN_ELEMENTS loads it for the rest
    pytest.importorskip("numba")
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from kernelsketch.maps import fast_cosine as f; "
        "t = np.ones((1000, 500)); f.fast_cos(t, out=np.empty_like(t)); print('numba' in sys.modules); "
        "t = np.ones((f.NUMBA_MIN_ELEMENTS // 500 + 1, 500)); f.fast_cos(t, out=np.empty_like(t)); "
        "print('numba' in sys.modules, f._numba_kernel is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True"]


def test_numba_caches_outside_the_installed_package(tmp_path):
    # issue 20: the compiled cos/sin kernel is cached in the user's cache folder, never in the package
    pytest.importorskip("numba")
    import os
    import subprocess
    import sys

    from kernelsketch.maps import fast_cosine

    package_cache = os.path.join(os.path.dirname(fast_cosine.__file__), "__pycache__")
    before = (
        {f for f in os.listdir(package_cache) if f.endswith((".nbi", ".nbc"))}
        if os.path.isdir(package_cache)
        else set()
    )
    code = (
        "import numpy as np; from kernelsketch.maps import fast_cosine as f; "
        "k = f._get_numba_kernel(); assert k is not None; "
        "t = np.ones((4, 3)); c = np.empty((4, 3)); "
        "k(t, np.zeros(3), False, c, True, c, False, 1.0); print(f.numba_cache_dir()); "
        "print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))"
    )
    env = {**os.environ, "KERNELSKETCH_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)]
    runs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300))
    for out in runs:
        assert out.returncode == 0, out.stderr
        assert out.stdout.split("\n")[0] == str(tmp_path / "numba")
    assert any(p.suffix == ".nbi" for p in (tmp_path / "numba").rglob("*")), "nothing cached in KERNELSKETCH_CACHE_DIR"
    # issue 28: the second process loads the first one's machine code (a closure missed the cache in every
    # process: it recompiled and appended one more .nbc file each time)
    assert runs[1].stdout.split("\n")[1] == "1 0", runs[1].stdout
    assert len(list((tmp_path / "numba").rglob("*.nbc"))) == 1
    after = (
        {f for f in os.listdir(package_cache) if f.endswith((".nbi", ".nbc"))}
        if os.path.isdir(package_cache)
        else set()
    )
    assert after <= before, f"numba wrote into the package: {sorted(after - before)}"
