"""Tests for kernelsketch.metrics.

Every blocked / Lanczos metric is compared with a plain dense computation and,
where one exists, with a closed form:

* ``Y`` = exact top-k eigenfactor of ``G``: spectral error ``lambda_{k+1} / n``,
  Frobenius error ``sqrt(sum_{i>k} lambda_i^2) / n^2``;
* ``Y = 2 sqrt(lambda_1) v_1`` (an overshooting, non-PSD residual): ``3 lambda_1 / n``;
* Nystroem with every point as a landmark is the best rank-r approximation;
* Kernel JL Theorem 1 against explicit finite-dimensional feature maps, where
  ``Sigma_n = Phi^T Phi / n`` is a matrix.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from threadpoolctl import threadpool_limits

from kernelsketch import config_context
from kernelsketch.kernels import get_kernel, pairwise_kernel
from kernelsketch.metrics import (
    NystroemErrors,
    Theorem1Error,
    additional_approximation_error,
    additional_approximation_error_dense,
    adjusted_rand_index,
    eigengaps,
    kernel_frobenius_error,
    kernel_frobenius_error_dense,
    kernel_spectral_error,
    kernel_spectral_error_dense,
    nystroem_errors,
    rand_index,
    theorem1_inner_product_error,
    top_eigen,
)
from kernelsketch.metrics import gram_errors as gram_errors_module


@pytest.fixture(autouse=True)
def _single_blas_thread():
    # These matrices are small (n <= 5000): threading buys nothing, and on a
    # loaded 2-core machine OpenBLAS's spinning threads make a 300 x 300 eigh
    # ~100x slower (measured: 3.3 s vs 0.03 s).
    with threadpool_limits(1, user_api="blas"):
        yield


KERNELS = {
    "gaussian": dict(kernel="gaussian", bandwidth=1.5),
    "laplacian": dict(kernel="laplacian", bandwidth=2.0),
    "cauchy": dict(kernel="cauchy", bandwidth=1.0),
    "polynomial": dict(kernel="polynomial", degree=2, gamma=0.5, coef0=1.0),
    "linear": dict(kernel="linear"),
}


def _kernel(spec):
    spec = dict(spec)
    name = spec.pop("kernel")
    return get_kernel(name, **spec)


def _data(n, d=3, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(dtype)


def _dense_gram(X, kern):
    return pairwise_kernel(np.asarray(X, dtype=np.float64), kernel=kern)


def _eig_desc(K):
    w, V = scipy.linalg.eigh(K)
    return w[::-1], V[:, ::-1]


# ---------------------------------------------------------------------------
# kernel spectral / Frobenius errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rank", [1, 7])
def test_blocked_and_lanczos_match_dense(name, dtype, rank):
    n = 240
    X = _data(n, seed=rank, dtype=dtype)
    kern = _kernel(KERNELS[name])
    Y = np.random.default_rng(10 + rank).normal(size=(n, rank)).astype(dtype) * 0.3
    D = _dense_gram(X, kern) - Y.astype(np.float64) @ Y.astype(np.float64).T
    fro_ref = np.linalg.norm(D, "fro") / n**2
    spec_ref = np.linalg.norm(D, 2) / n  # SVD: independent of the eigvalsh route
    assert np.isclose(kernel_frobenius_error_dense(X, Y, kern), fro_ref, rtol=1e-12)
    assert np.isclose(kernel_spectral_error_dense(X, Y, kern), spec_ref, rtol=1e-10)
    with config_context(working_memory=0.1):  # ~50 rows per block: many blocks
        assert np.isclose(kernel_frobenius_error(X, Y, kern, method="blocked"), fro_ref, rtol=1e-12)
        assert np.isclose(kernel_frobenius_error(X, Y, kern, method="formula"), fro_ref, rtol=1e-9)
        lanczos = kernel_spectral_error(X, Y, kern, method="lanczos", tol=0.0, random_state=0)
    assert np.isclose(lanczos, spec_ref, rtol=1e-9)


@pytest.mark.parametrize("name", ["gaussian", "laplacian", "polynomial"])
@pytest.mark.parametrize("k", [1, 5, 20])
def test_exact_eigenfactor_gives_the_tail_eigenvalues(name, k):
    n = 300
    X = _data(n, d=4, seed=k)
    kern = _kernel(KERNELS[name])
    lam, V = _eig_desc(_dense_gram(X, kern))
    Y = V[:, :k] * np.sqrt(lam[:k])
    # G - Y Y^T = sum_{i>k} lambda_i v_i v_i^T: a PSD residual with known spectrum
    assert np.isclose(kernel_spectral_error(X, Y, kern, method="lanczos", random_state=1), lam[k] / n, rtol=1e-7)
    assert np.isclose(kernel_spectral_error(X, Y, kern, method="dense"), lam[k] / n, rtol=1e-9)
    tail = np.sqrt(np.sum(lam[k:] ** 2)) / n**2
    for method in ("dense", "blocked", "formula"):
        assert np.isclose(kernel_frobenius_error(X, Y, kern, method=method), tail, rtol=1e-8), method


def test_overshooting_factor_gives_largest_magnitude_negative_eigenvalue():
    # Y = 2 sqrt(lambda_1) v_1: G - YY^T has eigenvalue -3 lambda_1, which must
    # win over the positive lambda_2 (an RFF-like approximation overshooting G).
    n = 250
    X = _data(n, seed=3)
    kern = get_kernel("gaussian", bandwidth=2.0)
    lam, V = _eig_desc(_dense_gram(X, kern))
    Y = 2.0 * np.sqrt(lam[0]) * V[:, :1]
    expected = 3.0 * lam[0] / n
    assert np.isclose(kernel_spectral_error(X, Y, kern, method="lanczos", random_state=0), expected, rtol=1e-8)
    assert np.isclose(kernel_spectral_error_dense(X, Y, kern), expected, rtol=1e-10)


def test_normalisation_and_zero_factor():
    X = _data(50, seed=1)
    kern = get_kernel("linear")
    Y = np.zeros((50, 1))
    G = X @ X.T
    assert np.isclose(kernel_spectral_error(X, Y, kern, normalize=False), np.linalg.norm(G, 2))
    assert np.isclose(kernel_spectral_error(X, Y, kern), np.linalg.norm(G, 2) / 50)
    assert np.isclose(kernel_frobenius_error(X, Y, kern, normalize=False, method="blocked"), np.linalg.norm(G))
    assert np.isclose(kernel_frobenius_error(X, Y, kern, method="blocked"), np.linalg.norm(G) / 50**2)
    # the factor X itself reproduces the linear Gram exactly
    assert kernel_frobenius_error(X, X, kern, method="blocked") < 1e-14
    assert kernel_frobenius_error_dense(X, X, kern) < 1e-14


def test_sparse_input_and_kernel_by_name():
    X = sp.random(120, 6, density=0.4, format="csr", random_state=0)
    Y = np.random.default_rng(0).normal(size=(120, 3)) * 0.1
    ref = kernel_frobenius_error_dense(X.toarray(), Y, "gaussian", bandwidth=1.0)
    assert np.isclose(kernel_frobenius_error(X, Y, "gaussian", bandwidth=1.0, method="blocked"), ref, rtol=1e-12)
    ref_s = kernel_spectral_error_dense(X.toarray(), Y, "gaussian", bandwidth=1.0)
    assert np.isclose(
        kernel_spectral_error(X, Y, "gaussian", bandwidth=1.0, method="lanczos", random_state=0), ref_s, rtol=1e-8
    )


def test_float32_input_is_measured_in_float64():
    X64 = _data(200, seed=2)
    X32 = X64.astype(np.float32)
    Y = np.random.default_rng(1).normal(size=(200, 4)).astype(np.float32) * 0.2
    kern = get_kernel("gaussian", bandwidth=1.0)
    a = kernel_frobenius_error(X32, Y, kern, method="blocked")
    b = kernel_frobenius_error_dense(X32.astype(np.float64), Y.astype(np.float64), kern)
    assert isinstance(a, float) and a == pytest.approx(b, rel=1e-12)


def test_lanczos_is_reproducible_for_a_seed():
    X = _data(200, seed=4)
    Y = np.random.default_rng(0).normal(size=(200, 2))
    kw = dict(kernel="gaussian", bandwidth=1.0, method="lanczos")
    assert kernel_spectral_error(X, Y, random_state=7, **kw) == kernel_spectral_error(X, Y, random_state=7, **kw)


def test_auto_avoids_dense_when_budget_is_small(monkeypatch):
    def _no_dense(*args, **kwargs):
        raise AssertionError("the dense route was taken")

    X = _data(400, seed=0)
    Y = np.random.default_rng(0).normal(size=(400, 2)) * 0.1
    ref_f = kernel_frobenius_error_dense(X, Y, "gaussian", bandwidth=1.0)
    ref_s = kernel_spectral_error_dense(X, Y, "gaussian", bandwidth=1.0)
    monkeypatch.setattr(gram_errors_module, "kernel_frobenius_error_dense", _no_dense)
    monkeypatch.setattr(gram_errors_module, "kernel_spectral_error_dense", _no_dense)
    with config_context(working_memory=1):  # 400^2 * 8 B * 2 = 2.4 MiB > 1 MiB
        assert np.isclose(kernel_frobenius_error(X, Y, "gaussian", bandwidth=1.0), ref_f, rtol=1e-12)
        assert np.isclose(kernel_spectral_error(X, Y, "gaussian", bandwidth=1.0, random_state=0), ref_s, rtol=1e-7)


@pytest.mark.slow
def test_bounded_memory_n5000_agrees_with_dense():
    n, k = 5000, 10
    X = _data(n, d=5, seed=5)
    kern = get_kernel("gaussian", bandwidth=2.0)
    # A Nystroem-like factor from 40 landmarks (a realistic, imperfect approximation)
    C = pairwise_kernel(X, X[:40], kernel=kern)
    w, U = np.linalg.eigh(C[:40])
    Y = C @ (U[:, -k:] / np.sqrt(w[-k:]))
    D = pairwise_kernel(X, kernel=kern)
    D -= Y @ Y.T
    fro_ref = np.sqrt(np.einsum("ij,ij->", D, D)) / n**2
    spec_ref = abs(eigsh(D, k=1, which="LM", tol=0, v0=np.ones(n))[0][0]) / n
    del D
    with config_context(working_memory=1):
        tracemalloc.start()
        blocked = kernel_frobenius_error(X, Y, kern)  # auto: n > 1000 -> blocked
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        formula = kernel_frobenius_error(X, Y, kern, method="formula")
        spectral = kernel_spectral_error(X, Y, kern, random_state=0)  # auto -> lanczos
    assert np.isclose(blocked, fro_ref, rtol=1e-12)
    assert np.isclose(formula, fro_ref, rtol=1e-9)
    assert np.isclose(spectral, spec_ref, rtol=1e-7)
    # The dense Gram would be n^2 * 8 B = 191 MiB; one 1 MiB block, the factor
    # copies (n * k * 8 B = 0.4 MiB each) and the kernel's prepared data fit in 4 MiB
    # (measured peak: 1.2 MiB).
    assert peak < 4 * 2**20, peak / 2**20


@pytest.mark.parametrize(
    "Y, err, match",
    [
        (np.zeros((9, 2)), ValueError, "rows"),
        (np.full((10, 2), np.nan), ValueError, "NaN"),
        (np.zeros((10, 2, 1)), ValueError, "2-D"),
        (np.zeros((10, 0)), ValueError, "0 columns"),
        (None, TypeError, "None"),
        (np.array([["a"] * 2] * 10), TypeError, "numeric"),
    ],
)
def test_factor_validation(Y, err, match):
    X = _data(10)
    with pytest.raises(err, match=match):
        kernel_frobenius_error(X, Y, "linear")
    with pytest.raises(err, match=match):
        kernel_spectral_error(X, Y, "linear")


def test_bad_inputs():
    X = _data(10)
    Y = np.zeros((10, 1))
    with pytest.raises(ValueError, match="method"):
        kernel_frobenius_error(X, Y, "linear", method="lanczos")
    with pytest.raises(ValueError, match="method"):
        kernel_spectral_error(X, Y, "linear", method="blocked")
    with pytest.raises(ValueError, match="tol"):
        kernel_spectral_error(X, Y, "linear", tol=-1.0)
    with pytest.raises(ValueError, match="bandwidth"):
        kernel_spectral_error(X, Y, "gaussian")
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"infinity|NaN"):
        kernel_frobenius_error(bad, Y, "linear")
    # 1-D factor means k = 1
    assert np.isclose(kernel_frobenius_error(X, np.zeros(10), "linear"), kernel_frobenius_error(X, Y, "linear"))


# ---------------------------------------------------------------------------
# Nystroem additional approximation error, eigengaps, top eigenpairs
# ---------------------------------------------------------------------------
def _explicit_nystroem(K, idx, r):
    """C W_r^+ C^T with W_r the best rank-r approximation of W (pinv of it)."""
    C, W = K[:, idx], K[np.ix_(idx, idx)]
    w, U = np.linalg.eigh(W)
    Wr = (U[:, -r:] * w[-r:]) @ U[:, -r:].T
    return C @ np.linalg.pinv(Wr, rcond=1e-12, hermitian=True) @ C.T


@pytest.mark.parametrize("name", ["gaussian", "laplacian", "polynomial"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_additional_error_matches_dense_and_is_nonnegative(name, seed):
    n, m, r = 300, 30, 6
    X = _data(n, d=3, seed=seed)
    kern = _kernel(KERNELS[name])
    K = _dense_gram(X, kern)
    idx = np.random.default_rng(seed).choice(n, m, replace=False)
    lam = np.linalg.eigvalsh(K)[::-1]
    # dense reference built independently: explicit pinv and the full tail
    nys = np.linalg.norm(K - _explicit_nystroem(K, idx, r))
    best = np.sqrt(np.sum(lam[r:] ** 2))
    dense = additional_approximation_error_dense(K, idx, r, details=True)
    assert isinstance(dense, NystroemErrors)
    assert np.isclose(dense.nystroem_error, nys, rtol=1e-8)
    assert np.isclose(dense.best_rank_r_error, best, rtol=1e-10)
    assert dense.additional_error >= -1e-10 * best
    for method in ("blocked", "formula"):
        with config_context(working_memory=0.2):
            res = nystroem_errors(X, idx, r, kern, method=method, random_state=seed)
        assert np.isclose(res.nystroem_error, nys, rtol=1e-8)
        assert np.isclose(res.best_rank_r_error, best, rtol=1e-7)
        assert np.isclose(res.additional_error, nys - best, rtol=1e-6, atol=1e-9 * best)
        assert res.additional_error >= -1e-8 * best
        np.testing.assert_allclose(res.eigenvalues, lam[: r + 1], rtol=1e-9)
        assert np.isclose(res.eigengap, lam[r - 1] - lam[r], rtol=1e-6, atol=1e-10 * lam[0])
    assert np.isclose(
        additional_approximation_error(X, idx, r, kern, method="dense"), dense.additional_error, rtol=1e-10, atol=1e-12
    )


def test_every_point_as_landmark_gives_the_best_rank_r_approximation():
    # W = C = K, so C W_r^+ C^T = K U_r Lam_r^{-1} U_r^T K = K_r: no additional error.
    n, r = 150, 5
    X = _data(n, seed=7)
    kern = get_kernel("gaussian", bandwidth=1.0)
    res = nystroem_errors(X, np.arange(n), r, kern, method="blocked", random_state=0)
    assert abs(res.additional_error) < 1e-7 * res.best_rank_r_error
    assert abs(additional_approximation_error_dense(_dense_gram(X, kern), np.arange(n), r)) < 1e-9


def test_nystroem_rank_deficient_landmarks_rejected():
    X = _data(40, seed=0)
    with pytest.raises(ValueError, match="numerical rank"):
        nystroem_errors(X, [3, 3, 3, 3], 2, "gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="landmarks"):
        nystroem_errors(X, [1], 2, "gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="indices"):
        nystroem_errors(X, [0, 40], 1, "gaussian", bandwidth=1.0)
    with pytest.raises(TypeError, match="integer"):
        nystroem_errors(X, [0.0, 1.0], 1, "gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="r="):
        nystroem_errors(X, np.arange(40), 40, "gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="square"):
        additional_approximation_error_dense(np.zeros((3, 4)), [0], 1)


def test_eigengaps():
    np.testing.assert_array_equal(eigengaps([1.0, 4.0, 2.0]), [2.0, 1.0])
    np.testing.assert_array_equal(eigengaps(np.array([3, 3, 1])), [0.0, 2.0])
    lam = np.linalg.eigvalsh(_dense_gram(_data(60), get_kernel("gaussian", bandwidth=1.0)))
    gaps = eigengaps(lam)
    assert gaps.shape == (59,) and np.all(gaps >= 0)
    assert np.isclose(gaps.sum(), lam.max() - lam.min())
    with pytest.raises(ValueError, match="at least 2"):
        eigengaps([1.0])
    with pytest.raises(ValueError, match="1-D"):
        eigengaps(np.ones((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        eigengaps([1.0, np.nan])


@pytest.mark.parametrize("method", ["dense", "lanczos"])
def test_top_eigen_matches_eigh(method):
    X = _data(200, seed=3)
    kern = get_kernel("gaussian", bandwidth=1.5)
    K = _dense_gram(X, kern)
    lam, V = _eig_desc(K)
    w, U = top_eigen(X, 4, kernel=kern, method=method, random_state=0)
    np.testing.assert_allclose(w, lam[:4], rtol=1e-10)
    np.testing.assert_allclose(np.abs(U.T @ V[:, :4]), np.eye(4), atol=1e-7)  # same vectors up to sign
    w2, _ = top_eigen(K, 4, method=method, random_state=0)
    np.testing.assert_allclose(w2, lam[:4], rtol=1e-10)
    with pytest.raises(ValueError, match="square"):
        top_eigen(np.zeros((3, 2)), 1)
    with pytest.raises(ValueError, match="r="):
        top_eigen(K, 201)


# ---------------------------------------------------------------------------
# Kernel JL, Theorem 1
# ---------------------------------------------------------------------------
def _poly2_features(X, gamma, coef0):
    """Explicit features of (gamma <x, y> + coef0)^2: [coef0, sqrt(2 gamma coef0) x, gamma x (x) x]."""
    n, D = X.shape
    outer = gamma * np.einsum("ni,nj->nij", X, X).reshape(n, D * D)
    return np.hstack([np.full((n, 1), coef0), np.sqrt(2 * gamma * coef0) * X, outer])


def _explicit_theorem1(Phi, Z, F, G, Phi_pop=None):
    """Both sides of Theorem 1 in an explicit feature space H = R^p (f = Phi^T a)."""
    n = Phi.shape[0]
    d = Z.shape[0]
    Pop = Phi if Phi_pop is None else Phi_pop
    Sigma = Pop.T @ Pop / Pop.shape[0]  # (1/N) sum_i phi(x_i) phi(x_i)^T
    f, g = Phi.T @ F, Phi.T @ G  # functions as vectors in H
    target = f.T @ np.linalg.matrix_power(Sigma, 3) @ g
    K = Phi @ Phi.T
    sketched = (Z @ K @ (Phi @ f)).T @ (Z @ K @ (Phi @ g)) / (n**3 * d)  # f|X = Phi f
    # sup over H: || S^* V V^T S - Sigma^3 ||_2 with S = Phi, V V^T = K Z^T Z K / (n^3 d)
    op = Phi.T @ (K @ Z.T @ Z @ K) @ Phi / (n**3 * d) - np.linalg.matrix_power(Sigma, 3)
    norms = np.outer(np.linalg.norm(f, axis=0), np.linalg.norm(g, axis=0))
    return sketched, target, norms, np.linalg.norm(op, 2)


@pytest.mark.parametrize("kind", ["linear", "poly2"])
@pytest.mark.parametrize("d", [5, 200])
def test_theorem1_closed_form_matches_explicit_feature_map(kind, d):
    rng = np.random.default_rng(d)
    n, D = 40, 3
    X = rng.normal(size=(n, D))
    if kind == "linear":
        kern, Phi = get_kernel("linear"), X
    else:
        kern, Phi = get_kernel("polynomial", degree=2, gamma=0.5, coef0=1.0), _poly2_features(X, 0.5, 1.0)
    np.testing.assert_allclose(Phi @ Phi.T, _dense_gram(X, kern), rtol=1e-12, atol=1e-12)
    Z = rng.standard_normal((d, n))
    F, G = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    res = theorem1_inner_product_error(X, Z, F, G, kern)
    assert isinstance(res, Theorem1Error)
    sketched, target, norms, sup = _explicit_theorem1(Phi, Z, F, G)
    np.testing.assert_allclose(res.sketched, sketched, rtol=1e-9)
    np.testing.assert_allclose(res.target, target, rtol=1e-9)
    np.testing.assert_allclose(res.abs_error, np.abs(sketched - target), rtol=1e-7, atol=1e-12 * np.abs(target).max())
    np.testing.assert_allclose(
        res.normalized_error,
        np.abs(sketched - target) / norms,
        rtol=1e-7,
        atol=1e-12 * np.abs(target).max() / norms.min(),
    )
    assert np.isclose(res.sup_error, sup, rtol=1e-8)
    assert np.all(res.normalized_error <= res.sup_error * (1 + 1e-10))


def test_theorem1_population_sample_matches_explicit_sigma_N():
    rng = np.random.default_rng(0)
    X, Xp = rng.normal(size=(30, 2)), rng.normal(size=(500, 2))
    kern = get_kernel("polynomial", degree=2, gamma=0.5, coef0=1.0)
    Z = rng.standard_normal((50, 30))
    F = rng.normal(size=(30, 2))
    with config_context(working_memory=0.05):
        res = theorem1_inner_product_error(X, Z, F, kernel=kern, X_population=Xp)
    _, target, _, _ = _explicit_theorem1(_poly2_features(X, 0.5, 1.0), Z, F, F, _poly2_features(Xp, 0.5, 1.0))
    np.testing.assert_allclose(res.target, target, rtol=1e-9)
    assert res.sup_error is None
    # the subsample itself as "population" reproduces the Sigma_n target
    same = theorem1_inner_product_error(X, Z, F, kernel=kern, X_population=X)
    np.testing.assert_allclose(same.target, theorem1_inner_product_error(X, Z, F, kernel=kern).target, rtol=1e-10)


def test_theorem1_sketching_error_shrinks_like_inverse_sqrt_d():
    # Theorem 1 (sketching term): error ~ d^{-1/2}.  Going from d = 25 to
    # d = 1600 should divide it by ~8; averaged over seeds, demand at least 3.
    rng = np.random.default_rng(0)
    n = 60
    X = rng.normal(size=(n, 2))
    F = rng.normal(size=(n, 4))
    sup = {}
    for d in (25, 1600):
        sup[d] = np.mean(
            [
                theorem1_inner_product_error(
                    X, np.random.default_rng(s).standard_normal((d, n)), F, kernel="gaussian", bandwidth=1.0
                ).sup_error
                for s in range(8)
            ]
        )
    assert sup[1600] < sup[25] / 3, sup


def test_theorem1_projection_input_equals_sketch_input():
    # KernelJL(centered=False, scaling="paper") stores V_hat = K Z^T / (n sqrt(n d)) as projection_
    rng = np.random.default_rng(1)
    n, d = 50, 30
    X, Z, F = rng.normal(size=(n, 2)), rng.standard_normal((d, n)), rng.normal(size=(n, 3))
    kern = get_kernel("gaussian", bandwidth=1.0)
    V = _dense_gram(X, kern) @ Z.T / (n * np.sqrt(n * d))
    a = theorem1_inner_product_error(X, Z, F, kernel=kern)
    b = theorem1_inner_product_error(X, None, F, kernel=kern, projection=V)
    for field in ("sketched", "target", "normalized_error"):
        np.testing.assert_allclose(getattr(b, field), getattr(a, field), rtol=1e-10)
    assert np.isclose(b.sup_error, a.sup_error, rtol=1e-9)
    with pytest.raises(ValueError, match="exactly one"):
        theorem1_inner_product_error(X, Z, F, kernel=kern, projection=V)
    with pytest.raises(ValueError, match="exactly one"):
        theorem1_inner_product_error(X, None, F, kernel=kern)
    with pytest.raises(ValueError, match="projection must have shape"):
        theorem1_inner_product_error(X, None, F, kernel=kern, projection=V[:-1])


def test_theorem1_validation():
    X = _data(10)
    Z = np.ones((4, 10))
    with pytest.raises(ValueError, match="Z must have shape"):
        theorem1_inner_product_error(X, np.ones((4, 9)), np.ones(10), kernel="linear")
    with pytest.raises(ValueError, match="F must have shape"):
        theorem1_inner_product_error(X, Z, np.ones((9, 2)), kernel="linear")
    with pytest.raises(ValueError, match="NaN"):
        theorem1_inner_product_error(X, Z, np.full(10, np.nan), kernel="linear")
    with pytest.raises(ValueError, match="features"):
        theorem1_inner_product_error(X, Z, np.ones(10), kernel="linear", X_population=np.ones((5, 2)))
    res = theorem1_inner_product_error(X, Z, np.zeros(10), kernel="linear")  # f = 0: error undefined
    assert np.isnan(res.normalized_error).all()


# ---------------------------------------------------------------------------
# Rand index
# ---------------------------------------------------------------------------
def test_rand_index_hand_computed():
    # pairs of 4 points: (0,1) together in both; (2,3) together then apart;
    # the other four apart in both -> RI = 5/6.  Contingency [[2,0,0],[0,1,1]]:
    # sum C(n_ij,2) = 1, rows 2, cols 1, E = 2*1/6, M = 3/2 -> ARI = (2/3)/(7/6) = 4/7.
    t, p = [0, 0, 1, 1], ["a", "a", "b", "c"]
    assert rand_index(t, p) == pytest.approx(5 / 6)
    assert adjusted_rand_index(t, p) == pytest.approx(4 / 7)


def test_rand_index_properties():
    rng = np.random.default_rng(0)
    t = rng.integers(0, 4, 200)
    perm = np.array([2, 0, 3, 1])[t]  # same partition, renamed labels
    assert rand_index(t, perm) == 1.0 and adjusted_rand_index(t, perm) == 1.0
    p = rng.integers(0, 4, 200)
    assert rand_index(t, p) == pytest.approx(rand_index(p, t)) and 0.0 < rand_index(t, p) < 1.0  # symmetric
    assert abs(np.mean([adjusted_rand_index(t, rng.integers(0, 4, 200)) for _ in range(20)])) < 0.02
    assert isinstance(rand_index(t, t), float)


def test_rand_index_validation():
    with pytest.raises(ValueError, match="samples"):
        rand_index([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="empty"):
        adjusted_rand_index([], [])
    with pytest.raises(ValueError, match="1-D"):
        rand_index([[0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="NaN"):
        rand_index([0.0, np.nan], [0, 1])
    with pytest.raises(TypeError, match="None"):
        adjusted_rand_index(None, [0])
