"""SubsampleKPCA: exact KPCA when n = N, the dense centred formula, convergence on Avila."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch.decomposition import KernelPCA, SubsampleKPCA
from kernelsketch.kernels import estimate_bandwidth, pairwise_kernel

from .real_data import load_avila_2000


@parametrize_with_checks(
    [
        SubsampleKPCA(n_components=3, random_state=0),
        SubsampleKPCA(n_landmarks=8, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(200, 3))


def align_signs(A, B):
    s = np.sign(np.sum(A * B, axis=0))
    return A * s


def test_full_subsample_equals_exact_kernel_pca(X):
    Y = np.random.default_rng(1).normal(size=(30, 3))
    sk = SubsampleKPCA(n_components=6, n_landmarks=200, bandwidth=1.5, random_state=0).fit(X)
    kp = KernelPCA(n_components=6, bandwidth=1.5, eigen_solver="dense").fit(X)
    np.testing.assert_allclose(sk.eigenvalues_, kp.eigenvalues_, rtol=1e-10)
    np.testing.assert_allclose(align_signs(sk.transform(X), kp.fit_transform(X)), kp.fit_transform(X), atol=1e-8)
    np.testing.assert_allclose(align_signs(sk.transform(Y), kp.transform(Y)), kp.transform(Y), atol=1e-8)


def test_matches_dense_centred_formula(X):
    Y = np.random.default_rng(1).normal(size=(30, 3))
    sk = SubsampleKPCA(n_components=4, n_landmarks=50, bandwidth=1.5, random_state=2).fit(X)
    L = X[sk.landmark_indices_]
    K = pairwise_kernel(L, bandwidth=1.5)
    H = np.eye(50) - 1 / 50
    lam, A = np.linalg.eigh(H @ K @ H)
    lam, A = lam[::-1][:4], A[:, ::-1][:, :4]
    KY = pairwise_kernel(Y, L, bandwidth=1.5)
    KYc = KY - KY.mean(axis=1, keepdims=True) - K.mean(axis=0)[None, :] + K.mean()
    ref = KYc @ A / np.sqrt(lam)  # sum_i alpha_i k_c(x, x_i), unit-norm eigenfunctions
    np.testing.assert_allclose(sk.eigenvalues_, lam, rtol=1e-10)
    np.testing.assert_allclose(align_signs(sk.transform(Y), ref), ref, atol=1e-10)
    np.testing.assert_allclose(sk.explained_variance_, lam / 50)


def test_requested_null_components_warn(X):
    # the centred Gram of n points has rank <= n - 1 (the constant vector is in its kernel)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sk = SubsampleKPCA(n_components=10, landmarks=X[:10], kernel="linear").fit(X)
    assert sum(issubclass(w.category, RuntimeWarning) for w in rec) == 1
    assert sk.eigenvalues_.shape == (3,)  # linear kernel in R^3: rank 3
    with pytest.raises(ValueError, match="n_components=11 must be <= n_landmarks=10"):
        SubsampleKPCA(n_components=11, n_landmarks=10, bandwidth=1.0).fit(X)


def test_seeds_working_memory_dtype_sparse(X):
    a = SubsampleKPCA(n_components=5, n_landmarks=40, random_state=1).fit(X).transform(X)
    np.testing.assert_array_equal(a, SubsampleKPCA(n_components=5, n_landmarks=40, random_state=1).fit(X).transform(X))
    with kernelsketch.config_context(working_memory=0.002):
        b = SubsampleKPCA(n_components=5, n_landmarks=40, random_state=1).fit(X).transform(X)
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    sk = SubsampleKPCA(n_components=5, n_landmarks=40, bandwidth=1.5, random_state=1).fit(X)
    F32 = sk.transform(X.astype(np.float32))
    assert F32.dtype == np.float32
    np.testing.assert_allclose(F32, sk.transform(X), atol=1e-4)
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.6] = 0.0
    dense = SubsampleKPCA(n_components=5, n_landmarks=40, bandwidth=1.5, random_state=1).fit(Xs)
    csr = SubsampleKPCA(n_components=5, n_landmarks=40, bandwidth=1.5, random_state=1).fit(sp.csr_matrix(Xs))
    np.testing.assert_allclose(csr.transform(sp.csr_matrix(Xs)), dense.transform(Xs), atol=1e-10)


def test_auto_and_bad_inputs(X):
    assert SubsampleKPCA(n_components=2, bandwidth=1.0).fit(X).n_landmarks_ == 200
    with pytest.raises(ValueError, match="n_landmarks=300 must be <= n_samples=200"):
        SubsampleKPCA(n_landmarks=300, bandwidth=1.0).fit(X)
    with pytest.raises(ValueError, match="n_components"):
        SubsampleKPCA(n_components=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        SubsampleKPCA(n_components=2, n_landmarks=20, bandwidth=1.0).fit(X).transform(np.zeros((2, 2)))


@pytest.mark.slow
@pytest.mark.data
def test_avila_centred_gram_converges():
    X = load_avila_2000()
    h = estimate_bandwidth(X, "percentile", random_state=0)
    K = pairwise_kernel(X, bandwidth=h)
    Kc = K - K.mean(axis=0)[None, :] - K.mean(axis=1)[:, None] + K.mean()
    errors = []
    for n in (25, 100, 400):
        e = []
        for seed in range(3):
            F = SubsampleKPCA(n_landmarks=n, bandwidth=h, random_state=seed).fit(X).transform(X)
            e.append(np.linalg.norm(Kc - F @ F.T) / np.linalg.norm(Kc))
        errors.append(np.mean(e))
    assert errors[0] > errors[1] > errors[2], errors
    assert errors[2] < 0.15
