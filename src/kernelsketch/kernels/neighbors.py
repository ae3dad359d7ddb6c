"""Nearest landmarks: the ``r`` nearest of ``m`` points for every row, at the speed of the GEMM.

One search primitive serves every landmark graph (the spectral embedding's affinity) and
nearest-centre assignment.  Rows are cut into tiles whose ``tile x m`` block of inner products
stays in cache; each tile is one BLAS product ``X_t L^T`` and one selection that reads every
value once (a running sorted top-``r`` per row), so no ``N x m`` array and no full
``argpartition`` is ever made.  The ranking key ``||l||^2 - 2 x.l`` omits ``||x||^2`` (the same
for all of a row's candidates), which is added back to the ``r`` kept.

Backends: ``"numba"`` (the compiled selection, the ``fast`` extra) and ``"numpy"``
(``argpartition`` of the same keys).  Both compute the keys from the same tiles and return each
row's neighbours sorted by (distance, index), the lower index winning a tie, so they agree
exactly, and the choice between them (by the search's size) never changes an answer.  Tiles never
depend on the number of threads: the answer does not change with the machine's cores.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils.threads import blas_num_threads, run_claim_loops, single_threaded_blas

__all__ = ["BACKENDS", "graph_gram", "nearest", "resolve_backend"]

#: the search backends, best first
BACKENDS = ("numba", "numpy")
#: bytes of one tile's ``tile x m`` key block (about a core's L2 cache)
TILE_BYTES = 1 << 20
#: rows of a tile at least and at most (small m: tiles of many rows; the BLAS call pays off)
MIN_TILE_ROWS, MAX_TILE_ROWS = 64, 4096

#: the compiled kernels (None: not loaded yet; False: numba is not installed)
_numba_select: Any = None
_numba_gram: Any = None


def _numba_kernel():
    global _numba_select, _numba_gram
    if _numba_select is None:
        try:
            from . import _neighbors_numba
        except ImportError:
            _numba_select = _numba_gram = False
        else:
            _numba_select, _numba_gram = _neighbors_numba.smallest, _neighbors_numba.gram_add
    return _numba_select or None


def graph_gram(indices, weights, n_points: int):
    """``Z^T Z`` (CSR ``(m, m)``) of the graph whose row ``i`` joins ``indices[i]`` with ``weights[i]``.

    With numba, the ``r^2`` products of each row are added into a dense ``m x m`` array in row order
    (the sparse product costs as much as the nearest-landmark search itself); without it,
    scipy's sparse product.  The two agree to rounding.
    """
    n, r = indices.shape
    if float(n) * r * r >= GRAM_NUMBA_MIN_PRODUCTS and _numba_kernel() is not None:
        G = np.zeros((n_points, n_points))
        _numba_gram(indices, np.ascontiguousarray(weights, dtype=np.float64), G)
        return sp.csr_matrix(G)
    Z = sp.csr_matrix(
        (np.asarray(weights, dtype=np.float64).ravel(), indices.ravel(), np.arange(0, n * r + 1, r, dtype=np.int64)),
        shape=(n, n_points),
    )
    return (Z.T @ Z).tocsr()


#: searches smaller than this (rows x points) run on numpy when the backend is left to choose: loading
#: numba and its compiled selection costs ~1-3 s once per process, more than such a search takes
NUMBA_MIN_WORK = 20_000_000
#: Z^T Z of fewer products than this (rows x r^2) stays with scipy: the same reason, the same per-process cost
GRAM_NUMBA_MIN_PRODUCTS = 2_000_000


def resolve_backend(backend: str | None = None, work: float = float("inf")) -> str:
    """``backend`` checked, or (None) ``"numba"`` where installed and the search is large, else ``"numpy"``.

    Both give the same neighbours, ties included, so the choice never changes an answer.
    """
    if backend is None:
        return "numba" if work >= NUMBA_MIN_WORK and _numba_kernel() is not None else "numpy"
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} or None, got {backend!r}")
    if backend == "numba" and _numba_kernel() is None:
        raise ImportError("the 'numba' search backend needs numba (pip install 'kernelsketch[fast]')")
    return backend


def tile_rows(n_landmarks: int, itemsize: int) -> int:
    """Rows of one tile: its ``tile x m`` keys fill :data:`TILE_BYTES`, within the row bounds."""
    return int(np.clip(TILE_BYTES // max(1, n_landmarks * itemsize), MIN_TILE_ROWS, MAX_TILE_ROWS))


def _select_numpy(G, l_sq, r, keys, idx):
    K = l_sq[None, :] - 2.0 * G
    m = K.shape[1]
    part = np.argpartition(K, r - 1, axis=1)[:, :r] if r < m else np.broadcast_to(np.arange(m), K.shape)
    k = np.take_along_axis(K, part, axis=1)
    if r < m:  # a tie at the r-th place: the lower index wins, as in the numba kernel (a stable sort of that row)
        tied = np.flatnonzero(np.count_nonzero(K <= k.max(axis=1, keepdims=True), axis=1) > r)
        for i in tied:
            part[i] = np.argsort(K[i], kind="stable")[:r]
            k[i] = K[i, part[i]]
    order = np.lexsort((part, k), axis=1)  # by key, then index: the numba kernel's order
    keys[:] = np.take_along_axis(k, order, axis=1)
    idx[:] = np.take_along_axis(part, order, axis=1)


def nearest(X, L, r: int, *, l_sq=None, backend: str | None = None, n_threads: int | None = None):
    """The ``r`` nearest rows of ``L`` to each row of ``X``: ``(sq_distances, indices)``, each ``(n, r)``.

    Parameters
    ----------
    X : ndarray (n, d) or CSR
        Rows to search for (float32 stays float32; anything else is float64).
    L : ndarray (m, d)
        The points searched (landmarks, centres).
    r : int, 1 <= r <= m
    l_sq : ndarray (m,), optional
        ``||l||^2`` of ``L``'s rows in the search dtype (computed when absent).
    backend : {"numba", "numpy"} or None
        None: :func:`resolve_backend`.
    n_threads : int, optional
        Threads over tiles (default: BLAS's thread count); BLAS is pinned to one meanwhile.

    Returns
    -------
    sq_distances : ndarray (n, r), X's search dtype, >= 0, ascending along each row
    indices : ndarray (n, r) of int32; ties in distance in increasing index order

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels.neighbors import nearest
    >>> L = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    >>> d2, idx = nearest(np.array([[0.9, 0.1], [4.0, 4.0]]), L, 2)
    >>> idx.tolist()
    [[1, 0], [2, 1]]
    >>> np.round(d2, 2).tolist()
    [[0.02, 0.82], [2.0, 25.0]]
    """
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    L = np.ascontiguousarray(L, dtype=dtype)
    n, m = X.shape[0], L.shape[0]
    if not 1 <= r <= m:
        raise ValueError(f"r must be in [1, {m}] (the number of points searched), got {r}")
    if X.shape[1] != L.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but the points searched have {L.shape[1]}")
    l_sq = np.einsum("ij,ij->i", L, L) if l_sq is None else np.asarray(l_sq, dtype=dtype)
    select = _numba_kernel() if resolve_backend(backend, float(n) * m) == "numba" else _select_numpy
    keys = np.empty((n, r), dtype=dtype)
    idx = np.empty((n, r), dtype=np.int32)
    tile = tile_rows(m, np.dtype(dtype).itemsize)
    n_tiles = -(-n // tile)
    workers = max(1, min(n_threads or blas_num_threads(), n_tiles))
    LT = np.ascontiguousarray(L.T)
    sparse = sp.issparse(X)

    def piece(t, _state):
        s = slice(t * tile, min(n, (t + 1) * tile))
        Xt = X[s]
        G = np.asarray(Xt @ LT) if sparse else np.asarray(Xt, dtype=dtype) @ LT
        select(np.asarray(G, dtype=dtype), l_sq, r, keys[s], idx[s])

    with single_threaded_blas() if workers > 1 else nullcontext():
        run_claim_loops(piece, n_tiles, workers)
    if sparse:
        x_sq = np.asarray(X.multiply(X).sum(axis=1), dtype=dtype).ravel()
    else:
        Xd = np.asarray(X)
        x_sq = np.einsum("ij,ij->i", Xd, Xd, dtype=dtype) if Xd.dtype == dtype else (Xd.astype(dtype) ** 2).sum(1)
    keys += x_sq[:, None]
    np.maximum(keys, 0.0, out=keys)
    return keys, idx
