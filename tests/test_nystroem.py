"""Nystroem: exactness at m = N, the dense K_b W_hat K_b^T formula, trace_error, streaming, landmarks."""

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import chisquare
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch.kernels import estimate_bandwidth, pairwise_kernel
from kernelsketch.maps import Nystroem, sample_landmarks
from kernelsketch.maps.landmarks import ReservoirSampler

from .real_data import load_avila_2000


@parametrize_with_checks(
    [
        Nystroem(n_landmarks=5, random_state=0),
        Nystroem(n_landmarks=5, n_components=3, replace=True, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(150, 3))


def dense_nystroem_gram(A, B, L, h, r):
    """Reference K(A, L) W_hat K(L, B) with W_hat = sum_{i<=r} u_i u_i^T / lambda_i (Mahdavi et al.)."""
    W = pairwise_kernel(L, bandwidth=h)
    lam, U = np.linalg.eigh(W)
    lam, U = lam[::-1][:r], U[:, ::-1][:, :r]
    W_hat = (U / lam) @ U.T
    return pairwise_kernel(A, L, bandwidth=h) @ W_hat @ pairwise_kernel(L, B, bandwidth=h)


def test_all_landmarks_full_rank_reproduces_gram(X):
    n = X.shape[0]
    ny = Nystroem(n_landmarks=n, n_components=n, bandwidth=1.0, random_state=0).fit(X)
    assert ny.n_components_ == n
    F = ny.transform(X)
    np.testing.assert_allclose(F @ F.T, pairwise_kernel(X, bandwidth=1.0), atol=1e-8)


def test_matches_dense_formula(X):
    Y = np.random.default_rng(1).normal(size=(40, 3))
    ny = Nystroem(n_landmarks=40, n_components=15, bandwidth=1.5, random_state=3).fit(X)
    L = X[ny.landmark_indices_]
    np.testing.assert_array_equal(ny.landmarks_, L)
    ref = dense_nystroem_gram(X, Y, L, 1.5, 15)
    np.testing.assert_allclose(ny.transform(X) @ ny.transform(Y).T, ref, atol=1e-10)
    # W_hat from the fitted attributes
    W_hat = ny.projection_ @ ny.projection_.T
    np.testing.assert_allclose(ny.eigenvectors_ @ np.diag(1 / ny.eigenvalues_) @ ny.eigenvectors_.T, W_hat, atol=1e-10)


def test_trace_error_equals_dense_trace(X):
    ny = Nystroem(n_landmarks=30, n_components=12, bandwidth=1.0, random_state=0).fit(X)
    K = pairwise_kernel(X, bandwidth=1.0)
    F = ny.transform(X)
    E = K - F @ F.T
    te = ny.trace_error(X)
    np.testing.assert_allclose(te, np.trace(E), rtol=1e-10)
    # K - K_r_hat is PSD: the trace certifies the Frobenius and spectral errors
    assert np.linalg.eigvalsh(E).min() > -1e-10
    assert te >= np.linalg.norm(E, "fro") >= np.linalg.norm(E, 2)
    with kernelsketch.config_context(working_memory=0.05):
        np.testing.assert_allclose(ny.trace_error(X), te, rtol=1e-12)


def test_trace_error_polynomial_kernel(X):
    ny = Nystroem(n_landmarks=20, kernel="polynomial", kernel_params={"degree": 2}, random_state=0).fit(X)
    K = pairwise_kernel(X, kernel="polynomial", degree=2)
    F = ny.transform(X)
    assert abs(ny.trace_error(X) - np.trace(K - F @ F.T)) < 1e-10 * np.trace(K)
    # degree-2 polynomial features span 10 dimensions in R^3: 20 landmarks capture K exactly
    assert abs(ny.trace_error(X)) < 1e-8 * np.trace(K)


def test_duplicate_landmarks_warn_once_and_drop(X):
    L = X[[0, 0, 1, 2, 3, 3, 4]]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ny = Nystroem(landmarks=L, n_components=7, bandwidth=1.0).fit(X)
    runtime = [w for w in rec if issubclass(w.category, RuntimeWarning)]
    assert len(runtime) == 1 and "2 of the 7" in str(runtime[0].message)
    assert ny.n_components_ == 5
    assert ny.landmark_indices_ is None
    # dropping the null directions does not change K_hat (duplicates add nothing)
    ref = dense_nystroem_gram(X, X, X[:5], 1.0, 5)
    F = ny.transform(X)
    np.testing.assert_allclose(F @ F.T, ref, atol=1e-8)


def test_no_warning_when_rank_is_automatic(X):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the dropped-eigenvalue warning; two landmarks do
        ny = Nystroem(landmarks=X[[0, 0, 1]], bandwidth=1.0).fit(X)  # capture little (an ApproximationWarning)
    assert ny.n_components_ == 2


def test_replace_allows_more_landmarks_than_samples(X):
    ny = Nystroem(n_landmarks=200, replace=True, bandwidth=1.0, random_state=0).fit(X)
    assert ny.landmarks_.shape == (200, 3)
    assert len(np.unique(ny.landmark_indices_)) < 150


def test_seeds_and_working_memory(X):
    a = Nystroem(n_landmarks=30, random_state=7).fit(X).transform(X)
    b = Nystroem(n_landmarks=30, random_state=7).fit(X).transform(X)
    np.testing.assert_array_equal(a, b)
    c = Nystroem(n_landmarks=30, random_state=8).fit(X).transform(X)
    assert not np.allclose(a @ a.T, c @ c.T)
    g = Nystroem(n_landmarks=30, random_state=np.random.default_rng(7)).fit(X)
    assert g.landmarks_.shape == (30, 3)
    with kernelsketch.config_context(working_memory=0.001):
        d = Nystroem(n_landmarks=30, random_state=7).fit(X).transform(X)
    np.testing.assert_allclose(d, a, rtol=1e-12, atol=1e-12)


def test_float32_and_csr(X):
    ny = Nystroem(n_landmarks=30, n_components=10, bandwidth=1.0, random_state=0).fit(X)
    F64 = ny.transform(X)
    F32 = ny.transform(X.astype(np.float32))
    assert F32.dtype == np.float32
    np.testing.assert_allclose(F32, F64, atol=1e-4)
    ny32 = Nystroem(n_landmarks=30, n_components=10, bandwidth=1.0, random_state=0).fit(X.astype(np.float32))
    assert ny32.landmarks_.dtype == np.float32 and ny32.eigenvalues_.dtype == np.float64
    assert ny32.transform(X.astype(np.float32)).dtype == np.float32
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.7] = 0.0
    dense = Nystroem(n_landmarks=30, bandwidth=1.0, random_state=0).fit(Xs)
    csr = Nystroem(n_landmarks=30, bandwidth=1.0, random_state=0).fit(sp.csr_matrix(Xs))
    assert sp.issparse(csr.landmarks_)
    np.testing.assert_allclose(csr.transform(sp.csr_matrix(Xs)), dense.transform(Xs), atol=1e-10)
    np.testing.assert_allclose(csr.trace_error(sp.csr_matrix(Xs)), dense.trace_error(Xs), rtol=1e-8)


@pytest.mark.parametrize(
    "params, X_shape, match",
    [
        ({"n_landmarks": 20}, (10, 2), "n_landmarks=20 must be <= n_samples=10"),
        ({"n_landmarks": 5, "n_components": 6}, (10, 2), "n_components=6 must be <= n_landmarks=5"),
        ({"n_landmarks": 0}, (10, 2), "n_landmarks"),
        ({"n_landmarks": 5, "eigenvalue_tol": 2.0}, (10, 2), "eigenvalue_tol"),
        ({"landmarks": np.zeros((3, 3))}, (10, 2), "landmarks have 3 features but X has 2"),
    ],
)
def test_bad_parameters(params, X_shape, match):
    X = np.random.default_rng(0).normal(size=X_shape)
    with pytest.raises(ValueError, match=match):
        Nystroem(**params, bandwidth=1.0).fit(X)


def test_bad_inputs(X):
    ny = Nystroem(n_landmarks=10, bandwidth=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="4 features"):
        ny.transform(np.zeros((2, 4)))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Nystroem(n_landmarks=10, bandwidth=1.0).fit(Xn)
    with pytest.raises(ValueError, match="cannot be used with user-given landmarks"):
        Nystroem(landmarks=X[:3], bandwidth=1.0).partial_fit(X)


# -- streaming ---------------------------------------------------------------


def stream(est, X, cuts):
    for a, b in itertools.pairwise(cuts):
        est.partial_fit(X[a:b])
    return est


def test_partial_fit_deterministic_and_split_independent(X):
    s1 = stream(Nystroem(n_landmarks=20, bandwidth=1.0, random_state=4), X, [0, 50, 100, 150])
    s2 = stream(Nystroem(n_landmarks=20, bandwidth=1.0, random_state=4), X, [0, 50, 100, 150])
    s3 = stream(Nystroem(n_landmarks=20, bandwidth=1.0, random_state=4), X, [0, 21, 22, 90, 149, 150])
    np.testing.assert_array_equal(s1.landmark_indices_, s2.landmark_indices_)
    np.testing.assert_array_equal(s1.landmark_indices_, s3.landmark_indices_)
    np.testing.assert_array_equal(s1.transform(X), s2.transform(X))
    assert s1.n_samples_seen_ == 150
    np.testing.assert_array_equal(s1.landmarks_, X[s1.landmark_indices_])
    # the streamed Nystroem is the batch Nystroem on the reservoir's landmarks
    ref = Nystroem(landmarks=s1.landmarks_, bandwidth=1.0).fit(X)
    np.testing.assert_allclose(s1.transform(X), ref.transform(X), atol=1e-12)


def test_partial_fit_short_stream_is_exact(X):
    s = stream(Nystroem(n_landmarks=200, n_components=150, bandwidth=1.0, random_state=0), X, [0, 70, 150])
    assert s.landmarks_.shape[0] == 150 and s.n_components_ == 150
    F = s.transform(X)
    np.testing.assert_allclose(F @ F.T, pairwise_kernel(X, bandwidth=1.0), atol=1e-8)


def test_partial_fit_with_replacement_and_errors(X):
    s = stream(Nystroem(n_landmarks=30, replace=True, bandwidth=1.0, random_state=0), X, [0, 10, 150])
    assert s.landmarks_.shape[0] == 30
    with pytest.raises(ValueError, match="features"):
        s.partial_fit(np.zeros((3, 4)))
    with pytest.raises(TypeError, match="dense or all CSR"):
        s.partial_fit(sp.csr_matrix(X[:5]))


def test_fit_resets_stream(X):
    s = stream(Nystroem(n_landmarks=20, bandwidth=1.0, random_state=0), X, [0, 100])
    s.fit(X)
    batch = Nystroem(n_landmarks=20, bandwidth=1.0, random_state=0).fit(X)
    np.testing.assert_array_equal(s.landmark_indices_, batch.landmark_indices_)


def feed(sampler, X, cuts):
    for a, b in itertools.pairwise(cuts):
        sampler.partial_fit(X[a:b])
    return sampler


def test_reservoir_uniform_over_subsets():
    """Every 3-subset of an 8-row stream is equally likely (chi-square over seeds)."""
    N, k, n_seeds = 8, 3, 2800
    X = np.arange(N, dtype=float)[:, None]
    cell = {c: i for i, c in enumerate(itertools.combinations(range(N), k))}
    counts = np.zeros(len(cell))
    for seed in range(n_seeds):
        rs = feed(ReservoirSampler(k, random_state=seed), X, [0, 2, 3, 7, 8])
        counts[cell[tuple(sorted(rs.sample_indices_.tolist()))]] += 1
    assert chisquare(counts).pvalue > 1e-3


def test_reservoir_uniform_inclusion_long_stream():
    """Algorithm L's skips: each of 60 rows is kept with probability k/N."""
    N, k, n_seeds = 60, 4, 1500
    X = np.arange(N, dtype=float)[:, None]
    counts = np.zeros(N)
    for seed in range(n_seeds):
        rs = feed(ReservoirSampler(k, random_state=seed), X, [0, 5, 33, 60])
        idx = rs.sample_indices_
        assert len(set(idx.tolist())) == k
        counts[idx] += 1
    assert chisquare(counts).pvalue > 1e-3
    # a sampler that ignored the tail would fail: the last third is not under-represented
    assert abs(counts[40:].sum() / counts.sum() - 1 / 3) < 0.03


def test_reservoir_with_replacement_is_iid_uniform():
    N, n_seeds = 8, 2800
    X = np.arange(N, dtype=float)[:, None]
    counts = np.zeros(N * N)
    for seed in range(n_seeds):
        i, j = feed(ReservoirSampler(2, replace=True, random_state=seed), X, [0, 1, 5, 8]).sample_indices_
        counts[i * N + j] += 1
    assert chisquare(counts).pvalue > 1e-3


def test_reservoir_block_split_independence_and_csr():
    X = np.random.default_rng(0).normal(size=(500, 4))
    for replace in (False, True):
        a = feed(ReservoirSampler(25, replace=replace, random_state=1), X, [0, 500])
        b = feed(ReservoirSampler(25, replace=replace, random_state=1), X, [0, 1, 30, 31, 260, 499, 500])
        np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
        np.testing.assert_array_equal(a.sample_, X[a.sample_indices_])
        c = feed(ReservoirSampler(25, replace=replace, random_state=1), sp.csr_matrix(X), [0, 100, 500])
        np.testing.assert_array_equal(c.sample_indices_, a.sample_indices_)
        np.testing.assert_array_equal(c.sample_.toarray(), a.sample_)


def test_sample_landmarks():
    idx = sample_landmarks(np.zeros((50, 2)), 10, rng=0)
    assert idx.dtype == np.int64 and len(np.unique(idx)) == 10 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(sample_landmarks(sp.csr_matrix(np.eye(50)), 10, rng=0), idx)
    rep = sample_landmarks(5, 40, rng=0, replace=True)
    assert rep.shape == (40,) and rep.max() < 5
    with pytest.raises(ValueError, match="n_landmarks=60 must be <= n_samples=50"):
        sample_landmarks(50, 60, rng=0)
    with pytest.raises(TypeError, match="n_landmarks"):
        sample_landmarks(50, 2.5, rng=0)
    # uniform inclusion over seeds
    counts = np.bincount(np.concatenate([sample_landmarks(20, 5, rng=s) for s in range(800)]), minlength=20)
    assert chisquare(counts).pvalue > 1e-3


# -- convergence on real data --------------------------------------------------


@pytest.mark.slow
@pytest.mark.data
def test_avila_gram_error_decreases_with_landmarks():
    X = load_avila_2000()
    h = estimate_bandwidth(X, "percentile", random_state=0)
    K = pairwise_kernel(X, bandwidth=h)
    errors = []
    for m in (25, 100, 400):
        e = []
        for seed in range(3):
            F = Nystroem(n_landmarks=m, bandwidth=h, random_state=seed).fit(X).transform(X)
            e.append(np.linalg.norm(K - F @ F.T) / np.linalg.norm(K))
        errors.append(np.mean(e))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.06
