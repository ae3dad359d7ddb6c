"""RFKPCA (U-statistic RF-EKPCA) and streaming RNCA: dense references, streaming, merging, convergence."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from scipy.spatial.distance import cdist
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch import KernelPCA
from kernelsketch.decomposition import RFKPCA, RNCA
from kernelsketch.kernels import estimate_bandwidth


def _align(A, B):
    """Flip columns of A to match the signs of B's columns."""
    s = np.sign(np.sum(A * B, axis=0))
    s[s == 0] = 1
    return A * s


@parametrize_with_checks(
    [
        RFKPCA(n_components=3, n_random_features=20, bandwidth=1.0),
        RNCA(n_components=3, n_random_features=20, bandwidth=1.0),
        RNCA(n_random_features=10, bandwidth="median", variant="paired", random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("cls,ddof", [(RNCA, 0), (RFKPCA, 1)])
@pytest.mark.parametrize("variant", ["cos", "paired"])
def test_matches_dense_eigh(cls, ddof, variant, rng):
    X = rng.normal(size=(250, 5))
    est = cls(n_components=6, n_random_features=40, bandwidth=2.0, variant=variant, random_state=3).fit(X)
    Z = est.feature_map_.transform(X)
    zbar = Z.mean(axis=0)
    C = (Z - zbar).T @ (Z - zbar) / (len(X) - ddof)
    w, V = np.linalg.eigh(C)
    w, V = w[::-1][:6], V[:, ::-1][:, :6]
    np.testing.assert_allclose(est.explained_variance_, w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(est.eigenvalues_, w * (len(X) - ddof), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(est.components_.T, _align(V, est.components_.T), atol=1e-9)
    np.testing.assert_allclose(est.mean_, zbar, atol=1e-15)
    np.testing.assert_allclose(est.transform(X), (Z - zbar) @ est.components_.T, atol=1e-12)
    np.testing.assert_allclose(est.gram_factor(X), Z @ est.components_.T, atol=1e-12)
    assert est.explained_variance_ratio_.sum() <= 1 + 1e-12
    np.testing.assert_allclose(est.explained_variance_ratio_, w / np.trace(C), rtol=1e-10)


def test_rfkpca_is_the_u_statistic(rng):
    """The paper's pairwise U-statistic (1 / 2n(n-1)) sum_{i != j} (z_i - z_j)(z_i - z_j)^T, written out."""
    X = rng.normal(size=(30, 3))
    est = RFKPCA(n_components=8, n_random_features=8, bandwidth=1.5, random_state=0).fit(X)
    Z = est.feature_map_.transform(X)
    n = len(Z)
    U = np.zeros((8, 8))
    for i in range(n):
        for j in range(n):
            if i != j:
                d = Z[i] - Z[j]
                U += np.outer(d, d)
    U /= 2 * n * (n - 1)
    np.testing.assert_allclose(est.explained_variance_, np.linalg.eigvalsh(U)[::-1], rtol=1e-10, atol=1e-15)


def test_full_rank_gram_factor_is_the_rff_gram(rng):
    X = rng.normal(size=(100, 4))
    est = RNCA(n_random_features=30, bandwidth=2.0, random_state=0).fit(X)
    Y = est.gram_factor(X)
    Z = est.feature_map_.transform(X)
    np.testing.assert_allclose(Y @ Y.T, Z @ Z.T, atol=1e-13)
    Yc = est.gram_factor(X, centered=True)
    H = np.eye(100) - 1 / 100
    np.testing.assert_allclose(Yc @ Yc.T, H @ Z @ Z.T @ H, atol=1e-13)


@pytest.mark.parametrize("cls", [RNCA, RFKPCA])
@pytest.mark.parametrize("variant", ["cos", "paired"])
def test_partial_fit_equals_fit_and_chunk_independent(cls, variant, rng):
    X = rng.normal(size=(600, 6))
    kw = dict(n_components=5, n_random_features=48, bandwidth=2.0, variant=variant, random_state=9)
    full = cls(**kw).fit(X)
    streamed = cls(**kw)
    for block in np.array_split(X, [1, 50, 51, 300]):
        streamed.partial_fit(block)
    with kernelsketch.config_context(working_memory=4 * 8 * 48 * 13 / 2**20):  # 13 rows per chunk
        chunked = cls(**kw).fit(X)
    for other in (streamed, chunked):
        assert other.n_samples_seen_ == 600
        np.testing.assert_allclose(other.explained_variance_, full.explained_variance_, rtol=1e-12)
        np.testing.assert_allclose(other.components_, full.components_, atol=1e-10)
        np.testing.assert_allclose(other.transform(X), full.transform(X), atol=1e-10)
    np.testing.assert_array_equal(streamed.feature_map_.random_weights_, full.feature_map_.random_weights_)


@pytest.mark.parametrize("cls", [RNCA, RFKPCA])
def test_merge_equals_one_pass(cls, rng):
    X = rng.normal(size=(500, 4)) + 3.0  # offset: the mean correction term matters
    kw = dict(n_components=4, n_random_features=32, bandwidth=1.0, random_state=4)
    one = cls(**kw).fit(X)
    # partial_fit: a one-row part is a valid piece of a stream, not a valid fit for RFKPCA
    parts = [cls(**kw).partial_fit(block) for block in np.array_split(X, [120, 121, 400])]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    assert merged.n_samples_seen_ == 500
    np.testing.assert_allclose(merged.mean_, one.mean_, atol=1e-15)
    np.testing.assert_allclose(merged._scatter, one._scatter, atol=1e-12)
    np.testing.assert_allclose(merged.explained_variance_, one.explained_variance_, rtol=1e-12)
    np.testing.assert_allclose(merged.transform(X), one.transform(X), atol=1e-10)


def test_merge_refuses_mismatches(rng):
    X = rng.normal(size=(50, 3))
    a = RNCA(n_random_features=16, bandwidth=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="different random features"):
        a.merge(RNCA(n_random_features=16, bandwidth=1.0, random_state=1).fit(X))
    with pytest.raises(ValueError, match="different random features"):
        a.merge(RNCA(n_random_features=16, bandwidth=2.0, random_state=0).fit(X))
    with pytest.raises(ValueError, match="n_random_features"):
        a.merge(RNCA(n_random_features=18, bandwidth=1.0, random_state=0).fit(X))
    with pytest.raises(ValueError, match="input features"):
        a.merge(RNCA(n_random_features=16, bandwidth=1.0, random_state=0).fit(X[:, :2]))
    with pytest.raises(NotFittedError):
        a.merge(RNCA(n_random_features=16, bandwidth=1.0, random_state=0))
    with pytest.raises(TypeError, match="RNCA"):
        a.merge(RFKPCA(n_random_features=16, bandwidth=1.0, random_state=0).fit(X))
    # random_state=None draws a fresh seed per sketch: merging must refuse
    b = RNCA(n_random_features=16, bandwidth=1.0).fit(X)
    with pytest.raises(ValueError, match="seeds"):
        b.merge(RNCA(n_random_features=16, bandwidth=1.0).fit(X))


def test_dtype_sparse_and_seed(rng):
    Xs = sp.random(200, 20, density=0.3, format="csr", random_state=1)
    est = RNCA(n_components=4, n_random_features=24, bandwidth=1.0, random_state=0).fit(Xs)
    dense = RNCA(n_components=4, n_random_features=24, bandwidth=1.0, random_state=0).fit(Xs.toarray())
    np.testing.assert_allclose(est.transform(Xs), dense.transform(Xs.toarray()), atol=1e-12)
    T32 = est.transform(Xs.astype(np.float32))
    assert T32.dtype == np.float32
    np.testing.assert_allclose(T32, est.transform(Xs), atol=1e-5)
    e32 = RFKPCA(n_components=4, n_random_features=24, bandwidth=1.0, random_state=0).fit(
        Xs.toarray().astype(np.float32)
    )
    e64 = RFKPCA(n_components=4, n_random_features=24, bandwidth=1.0, random_state=0).fit(Xs.toarray())
    np.testing.assert_allclose(e32.explained_variance_, e64.explained_variance_, rtol=1e-4)


@pytest.mark.parametrize("cls", [RNCA, RFKPCA])
def test_bad_params_and_input(cls, rng):
    X = rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match="n_components=11 must be <= n_random_features=10"):
        cls(n_components=11, n_random_features=10, bandwidth=1.0).fit(X)
    with pytest.raises(ValueError, match="shift-invariant"):
        cls(kernel="polynomial").fit(X)
    with pytest.raises(ValueError, match="n_random_features"):
        cls(n_random_features=0).fit(X)
    with pytest.raises(NotFittedError):
        cls().transform(X)
    est = cls(n_random_features=8, bandwidth=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="3 features"):
        est.transform(rng.normal(size=(2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        cls(bandwidth=1.0).fit(np.full((3, 3), np.nan))


def test_rfkpca_u_statistic_needs_two_rows(rng):
    with pytest.raises(ValueError, match="minimum of 2"):
        RFKPCA(n_random_features=8, bandwidth=1.0).fit(rng.normal(size=(1, 3)))
    est = RFKPCA(n_random_features=8, bandwidth=1.0, random_state=0).partial_fit(rng.normal(size=(1, 3)))
    with pytest.raises(ValueError, match="at least 2 samples"):
        _ = est.explained_variance_
    est.partial_fit(rng.normal(size=(1, 3)))
    assert est.explained_variance_.shape == (8,)
    # RNCA's 1/n covariance exists for one row (zero)
    one = RNCA(n_random_features=8, bandwidth=1.0, random_state=0).fit(rng.normal(size=(1, 3)))
    np.testing.assert_array_equal(one.explained_variance_, 0.0)


def test_rfkpca_and_rnca_share_features_and_differ_by_ddof(rng):
    X = rng.normal(size=(50, 3))
    kw = dict(n_random_features=16, bandwidth=1.0, random_state=3)
    a, b = RFKPCA(**kw).fit(X), RNCA(**kw).fit(X)
    np.testing.assert_array_equal(a.feature_map_.random_weights_, b.feature_map_.random_weights_)
    np.testing.assert_allclose(a.explained_variance_ * 49, b.explained_variance_ * 50, rtol=1e-12)


def test_partial_fit_feature_mismatch(rng):
    est = RNCA(n_random_features=8, bandwidth=1.0, random_state=0).partial_fit(rng.normal(size=(5, 3)))
    with pytest.raises(ValueError, match="3 features"):
        est.partial_fit(rng.normal(size=(5, 4)))


def test_rfkpca_approaches_exact_kpca(rng):
    """As m grows, RFKPCA's top explained variances approach KernelPCA(covariance="u_statistic")'s."""
    X = rng.normal(size=(300, 3))
    exact = KernelPCA(5, bandwidth=2.0, covariance="u_statistic").fit(X).explained_variance_
    ms = (20, 80, 320)
    errs = []
    for m in ms:
        errs.append(
            np.mean(
                [
                    np.abs(
                        RFKPCA(5, n_random_features=m, bandwidth=2.0, random_state=s).fit(X).explained_variance_ - exact
                    ).sum()
                    / exact.sum()
                    for s in range(6)
                ]
            )
        )
    assert errs[0] > errs[1] > errs[2], errs
    slope = np.polyfit(np.log(ms), np.log(errs), 1)[0]
    assert -0.8 < slope < -0.3, (slope, errs)


@pytest.fixture(scope="module")
def cpu_2000():
    from kernelsketch.datasets import load_dataset

    X, _ = load_dataset("cpu")
    X = np.asarray(X, dtype=np.float64)[np.random.default_rng(0).permutation(len(X))[:2000]]
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    h = estimate_bandwidth(X, "median", random_state=0)
    return X, h, np.exp(-cdist(X, X, "sqeuclidean") / h**2)


def _spectral_error(K, Y):
    return abs(eigsh(K - Y @ Y.T, k=1, which="LM", return_eigenvectors=False, v0=np.ones(len(K)))[0]) / len(K)


@pytest.mark.slow
@pytest.mark.parametrize("cls,k_fraction", [(RNCA, 1.0), (RFKPCA, 0.5)])
def test_cpu_gram_converges(cls, k_fraction, cpu_2000):
    """||K - Y Y^T||_2 / n falls as m grows (with k = m: Z Z^T itself; with k = m/2 a truncation of it)."""
    X, h, K = cpu_2000
    errs = [
        np.mean(
            [
                _spectral_error(
                    K, cls(int(k_fraction * m), n_random_features=m, bandwidth=h, random_state=s).fit(X).gram_factor(X)
                )
                for s in range(2)
            ]
        )
        for m in (40, 160, 640)
    ]
    assert errs[0] > errs[1] > errs[2], errs
    assert errs[2] < 0.5 * errs[0], errs
