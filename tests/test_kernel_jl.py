"""Kernel JL: the dense formula, the centralized variant, Theorem 1's d^{-1/2} concentration."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch.kernels import estimate_bandwidth, pairwise_kernel
from kernelsketch.maps import KernelJL

from .real_data import load_avila_2000


@parametrize_with_checks(
    [
        KernelJL(n_components=3, random_state=0),
        KernelJL(n_components=4, n_landmarks=6, centered=False, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(300, 4))


def test_uncentered_matches_dense_formula(X):
    Y = np.random.default_rng(1).normal(size=(50, 4))
    kjl = KernelJL(n_components=7, n_landmarks=60, centered=False, scaling="paper", bandwidth=2.0, random_state=0).fit(
        X
    )
    L, Z, n, d = X[kjl.landmark_indices_], kjl.random_matrix_, 60, 7
    assert Z.shape == (d, n)
    V_hat_T = Z @ pairwise_kernel(L, bandwidth=2.0) / (n * np.sqrt(n * d))
    ref = (V_hat_T @ pairwise_kernel(L, Y, bandwidth=2.0)).T
    np.testing.assert_allclose(kjl.transform(Y), ref, atol=1e-12)
    np.testing.assert_allclose(kjl.projection_, V_hat_T.T, atol=1e-14)


def test_centered_matches_centered_feature_maps(X):
    """Centralized K-JL = K-JL with the kernel of phi(x) - mu_n, computed textbook-style."""
    Y = np.random.default_rng(1).normal(size=(50, 4))
    kjl = KernelJL(n_components=5, n_landmarks=40, scaling="paper", bandwidth=2.0, random_state=3).fit(X)
    L, Z, n, d = X[kjl.landmark_indices_], kjl.random_matrix_, 40, 5
    K = pairwise_kernel(L, bandwidth=2.0)
    H = np.eye(n) - 1.0 / n
    Kc = H @ K @ H
    KY = pairwise_kernel(L, Y, bandwidth=2.0)  # (n, 50)
    # k_c(x_i, y) = k(x_i, y) - mean_j k(y, x_j) - mean_j k(x_i, x_j) + mean(K)
    KYc = KY - KY.mean(axis=0)[None, :] - K.mean(axis=1)[:, None] + K.mean()
    ref = (Z @ Kc @ KYc / (n * np.sqrt(n * d))).T
    np.testing.assert_allclose(kjl.transform(Y), ref, atol=1e-12)
    # the centred feature maps of the subsample average to 0, so do their sketches
    np.testing.assert_allclose(kjl.transform(L).mean(axis=0), 0.0, atol=1e-12)
    assert not np.allclose(
        KernelJL(n_components=5, n_landmarks=40, centered=False, bandwidth=2.0, random_state=3)
        .fit(X)
        .transform(L)
        .mean(axis=0),
        0.0,
        atol=1e-6,
    )


def theorem1_errors(X, h, d, seed, a, b, K, K4, Kh):
    """Sup error over f, g in the span of the sections, and the error for one pair f = S*a, g = S*b."""
    n = X.shape[0]
    kjl = KernelJL(n_components=d, n_landmarks=n, centered=False, scaling="paper", bandwidth=h, random_state=seed).fit(
        X
    )
    np.testing.assert_array_equal(kjl.landmark_indices_, np.arange(n))
    # (1/(n^3 d)) <Z K f|X, Z K g|X> with f|X = K a, g|X = K b, against <f, Sigma_n^3 g> = a^T K^4 b / n^3
    Zk = kjl.random_matrix_ @ K
    sketched = (Zk @ K @ a) @ (Zk @ K @ b) / (n**3 * d)
    np.testing.assert_allclose(sketched, (kjl.transform(X).T @ a) @ (kjl.transform(X).T @ b), rtol=1e-8)
    pair = abs(sketched - a @ K4 @ b / n**3) / np.sqrt((a @ K @ a) * (b @ K @ b))
    # sup_{f,g} |<V^T f|X, V^T g|X> - <f, Sigma_n^3 g>| / (|f| |g|) = ||K^1/2 (V V^T - K^2/n^3) K^1/2||_2
    # (f, g orthogonal to the sections contribute 0 to both sides)
    P = kjl.projection_
    sup = np.linalg.norm(Kh @ (P @ P.T - K @ K / n**3) @ Kh, 2)
    return sup, pair


def test_theorem1_concentration_rate_in_d():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    a, b = rng.normal(size=100), rng.normal(size=100)
    K = pairwise_kernel(X, bandwidth=2.0)
    w, U = np.linalg.eigh(K)
    Kh = (U * np.sqrt(np.clip(w, 0, None))) @ U.T
    K4 = np.linalg.matrix_power(K, 4)
    ds = np.array([4, 8, 16, 32, 64, 128, 256])
    sup_mean, pair_mean = [], []
    for d in ds:
        errs = np.array([theorem1_errors(X, 2.0, int(d), seed, a, b, K, K4, Kh) for seed in range(10)])
        sup_mean.append(errs[:, 0].mean())
        pair_mean.append(errs[:, 1].mean())
    for errs in (sup_mean, pair_mean):
        slope = np.polyfit(np.log(ds), np.log(errs), 1)[0]
        assert -0.7 <= slope <= -0.3, slope


@pytest.mark.parametrize("centered", [True, False])
def test_unit_scaling_is_one_scalar_on_the_papers_map(X, centered):
    """scaling="unit" = scale_ * the paper's V_hat, with scale_ making the subsample's mean square 1."""
    Y = np.random.default_rng(1).normal(size=(50, 4))
    params = dict(n_components=6, n_landmarks=40, centered=centered, bandwidth=2.0, random_state=3)
    paper = KernelJL(scaling="paper", **params).fit(X)
    unit = KernelJL(**params).fit(X)
    assert unit.scaling == "unit" and paper.scale_ == 1.0
    np.testing.assert_allclose(unit.transform(Y), unit.scale_ * paper.transform(Y), rtol=1e-10, atol=1e-13)
    L = X[unit.landmark_indices_]
    np.testing.assert_allclose(np.mean(unit.transform(L) ** 2), 1.0, rtol=1e-10)
    # the paper's coordinates are small (V_hat carries 1 / (n sqrt(n d))): the factor is large
    assert unit.scale_ > 10


def test_digits_pipeline_scores_like_the_other_maps():
    """StandardScaler -> KernelJL(20) -> LogisticRegression on digits: within 0.05 of Nystroem and SubsampleKPCA."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X, y = X[::2], y[::2]

    def score(est):
        pipe = make_pipeline(StandardScaler(), est, LogisticRegression(max_iter=2000))
        return cross_val_score(pipe, X, y, cv=3).mean()

    kjl = score(KernelJL(n_components=20, random_state=0))
    others = [
        score(kernelsketch.Nystroem(n_components=20, random_state=0)),
        score(kernelsketch.SubsampleKPCA(n_components=20, random_state=0)),
    ]
    assert kjl >= max(others) - 0.05, (kjl, others)
    # the paper's normalisation is what failed here (0.14 on the full set)
    assert score(KernelJL(n_components=20, scaling="paper", random_state=0)) < min(others) - 0.3


