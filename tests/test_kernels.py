import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

import kernelsketch
from kernelsketch.kernels import (
    CauchyKernel,
    GaussianKernel,
    GramOperator,
    LaplacianKernel,
    get_kernel,
    kernel_blocks,
    kernel_diag,
    pairwise_kernel,
)

from .reference import naive_centered, naive_kernel

KERNEL_CASES = [
    ("gaussian", {"bandwidth": 1.3}),
    ("laplacian", {"bandwidth": 2.0}),
    ("cauchy", {"bandwidth": 0.7}),
    ("polynomial", {"degree": 2, "coef0": 0.5}),
    ("linear", {}),
]


def _data(rng, n, m, d, dtype, sparse=False):
    X = rng.normal(size=(n, d))
    Y = rng.normal(size=(m, d))
    if sparse:
        X[rng.random(X.shape) < 0.6] = 0
        Y[rng.random(Y.shape) < 0.6] = 0
        return sp.csr_matrix(X.astype(dtype)), sp.csr_matrix(Y.astype(dtype))
    return X.astype(dtype), Y.astype(dtype)


@pytest.mark.parametrize("name,params", KERNEL_CASES)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_pairwise_kernel_matches_naive(rng, dtype, name, params, sparse):
    X, Y = _data(rng, 37, 23, 5, dtype, sparse)
    K = pairwise_kernel(X, Y, name, **params)
    ref = naive_kernel(X, Y, name, **params)
    assert K.shape == (37, 23)
    assert K.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(K, ref, rtol=tol * 10, atol=tol * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("name,params", KERNEL_CASES)
def test_uneven_chunks_equal_one_block(rng, name, params):
    X, Y = _data(rng, 301, 57, 4, np.float64)
    full = pairwise_kernel(X, Y, name, **params)
    # a budget of ~3 KiB forces chunks of a few rows that do not divide 301
    # the block buffer is reused between iterations: copy while iterating
    blocks = [(rows, b.copy()) for rows, b in kernel_blocks(X, Y, name, working_memory=0.003, **params)]
    assert len(blocks) > 10
    stacked = np.vstack([b for _, b in blocks])
    np.testing.assert_allclose(stacked, full, rtol=1e-13, atol=1e-13)
    assert [r.start for r, _ in blocks] == sorted(r.start for r, _ in blocks)
    with kernelsketch.config_context(working_memory=0.003):
        np.testing.assert_allclose(pairwise_kernel(X, Y, name, **params), full, rtol=1e-13, atol=1e-13)


def test_working_memory_below_one_row_raises(rng):
    X, Y = _data(rng, 10, 5000, 3, np.float64)
    with pytest.raises(MemoryError, match="working_memory"):
        next(kernel_blocks(X, Y, "gaussian", bandwidth=1.0, working_memory=1e-6))
    with kernelsketch.config_context(working_memory=1e-6):
        with pytest.raises(MemoryError, match="one row"):
            pairwise_kernel(X, Y, "gaussian", bandwidth=1.0)


@pytest.mark.parametrize("name,params", KERNEL_CASES[:3])
def test_self_gram_has_exact_unit_diagonal(rng, dtype, name, params):
    # far-from-origin data make ||x||^2 + ||x||^2 - 2 x.x cancel badly
    X = (rng.normal(size=(200, 6)) + 1e3).astype(dtype)
    K = pairwise_kernel(X, None, name, working_memory=0.01, **params)
    assert np.all(np.diag(K) == 1.0)
    np.testing.assert_array_equal(kernel_diag(X, name, **params), np.ones(200))


def test_float32_gaussian_accuracy_far_from_origin(rng):
    """float32 blocks of data with a large offset stay accurate (centring + float64 norms)."""
    X = rng.normal(size=(300, 10)) + 500.0
    Y = rng.normal(size=(200, 10)) + 500.0
    h = 3.0
    ref = rbf_kernel(X, Y, gamma=1 / h**2)
    K32 = pairwise_kernel(X.astype(np.float32), Y.astype(np.float32), "gaussian", bandwidth=h)
    # the inputs themselves are rounded to float32: compare with the kernel of the rounded data
    ref32 = naive_kernel(X.astype(np.float32), Y.astype(np.float32), "gaussian", bandwidth=h)
    assert np.abs(K32 - ref32).max() < 2e-6
    # a naive float32 expansion would lose everything at this offset
    naive = np.exp(
        -(
            np.sum(X.astype(np.float32) ** 2, 1)[:, None]
            + np.sum(Y.astype(np.float32) ** 2, 1)[None]
            - 2 * X.astype(np.float32) @ Y.astype(np.float32).T
        )
        / h**2
    )
    assert np.abs(naive - ref).max() > 1e-3


def test_gaussian_overflowing_float32_squares(rng):
    # squared norms ~1e40 overflow float32; centring + float64 norms keep it finite and right
    X = (rng.normal(size=(50, 3)) + 1e20).astype(np.float32)
    K = pairwise_kernel(X, None, "gaussian", bandwidth=1e20)
    assert np.all(np.isfinite(K))
    ref = naive_kernel(X, X, "gaussian", bandwidth=1e20)
    assert np.abs(K - ref).max() < 1e-5


@pytest.mark.parametrize("name,params", KERNEL_CASES)
def test_gram_is_psd(rng, name, params):
    X = rng.normal(size=(120, 3))
    K = pairwise_kernel(X, None, name, **params)
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    w = np.linalg.eigvalsh(K)
    assert w.min() > -1e-9 * max(1.0, w.max())


@pytest.mark.parametrize("name,params", KERNEL_CASES[:3])
def test_spectral_measure_matches_kernel(name, params):
    """Bochner: E cos(w.(x - y)) = k(x, y) for w from sample_frequencies."""
    kern = get_kernel(name, **params)
    rng = np.random.default_rng(0)
    x = np.array([[0.3, -0.2, 0.5]])
    y = np.array([[-0.1, 0.4, 0.2]])
    W = kern.sample_frequencies(rng, 3, 400_000)
    est = np.mean(np.cos((x - y) @ W))
    exact = naive_kernel(x, y, name, **params)[0, 0]
    assert abs(est - exact) < 5e-3


def test_gram_operator_matches_dense(rng, dtype):
    X = rng.normal(size=(150, 4)).astype(dtype)
    K = naive_kernel(X, X, "gaussian", bandwidth=1.5)
    V = rng.normal(size=(150, 3))
    for centered, ref in [(False, K), (True, naive_centered(K))]:
        G = GramOperator(X, "gaussian", centered=centered, working_memory=0.01, bandwidth=1.5)
        tol = 1e-10 if dtype == np.float64 else 1e-4
        np.testing.assert_allclose(G @ V, ref @ V, atol=tol)
        np.testing.assert_allclose(G.matvec(V[:, 0]), ref @ V[:, 0], atol=tol)
        np.testing.assert_allclose(G.diagonal(), np.diag(ref), atol=tol)
        assert abs(G.trace() - np.trace(ref)) < tol * 150


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_bad_bandwidth(bad):
    with pytest.raises(ValueError, match="bandwidth"):
        GaussianKernel(bandwidth=bad)
    with pytest.raises(ValueError, match="bandwidth"):
        pairwise_kernel(np.ones((2, 2)), kernel="laplacian", bandwidth=bad)


def test_bad_kernel_inputs():
    with pytest.raises(ValueError, match="unknown kernel"):
        get_kernel("tanh", bandwidth=1.0)
    with pytest.raises(ValueError, match="needs a bandwidth"):
        get_kernel("cauchy")
    with pytest.raises(TypeError, match="bandwidth"):
        LaplacianKernel(bandwidth="wide")
    with pytest.raises(ValueError, match="NaN"):
        pairwise_kernel(np.array([[np.nan, 1.0]]), kernel="gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="infinity"):
        pairwise_kernel(np.array([[np.inf, 1.0]]), kernel="gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="0 sample"):
        pairwise_kernel(np.empty((0, 3)), kernel="gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="features"):
        pairwise_kernel(np.ones((3, 2)), np.ones((3, 4)), kernel="gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="Complex data not supported"):
        pairwise_kernel(np.ones((3, 2), dtype=complex), kernel="gaussian", bandwidth=1.0)
    with pytest.raises(ValueError, match="out must be"):
        pairwise_kernel(np.ones((3, 2)), kernel="linear", out=np.empty((2, 2)))


def test_integer_and_bool_input_become_float64():
    X = np.array([[0, 1], [2, 3]])
    K = pairwise_kernel(X, kernel="gaussian", bandwidth=2.0)
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, naive_kernel(X, X, "gaussian", bandwidth=2.0))
    Kb = pairwise_kernel(X.astype(bool), kernel="linear")
    np.testing.assert_allclose(Kb, [[1, 1], [1, 2]])  # rows [F, T], [T, T]


def test_kernel_objects_compare_by_params():
    assert CauchyKernel(1.0) == CauchyKernel(1.0)
    assert CauchyKernel(1.0) != CauchyKernel(2.0)
    assert "bandwidth=2.0" in repr(LaplacianKernel(2.0))
    assert np.allclose(GaussianKernel(1.0)(np.zeros((2, 1))), 1.0)


@pytest.mark.parametrize("scale", [1e-8, 1e-3, 1.0, 1e3, 1e8])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_gaussian_accurate_for_any_bandwidth(rng, dtype, scale, sparse):
    """Points that coincide with landmarks get k = 1 even when h is tiny (no cancellation blow-up)."""
    X = rng.normal(size=(60, 5)) * 3 + 10
    L = X[::4].copy()  # landmarks are some of the points
    if sparse:
        X, L = sp.csr_matrix(X.astype(dtype)), sp.csr_matrix(L.astype(dtype))
    else:
        X, L = X.astype(dtype), L.astype(dtype)
    h = 3.0 * scale
    K = pairwise_kernel(X, L, "gaussian", bandwidth=h)
    ref = naive_kernel(X, L, "gaussian", bandwidth=h)
    tol = 3e-6 if dtype == np.float32 else 1e-9
    assert np.abs(K - ref).max() < tol
    if scale <= 1e-3:  # K(X, L) is a 0/1 selection matrix
        np.testing.assert_allclose(K[::4], np.eye(L.shape[0]), atol=tol)


def test_every_kernel_implements_the_block_protocol_and_a_duck_typed_one_evaluates():
    # issue 20: the block protocol is a typed Protocol, not a contract in comments
    import kernelsketch as ks
    from kernelsketch.kernels import KERNELS, BlockKernel
    from kernelsketch.kernels.evaluation import evaluate

    for name in KERNELS:
        kern = ks.get_kernel(name, bandwidth=1.0)
        assert isinstance(kern, BlockKernel), name
        ops = kern.gemm_operands(np.ones((2, 2)), kern.prepare(np.ones((3, 2)), np.float64), np.float64)
        assert kern.gemm_form == (ops is not None), name

    class Dot:  # not a Kernel subclass: the protocol alone
        unit_diagonal = False
        parallel_compute = True
        gemm_form = False

        def prepare(self, Y, dtype):
            return np.asarray(Y, dtype=dtype)

        def compute(self, X, prepared, out):
            np.matmul(X, prepared.T, out=out)

        def temp_bytes_per_row(self, n_features, n_cols, itemsize):
            return n_features * itemsize

        def gemm_operands(self, X, prepared, out_dtype):
            return None

        def diag(self, X):
            return np.einsum("ij,ij->i", X, X)

    assert isinstance(Dot(), BlockKernel)
    X = np.random.default_rng(0).normal(size=(50, 3))
    np.testing.assert_allclose(evaluate(Dot(), X), X @ X.T, rtol=1e-12)
