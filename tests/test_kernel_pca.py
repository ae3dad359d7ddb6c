import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import KernelPCA as SKKernelPCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch import KernelPCA

from .reference import naive_centered, naive_kernel


def _align_signs(A, B):
    s = np.sign(np.sum(A * B, axis=0))
    s[s == 0] = 1
    return A * s


@parametrize_with_checks([KernelPCA(n_components=2, bandwidth=1.0), KernelPCA(bandwidth="median", random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("solver", ["dense", "arpack", "randomized", "operator"])
@pytest.mark.parametrize(
    "kernel,params,sk",
    [
        ("gaussian", {"bandwidth": 2.0}, {"kernel": "rbf", "gamma": 0.25}),
        (
            "polynomial",
            {"kernel_params": {"degree": 2, "gamma": 0.5, "coef0": 1.0}},
            {"kernel": "poly", "degree": 2, "gamma": 0.5, "coef0": 1.0},
        ),
    ],
)
def test_agrees_with_sklearn(rng, solver, kernel, params, sk):
    X = rng.normal(size=(400, 4))
    Xt = rng.normal(size=(60, 4))
    ours = KernelPCA(6, kernel=kernel, eigen_solver=solver, random_state=0, **params)
    Z = ours.fit_transform(X)
    ref = SKKernelPCA(6, eigen_solver="dense", **sk)
    Zr = ref.fit_transform(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
    np.testing.assert_allclose(_align_signs(Z, Zr), Zr, atol=1e-6)
    np.testing.assert_allclose(_align_signs(ours.transform(Xt), ref.transform(Xt)), ref.transform(Xt), atol=1e-6)


def test_transform_of_training_points_equals_fit_transform(rng):
    X = rng.normal(size=(300, 3))
    est = KernelPCA(5, bandwidth=1.5)
    Z = est.fit_transform(X)
    with kernelsketch.config_context(working_memory=0.01):  # many small blocks
        np.testing.assert_allclose(est.transform(X), Z, atol=1e-9)


def test_against_dense_reference(rng):
    X = rng.normal(size=(80, 3))
    K = naive_centered(naive_kernel(X, X, "laplacian", bandwidth=2.0))
    w, V = np.linalg.eigh(K)
    est = KernelPCA(4, kernel="laplacian", bandwidth=2.0).fit(X)
    np.testing.assert_allclose(est.eigenvalues_, w[::-1][:4], rtol=1e-10)
    np.testing.assert_allclose(np.abs(est.eigenvectors_), np.abs(V[:, ::-1][:, :4]), atol=1e-8)
    np.testing.assert_allclose(est.explained_variance_, w[::-1][:4] / 80)
    np.testing.assert_allclose(est.explained_variance_ratio_, w[::-1][:4] / np.trace(K))


def test_u_statistic_covariance(rng):
    """Proposition 1 (Sriperumbudur & Sterge): eigenvalues of H K H / (n - 1)."""
    X = rng.normal(size=(50, 2))
    emp = KernelPCA(3, bandwidth=1.0).fit(X)
    ust = KernelPCA(3, bandwidth=1.0, covariance="u_statistic").fit(X)
    np.testing.assert_allclose(ust.explained_variance_, emp.eigenvalues_ / 49)
    np.testing.assert_allclose(emp.explained_variance_, emp.eigenvalues_ / 50)
    np.testing.assert_allclose(ust.transform(X), emp.transform(X))


def test_deterministic_signs_and_seed(rng):
    X = rng.normal(size=(2000, 3))
    a = KernelPCA(3, bandwidth=1.0, eigen_solver="arpack", random_state=1).fit(X)
    b = KernelPCA(3, bandwidth=1.0, eigen_solver="arpack", random_state=2).fit(X)
    V = a.eigenvectors_
    assert np.all(V[np.argmax(np.abs(V), axis=0), range(3)] > 0)
    np.testing.assert_allclose(a.eigenvectors_, b.eigenvectors_, atol=1e-8)


def test_float32_in_float32_out(rng):
    X = rng.normal(size=(200, 3))
    e64 = KernelPCA(3, bandwidth=1.0).fit(X)
    e32 = KernelPCA(3, bandwidth=1.0).fit(X.astype(np.float32))
    Z32 = e32.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    assert e32.fit_transform(X.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(Z32, e64.transform(X), atol=1e-4)


def test_sparse_input(rng):
    X = rng.normal(size=(100, 6))
    X[rng.random(X.shape) < 0.5] = 0
    dense = KernelPCA(3, bandwidth=2.0).fit(X)
    sparse = KernelPCA(3, bandwidth=2.0).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)), dense.transform(X), atol=1e-10)


def test_zero_eigenvalues_dropped_with_warning():
    # 5 distinct points repeated: the centred Gram has rank 4
    X = np.repeat(np.arange(5.0)[:, None], 4, axis=0)
    with pytest.warns(RuntimeWarning, match="dropped"):
        est = KernelPCA(8, bandwidth=1.0).fit(X)
    assert len(est.eigenvalues_) == 4
    Z = est.transform(X)
    assert np.all(np.isfinite(Z)) and Z.shape == (20, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert KernelPCA(bandwidth=1.0).fit(X).eigenvalues_.shape == (4,)


def test_bad_inputs(rng):
    X = rng.normal(size=(10, 2))
    with pytest.raises(ValueError, match="n_components=11 must be <= n_samples=10"):
        KernelPCA(11, bandwidth=1.0).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        KernelPCA(2, bandwidth=1.0).fit(np.where(X > 1, np.nan, X))
    with pytest.raises(ValueError, match="bandwidth"):
        KernelPCA(2, bandwidth=0.0).fit(X)
    with pytest.raises(ValueError, match="bandwidth"):
        KernelPCA(2, bandwidth=-3.0).fit(X)
    with pytest.raises(ValueError, match="sample"):
        KernelPCA(2, bandwidth=1.0).fit(np.empty((0, 2)))
    est = KernelPCA(2, bandwidth=1.0).fit(X)
    with pytest.raises(ValueError, match="3 features, but KernelPCA is expecting 2"):
        est.transform(np.ones((4, 3)))
    with pytest.raises(ValueError, match="infinity"):
        est.transform(np.array([[np.inf, 0.0]]))
    with pytest.raises(ValueError, match="identical"):
        KernelPCA(2).fit(np.ones((10, 2)))


def test_in_a_pipeline(rng):
    X = rng.normal(size=(100, 3)) * [1, 10, 100]
    pipe = make_pipeline(StandardScaler(), KernelPCA(2, random_state=0))
    Z = pipe.fit_transform(X)
    assert Z.shape == (100, 2)
    np.testing.assert_allclose(pipe.transform(X), Z, atol=1e-9)


def test_bandwidth_far_above_spread_is_a_clear_error(rng):
    """K -> all ones: the centred Gram is rounding noise, not components."""
    X = rng.normal(size=(40, 3))
    with pytest.raises(ValueError, match="numerically zero"):
        KernelPCA(3, bandwidth=1e9).fit(X)
    with pytest.raises(ValueError, match="numerically zero"):
        KernelPCA(3, bandwidth=1e9, eigen_solver="operator", random_state=0).fit(X)


def test_tiny_bandwidth_gives_identity_gram(rng):
    """K -> I: centred Gram H, eigenvalues 1; held-out points map to 0."""
    X = rng.normal(size=(30, 3))
    est = KernelPCA(5, bandwidth=1e-6).fit(X)
    np.testing.assert_allclose(est.eigenvalues_, 1.0, atol=1e-9)
    np.testing.assert_allclose(est.transform(rng.normal(size=(4, 3))), 0.0, atol=1e-9)
    assert np.all(np.isfinite(est.transform(X)))