def test_auto_subsample_size():
    rng = np.random.default_rng(0)
    assert KernelJL(n_components=2, bandwidth=1.0, random_state=0).fit(rng.normal(size=(150, 2))).n_landmarks_ == 150
    assert KernelJL(n_components=2, bandwidth=1.0, random_state=0).fit(rng.normal(size=(5000, 2))).n_landmarks_ == 200
    big = KernelJL(n_components=2, bandwidth=1.0, random_state=0).fit(rng.normal(size=(40000, 2)))
    assert big.n_landmarks_ == 400


def test_user_landmarks_and_large_d(X):
    kjl = KernelJL(n_components=100, landmarks=X[:20], bandwidth=2.0, random_state=0).fit(X)
    assert kjl.landmark_indices_ is None and kjl.projection_.shape == (20, 100)
    assert kjl.transform(X).shape == (300, 100)


def test_seeds_working_memory_dtype_sparse(X):
    a = KernelJL(n_components=6, n_landmarks=50, random_state=5).fit(X).transform(X)
    np.testing.assert_array_equal(a, KernelJL(n_components=6, n_landmarks=50, random_state=5).fit(X).transform(X))
    assert not np.allclose(a, KernelJL(n_components=6, n_landmarks=50, random_state=6).fit(X).transform(X))
    with kernelsketch.config_context(working_memory=0.002):
        b = KernelJL(n_components=6, n_landmarks=50, random_state=5).fit(X).transform(X)
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)
    kjl = KernelJL(n_components=6, n_landmarks=50, bandwidth=2.0, random_state=5).fit(X)
    F32 = kjl.transform(X.astype(np.float32))
    assert F32.dtype == np.float32
    np.testing.assert_allclose(F32, kjl.transform(X), atol=1e-6 * np.abs(a).max() + 1e-7)
    assert (
        KernelJL(n_components=6, random_state=0).fit(X.astype(np.float32)).transform(X.astype(np.float32)).dtype
        == np.float32
    )
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.8] = 0.0
    dense = KernelJL(n_components=6, n_landmarks=50, bandwidth=2.0, random_state=5).fit(Xs)
    csr = KernelJL(n_components=6, n_landmarks=50, bandwidth=2.0, random_state=5).fit(sp.csr_matrix(Xs))
    np.testing.assert_allclose(csr.transform(sp.csr_matrix(Xs)), dense.transform(Xs), atol=1e-12)


@pytest.mark.parametrize(
    "params, match",
    [
        ({}, "needs n_components"),
        ({"n_components": 0}, "n_components"),
        ({"n_components": 2, "n_landmarks": 500}, "n_landmarks=500 must be <= n_samples=300"),
        ({"n_components": 2, "n_landmarks": "many"}, "n_landmarks"),
        ({"n_components": 2, "landmarks": np.zeros((4, 2))}, "landmarks have 2 features but X has 4"),
    ],
)
def test_bad_parameters(X, params, match):
    with pytest.raises(ValueError, match=match):
        KernelJL(**params, bandwidth=1.0).fit(X)


def test_bad_inputs(X):
    kjl = KernelJL(n_components=2, n_landmarks=10, bandwidth=1.0).fit(X)
    with pytest.raises(ValueError, match="features"):
        kjl.transform(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="infinity"):
        kjl.transform(np.full((3, 4), np.inf))


@pytest.mark.slow
@pytest.mark.data
def test_avila_sketched_gram_converges():
    """<phi(x), Sigma_n^3 phi(y)> sketched from n points -> (K_N^4 / N^3)_{xy} as n and d grow."""
    X = load_avila_2000()
    N = X.shape[0]
    h = estimate_bandwidth(X, "percentile", random_state=0)
    K = pairwise_kernel(X, bandwidth=h)
    target = np.linalg.matrix_power(K, 4) / N**3
    errors = []
    for n in (50, 200, 800):
        e = []
        for seed in range(12):
            F = (
                KernelJL(n_components=n, n_landmarks=n, centered=False, scaling="paper", bandwidth=h, random_state=seed)
                .fit(X)
                .transform(X)
            )
            e.append(np.linalg.norm(F @ F.T - target) / np.linalg.norm(target))
        errors.append(np.mean(e))
    assert errors[0] > errors[1] > errors[2], errors
