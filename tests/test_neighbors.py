"""The nearest-landmark search against brute force, on every backend."""

import numpy as np
import pytest
import scipy.sparse as sp

import kernelsketch.kernels.neighbors as nb
from kernelsketch.kernels.neighbors import nearest, resolve_backend

BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(nb._numba_kernel() is None, reason="no numba"))]


def brute(X, L, r):
    D = ((np.asarray(X, dtype=np.float64)[:, None, :] - np.asarray(L, dtype=np.float64)[None]) ** 2).sum(-1)
    idx = np.argsort(D, axis=1, kind="stable")[:, :r]
    return np.take_along_axis(D, idx, axis=1), idx


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("r", [1, 7, 40])
def test_same_neighbours_as_brute_force(backend, r, dtype):
    rng = np.random.default_rng(r)
    X, L = rng.normal(size=(900, 6)).astype(dtype), rng.normal(size=(40, 6)).astype(dtype)
    d2, idx = nearest(X, L, r, backend=backend)
    d_ref, i_ref = brute(X, L, r)
    assert idx.dtype == np.int32 and d2.dtype == dtype and d2.shape == (900, r)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(d2, d_ref, rtol=tol, atol=tol)
    if dtype == np.float64:  # float32 rounding may swap two near-equal candidates
        np.testing.assert_array_equal(idx, i_ref)
    else:
        assert (idx == i_ref).mean() > 0.999


@pytest.mark.parametrize("backend", BACKENDS)
def test_duplicated_points_tie_in_distance_not_in_validity(backend):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(20, 3))
    L = np.vstack([base, base])  # every landmark twice: every neighbour ties with its copy
    X = np.vstack([base[:5], rng.normal(size=(200, 3))])
    d2, idx = nearest(X, L, 4, backend=backend)
    d_ref, _ = brute(X, L, 4)
    np.testing.assert_allclose(d2, d_ref, atol=1e-10)
    D = ((X[:, None, :] - L[None]) ** 2).sum(-1)
    np.testing.assert_allclose(np.take_along_axis(D, idx.astype(np.int64), axis=1), d2, atol=1e-10)
    assert all(len(set(row)) == 4 for row in idx.tolist())  # four distinct landmarks a row
    assert (d2[:5, 0] < 1e-12).all() and (d2[:5, 1] < 1e-12).all()  # a point and its copy, both at 0
    _, i_ref = brute(X, L, 4)  # ties go to the lower index: exactly a stable sort's choice
    np.testing.assert_array_equal(idx, i_ref)


def test_backends_agree_and_threads_do_not_change_the_answer(monkeypatch):
    rng = np.random.default_rng(1)
    X, L = rng.normal(size=(5000, 8)), rng.normal(size=(300, 8))
    monkeypatch.setattr(nb, "MAX_TILE_ROWS", 128)
    a = nearest(X, L, 10, backend="numpy", n_threads=1)
    b = nearest(X, L, 10, backend="numpy", n_threads=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    if nb._numba_kernel() is not None:
        c = nearest(X, L, 10, backend="numba", n_threads=3)
        np.testing.assert_array_equal(a[0], c[0])
        np.testing.assert_array_equal(a[1], c[1])


def test_sparse_rows_search_as_their_dense_copy():
    rng = np.random.default_rng(2)
    X = sp.random(300, 12, density=0.3, random_state=3, format="csr")
    L = rng.normal(size=(25, 12))
    d_s, i_s = nearest(X, L, 5)
    d_d, i_d = nearest(X.toarray(), L, 5)
    np.testing.assert_allclose(d_s, d_d, atol=1e-12)
    np.testing.assert_array_equal(i_s, i_d)


def test_refuses_what_it_cannot_search():
    X, L = np.zeros((3, 2)), np.ones((4, 2))
    with pytest.raises(ValueError, match=r"r must be in \[1, 4\]"):
        nearest(X, L, 5)
    with pytest.raises(ValueError, match="columns"):
        nearest(np.zeros((3, 3)), L, 1)
    with pytest.raises(ValueError, match="backend"):
        resolve_backend("faiss-gpu")


def test_graph_gram_is_z_transpose_z_on_both_routes(monkeypatch):
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    n, r, m = 3000, 6, 40
    indices = np.argsort(rng.random((n, m)), axis=1)[:, :r].astype(np.int32)
    weights = rng.random((n, r))
    weights /= weights.sum(axis=1, keepdims=True)
    Z = sp.csr_matrix((weights.ravel(), indices.ravel(), np.arange(0, n * r + 1, r)), shape=(n, m)).toarray()
    monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", 0)  # the compiled route where numba is installed
    np.testing.assert_allclose(nb.graph_gram(indices, weights, m).toarray(), Z.T @ Z, rtol=1e-12, atol=1e-15)
    monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", float("inf"))  # scipy's sparse product
    np.testing.assert_allclose(nb.graph_gram(indices, weights, m).toarray(), Z.T @ Z, rtol=1e-12, atol=1e-15)
