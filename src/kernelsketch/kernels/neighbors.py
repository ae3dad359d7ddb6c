"""Nearest landmarks: the ``r`` nearest of ``m`` points for every row, at the speed of the GEMM.

One module of searches serves every landmark graph (the spectral embedding's affinity:
:func:`nearest`, or U-SPEC's :func:`approximate_nearest`) and k-means' nearest-centre
assignment (:func:`nearest_centre`, :func:`two_nearest_centres`: few points, one GEMM a tile).

The exact search cuts rows into tiles whose ``tile x m`` block of inner products stays in cache;
each tile is one BLAS product ``X_t L^T`` and one selection that reads every
value once (a running sorted top-``r`` per row), so no ``N x m`` array and no full
``argpartition`` is ever made.  The ranking key ``||l||^2 - 2 x.l`` omits ``||x||^2`` (the same
for all of a row's candidates), which is added back to the ``r`` kept.

That expanded form loses the digits of a distance to the square of the data's offset from the
origin (map coordinates near 5e6 in float32, Unix times near 1e9 in float64).  So every search
measures from :func:`search_origin` of the points searched: their mean when it lies further from
the origin than their spread, else the origin itself (no shift, no copy).  A common offset then
changes no answer beyond the dtype's resolution of the data's spread.

Backends: ``"numba"`` (the compiled selection, the ``fast`` extra) and ``"numpy"``
(``argpartition`` of the same keys).  Both compute the keys from the same tiles and return each
row's neighbours sorted by (distance, index), the lower index winning a tie, so they agree
exactly, and the choice between them (by the search's size) never changes an answer.  Tiles never
depend on the number of threads: the answer does not change with the machine's cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ..utils.chunking import get_chunk_n_rows
from ..utils.threads import blas_num_threads, parallel_rows, run_claim_loops, run_pieces, single_threaded_blas
from .tiled_gemm import tile_bytes

__all__ = [
    "BACKENDS",
    "SearchIndex",
    "approximate_nearest",
    "approximate_nearest_settled",
    "build_search_index",
    "graph_csr",
    "graph_embed",
    "graph_gram",
    "graph_gram_pieces",
    "nearest",
    "nearest_centre",
    "resolve_backend",
    "search_origin",
    "two_nearest_centres",
]

#: the search backends, best first
BACKENDS = ("numba", "numpy")
#: bytes of one tile's ``tile x m`` key block (about a core's L2 cache)
TILE_BYTES = 1 << 20
#: rows of a tile at least and at most (small m: tiles of many rows; the BLAS call pays off)
MIN_TILE_ROWS, MAX_TILE_ROWS = 64, 4096

#: the compiled kernels (None: not loaded yet; False: numba is not installed)
_numba_select: Any = None
_numba_gram: Any = None
_numba_coarse: Any = None
_numba_embed: Any = None


def _numba_kernel():
    global _numba_select, _numba_gram, _numba_coarse, _numba_embed
    if _numba_select is None:
        try:
            from ..utils.numba_cache import announce_compile

            announce_compile()  # (a first run compiles, seconds, once: the command line says so)
            from . import _neighbors_numba
        except ImportError:
            _numba_select = _numba_gram = _numba_coarse = _numba_embed = False
        else:
            _numba_select, _numba_gram = _neighbors_numba.smallest, _neighbors_numba.gram_add
            _numba_coarse, _numba_embed = _neighbors_numba.coarse_to_fine, _neighbors_numba.graph_embed
    return _numba_select or None


def graph_gram(indices, weights, n_points: int, degrees=None, out=None):
    """``Z^T Z`` (``(m, m)``: dense on the numba route, CSR on scipy's) of the graph whose row ``i`` joins
    ``indices[i]`` with ``weights[i]``; with ``degrees`` (float64 ``(m,)``), ``Z^T 1`` (each point's sum
    of weights, ``np.bincount``'s numbers) is added into it in the same sweep.  With ``out`` (float64
    ``(m, m)``, C-contiguous), ``Z^T Z`` is added into it and it is returned: on the numba route each entry
    continues its sum in row order, so rows added call by call give the numbers of one call on them all.

    With numba, the ``r^2`` products of each row are added into a dense ``m x m`` array in row order
    (the sparse product costs as much as the nearest-landmark search itself); a block of at least
    :data:`GRAM_SPLIT_ROWS` rows is split by landmark, not by row: two threads each read every row
    and add the products of their half of ``Z^T Z``'s rows into one array (each thread's half stays in
    cache, and every entry is still summed in row order, so the answer is the one thread's, bit for
    bit, for any number of threads).  Without numba, scipy's sparse product.  The routes agree to rounding.
    """
    n, r = indices.shape
    if float(n) * r * r >= GRAM_NUMBA_MIN_PRODUCTS and _numba_kernel() is not None:
        G = np.zeros((n_points, n_points)) if out is None else out
        run_pieces(graph_gram_pieces(indices, weights, n_points, degrees, G))
        return G
    if degrees is not None:
        degrees += np.bincount(indices.ravel(), weights=np.asarray(weights).ravel(), minlength=n_points)
    Z = graph_csr(indices, weights, n_points, dtype=np.float64)
    if out is not None:
        out += (Z.T @ Z).toarray()
        return out
    return (Z.T @ Z).tocsr()


def graph_gram_pieces(indices, weights, n_points: int, degrees, out) -> list:
    """:func:`graph_gram` ``(indices, weights, n_points, degrees, out=out)`` as independent calls (no
    argument, no result) to run on several threads: the two landmark halves of the numba route (one
    piece under :data:`GRAM_SPLIT_ROWS` rows), or scipy's product.  Together they give ``graph_gram``'s
    numbers, in any order and on any threads (they write disjoint rows of ``out``).
    """
    n, r = indices.shape
    if float(n) * r * r >= GRAM_NUMBA_MIN_PRODUCTS and _numba_kernel() is not None:
        float32 = np.asarray(weights).dtype == np.float32  # (summed in float64 all the same)
        weights = np.ascontiguousarray(weights, dtype=np.float32 if float32 else np.float64)
        sums = np.zeros(n_points) if degrees is None else degrees
        cut = [0, n_points] if n < GRAM_SPLIT_ROWS else [0, n_points // 2, n_points]
        return [lambda lo=lo, hi=hi: _numba_gram(indices, weights, out, sums, lo, hi) for lo, hi in pairwise(cut)]
    return [lambda: graph_gram(indices, weights, n_points, degrees, out=out)]


def graph_csr(indices, weights, n_points: int, dtype=None):
    """``Z``: CSR ``(n, n_points)`` whose row ``i`` holds ``weights[i]`` at columns ``indices[i]`` (``r`` a row),
    its values in ``dtype`` (default: the weights')."""
    n, r = indices.shape
    values = np.asarray(weights, dtype=dtype).ravel()
    return sp.csr_matrix((values, indices.ravel(), np.arange(0, n * r + 1, r, dtype=np.int64)), shape=(n, n_points))


def graph_embed(indices, weights, P):
    """``Z @ P`` (float64 ``(n, k)``) for the graph whose row ``i`` joins ``indices[i]`` with ``weights[i]``.

    The compiled route adds each row's ``w_a P[j_a]`` in pair order from 0, as scipy's CSR product does
    (the same numbers: each product and sum rounded once, no fused multiply-add), on row ranges on the
    BLAS threads; without numba (or for few rows), scipy's product.
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    n, r = indices.shape
    out = np.empty((n, P.shape[1]))
    if float(n) * r >= GRAM_NUMBA_MIN_PRODUCTS and _numba_kernel() is not None:
        weights = np.asarray(weights)
        if weights.dtype not in (np.float32, np.float64):
            weights = weights.astype(np.float64)
        parallel_rows(lambda i, w, o: _numba_embed(i, w, P, o), indices, weights, out)
        return out

    def product(i, w, o):
        o[...] = graph_csr(i, w, P.shape[0]) @ P

    parallel_rows(product, indices, weights, out)
    return out


#: the numpy approximate search gathers every row's candidates at once when ``c x d`` is at most this
_GATHER_MAX_VALUES = 8192
#: values of one gathered chunk (rows x c x d)
_GATHER_CHUNK_VALUES = 1 << 21
#: blocks of at least this many rows sum their ``Z^T Z`` on two threads (a half of its rows each)
GRAM_SPLIT_ROWS = 20_000
#: searches smaller than this (rows x points) run on numpy when the backend is left to choose: loading
#: numba and its compiled selection costs seconds once per process, more than such a search takes
#: (benchmarks/results/design-measurements.md)
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


def search_origin(L, dtype=None):
    """The point a search of the rows of ``L`` measures from: ``(d,)`` in ``dtype`` (default ``L``'s), or None.

    The mean of ``L``'s rows when it lies further from the origin than their spread (``||mean||^2``
    above the mean squared distance of a row to the mean, both in float64), else None: the search
    runs on ``x - o`` and ``l - o``, whose squared norms are of the order of the spread, not of the
    offset.  None (data about the origin, e.g. standardized) leaves every number as it was.  The
    same points give the same origin, so rows and landmarks are moved alike in every call and process.

    Examples
    --------
    >>> import numpy as np
    >>> search_origin(np.array([[1e9, 0.0], [1e9 + 2.0, 2.0]])).tolist()
    [1000000001.0, 1.0]
    >>> search_origin(np.array([[-1.0, 0.0], [1.0, 0.5]])) is None
    True
    """
    L = L.toarray() if sp.issparse(L) else np.asarray(L)
    dtype = L.dtype if dtype is None else np.dtype(dtype)
    if L.shape[0] == 0:
        return None
    mean = L.mean(axis=0, dtype=np.float64)
    spread = float(((L - mean) ** 2).sum(axis=1).mean()) if L.shape[0] > 1 else 0.0
    if not float(mean @ mean) > spread:
        return None
    return mean.astype(dtype)


def _moved(X, origin, dtype):
    """``X - origin`` in ``dtype`` (a new C-contiguous array), or ``X`` in ``dtype`` when ``origin`` is None."""
    if origin is None:
        return X
    Y = np.array(X, dtype=dtype, order="C", copy=True)
    Y -= origin
    return Y


def _select_numpy(G, l_sq, r, keys, idx):
    """Each row's ``r`` smallest keys ``l_sq - 2 G`` in (key, column) order (``l_sq``: (m,) or one per entry)."""
    K = (l_sq[None, :] if l_sq.ndim == 1 else l_sq) - 2.0 * G
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
        ``||l||^2`` of ``L``'s rows in the search dtype (computed when absent, and recomputed when the
        search measures from :func:`search_origin` of ``L``).
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
    sparse = sp.issparse(X)
    origin = None if sparse else search_origin(L, dtype)
    if origin is not None:  # far from the origin: measured from the points' mean (l_sq is then of the moved L)
        X, L, l_sq = _moved(X, origin, dtype), _moved(L, origin, dtype), None
    l_sq = np.einsum("ij,ij->i", L, L) if l_sq is None else np.asarray(l_sq, dtype=dtype)
    select = _numba_kernel() if resolve_backend(backend, float(n) * m) == "numba" else _select_numpy
    keys = np.empty((n, r), dtype=dtype)
    idx = np.empty((n, r), dtype=np.int32)
    tile = tile_rows(m, np.dtype(dtype).itemsize)
    n_tiles = -(-n // tile)
    workers = max(1, min(n_threads or blas_num_threads(), n_tiles))
    LT = np.ascontiguousarray(L.T)

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


# -- the approximate search (U-SPEC's coarse-to-fine) ---------------------------------------------
#: the candidate neighbourhood of a landmark: its ``CANDIDATE_FACTOR r + 1`` nearest landmarks (10 r + 1
#: before 0.2: 5 r + 1 passed the same rule on the labelled sets' tuning half, with the search ~35 % faster;
#: ``benchmarks/results/approximate-search.md``)
CANDIDATE_FACTOR = 5
#: Lloyd steps grouping the landmarks (U-SPEC: 20)
GROUP_ITER = 20
#: the numba kernel copies each landmark's candidates into a contiguous block up to this size (else gathers)
_CANDIDATE_BLOCKS_BYTES = 1 << 28
#: rows of one call of the compiled approximate search: it visits them in order of their nearest landmark,
#: so the more rows, the more of them share a landmark's candidate block while it is in cache; the fewer,
#: the more evenly the calls (and the ``also`` work beside them) spread over the threads; 4,096 left the
#: threads least idle on the 5M x 20 job (benchmarks/results/design-measurements.md)
APPROXIMATE_TILE_ROWS = 4096


class SearchIndex(NamedTuple):
    """The landmarks grouped for :func:`approximate_nearest` (built by :func:`build_search_index`).

    ``centres`` (z, d): the groups' means; ``members`` (m,) int32: landmark indices group by group,
    ascending within a group, group ``g`` being ``members[offsets[g]:offsets[g + 1]]``;
    ``candidates`` (m, c) int32: each landmark's ``c`` nearest landmarks (itself included),
    nearest first.  ``layouts`` caches the compiled kernel's copies of the landmarks, per dtype.
    """

    centres: np.ndarray
    members: np.ndarray
    offsets: np.ndarray
    candidates: np.ndarray
    layouts: dict


def build_search_index(L, r: int) -> SearchIndex:
    """Group the ``m`` landmarks ``L`` for :func:`approximate_nearest` of ``r`` neighbours (U-SPEC's recipe).

    ``floor(sqrt(m))`` groups by :data:`GROUP_ITER` Lloyd steps started from evenly spaced
    landmarks (no random draw: the same landmarks give the same index in every process), and
    each landmark's ``min(m, CANDIDATE_FACTOR r + 1)`` (``5 r + 1``) nearest landmarks by the exact search.  Costs
    ``O(m^2 d)`` once; a few milliseconds for a thousand landmarks.
    """
    L = np.ascontiguousarray(L, dtype=np.float64)
    m = L.shape[0]
    if not 1 <= r <= m:
        raise ValueError(f"r must be in [1, {m}] (the number of landmarks), got {r}")
    z = max(1, int(np.sqrt(m)))
    C = L[np.linspace(0, m - 1, z).round().astype(np.int64)].copy()
    for _ in range(GROUP_ITER):
        g = nearest(L, C, 1, backend="numpy")[1][:, 0]
        counts = np.bincount(g, minlength=z)
        used = counts > 0
        new = C.copy()
        for k in range(L.shape[1]):  # one column at a time, in row order: the same sums in every process
            new[used, k] = np.bincount(g, weights=L[:, k], minlength=z)[used] / counts[used]
        if np.array_equal(new, C):
            break
        C = new
    g = nearest(L, C, 1, backend="numpy")[1][:, 0]
    keep = np.flatnonzero(np.bincount(g, minlength=z) > 0)  # groups left empty are dropped
    relabel = np.full(z, -1, dtype=np.int64)
    relabel[keep] = np.arange(keep.size)
    g = relabel[g]
    members = np.argsort(g, kind="stable").astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(g, minlength=keep.size))]).astype(np.int64)
    c = min(m, CANDIDATE_FACTOR * r + 1)
    candidates = nearest(L, L, c, backend="numpy")[1]  # nearest first: the kernel's threshold tightens early
    return SearchIndex(np.ascontiguousarray(C[keep]), members, offsets, np.ascontiguousarray(candidates), {})


#: the compiled search's vector width: every dot-product width is padded to a multiple of it, so that no
#: dot product falls to the scalar remainder of the vectorized loop (8 lanes, unrolled 4 times)
_KERNEL_LANES = 32


def _round_up(n, k=_KERNEL_LANES):
    return -(-int(n) // k) * k


def _kernel_layout(index, L, C):
    """The numba kernel's copies, made once per index and dtype.

    ``(C^T, c_sq, groups^T, candidates, candidates^T, cand_sq)``: each group's landmarks transposed, padded to
    the largest group (the kernel compares a group's own columns only); the candidates padded to a multiple of
    :data:`_KERNEL_LANES` with ``+inf`` squared norms (never kept), so that no dot product of a row with its
    candidates falls to the scalar remainder of the vectorized loop.
    """
    key = (L.dtype.str, L.shape)
    if key not in index.layouts:
        z, d = C.shape
        CT = np.ascontiguousarray(C.T, dtype=L.dtype)
        c_sq = (C * C).sum(axis=1).astype(L.dtype)
        sizes = np.diff(index.offsets)
        padded = np.zeros((z, sizes.max()), dtype=np.int64)  # (padding: landmark 0, never compared)
        for g, (lo, size) in enumerate(zip(index.offsets[:-1], sizes, strict=True)):
            padded[g, :size] = index.members[lo : lo + size]
        groupT = np.ascontiguousarray(L[padded].transpose(0, 2, 1))
        m, c = index.candidates.shape
        candidates = np.zeros((m, _round_up(c)), dtype=np.int32)  # (padding: landmark 0 at +inf, never kept)
        candidates[:, :c] = index.candidates
        cand_sq = np.full(candidates.shape, np.inf, dtype=L.dtype)
        cand_sq[:, :c] = (L * L).sum(axis=1)[index.candidates]
        if m * candidates.shape[1] * d * L.itemsize <= _CANDIDATE_BLOCKS_BYTES:
            candT = np.ascontiguousarray(L[candidates].transpose(0, 2, 1))
            candT[:, :, c:] = 0.0
        else:
            candT = np.empty((0, d, candidates.shape[1]), dtype=L.dtype)
        index.layouts.clear()  # one dtype at a time: the copies are as large as m x (5 r + 1) x d
        index.layouts[key] = (CT, c_sq, groupT, candidates, candT, cand_sq)
    return index.layouts[key]


def _seq_dots(X, PT):
    """``X @ PT`` for ``X`` (n, d) and ``PT`` (d, c), each sum in coordinate order (the numba kernel's arithmetic)."""
    acc = X[:, :1] * PT[0]
    for k in range(1, X.shape[1]):
        acc += X[:, k : k + 1] * PT[k]
    return acc


def _coarse_to_fine_numpy(X, L, l_sq, C, c_sq, members, offsets, candidates, r, keys, idx, n_threads=None):
    """The numpy version of the numba kernel ``coarse_to_fine``: the same keys, the same neighbours.

    Rows are taken group by group, then by their landmark ``p`` (rows sharing ``p`` share its
    candidates), each dot product summed in coordinate order as the kernel does.
    """
    Sg = _seq_dots(X, np.ascontiguousarray(C.T))
    g = np.argmin(c_sq[None, :] - (Sg + Sg), axis=1)  # the first of equal keys: the lowest index
    p = np.empty(X.shape[0], dtype=np.int64)
    order = np.argsort(g, kind="stable")
    bounds = np.searchsorted(g[order], np.arange(C.shape[0] + 1))
    for h in range(C.shape[0]):
        rows = order[bounds[h] : bounds[h + 1]]
        if rows.size:
            mem = members[offsets[h] : offsets[h + 1]]
            S = _seq_dots(X[rows], np.ascontiguousarray(L[mem].T))
            p[rows] = mem[np.argmin(l_sq[mem][None, :] - (S + S), axis=1)]
    c, d = candidates.shape[1], X.shape[1]
    cand_asc = np.sort(candidates, axis=1)  # ascending: the selection's tie rule (the lower index) is column order
    if c * d <= _GATHER_MAX_VALUES:
        # few columns: every row's candidates gathered at once, chunk by chunk (one numpy call per column)
        LT = np.ascontiguousarray(L.T)
        step = max(1, _GATHER_CHUNK_VALUES // (c * d))
        n_chunks = -(-X.shape[0] // step)

        def piece(t, _state):
            rows = slice(t * step, min(X.shape[0], (t + 1) * step))
            cand = cand_asc[p[rows]]
            S = X[rows, :1] * LT[0][cand]
            for k in range(1, d):
                S += X[rows, k : k + 1] * LT[k][cand]
            _select_numpy(S, l_sq[cand], r, keys[rows], idx[rows])  # keys l_sq - 2 S: the kernel's l_sq - (S + S)
            idx[rows] = np.take_along_axis(cand, idx[rows].astype(np.int64), axis=1)

        run_claim_loops(piece, n_chunks, max(1, min(n_threads or blas_num_threads(), n_chunks)))
        return
    order = np.argsort(p, kind="stable")
    bounds = np.searchsorted(p[order], np.arange(L.shape[0] + 1))
    used = np.flatnonzero(np.diff(bounds))

    def piece_of(t, _state):  # many columns: the rows of one landmark p, which share its candidates
        q = used[t]
        rows = order[bounds[q] : bounds[q + 1]]
        cand = cand_asc[q]
        S = _seq_dots(X[rows], np.ascontiguousarray(L[cand].T))
        k_rows, i_rows = np.empty((rows.size, r), dtype=keys.dtype), np.empty((rows.size, r), dtype=np.int32)
        _select_numpy(S, l_sq[cand], r, k_rows, i_rows)
        keys[rows] = k_rows
        idx[rows] = cand[i_rows]

    run_claim_loops(piece_of, used.size, max(1, min(n_threads or blas_num_threads(), used.size)))


def approximate_nearest(
    X, L, r: int, index: SearchIndex, *, backend: str | None = None, n_threads=None, also: Sequence = ()
):
    """U-SPEC's approximate ``r`` nearest rows of ``L``: ``(sq_distances, indices)``, as :func:`nearest`'s.

    Coarse to fine (Huang et al., TKDE 2020): each row's nearest group centre, that group's
    nearest landmark ``p``, then the ``r`` nearest among ``p``'s candidate neighbourhood (its
    ``5 r + 1`` nearest landmarks); about ``sqrt(m) + m / sqrt(m) + 5 r`` distances a row
    instead of ``m``.  The neighbours found are exact distances, but not always the ``r``
    nearest: a landmark outside the candidate neighbourhood is missed (the recall of every
    labelled set is in ``benchmarks/results/approximate-search.md``).  The answer of a row
    depends on that row alone (no BLAS, sums in coordinate order), so it is the same for any
    blocks, threads or engine, and both backends give the same neighbours.  Dense input only.
    ``also``: independent calls (no argument) run on the same threads as the search's tiles, claimed
    first, so that other work (the previous block's ``Z^T Z``) fills the
    threads the tiles leave idle; all are done when this returns.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels.neighbors import approximate_nearest, build_search_index, nearest
    >>> rng = np.random.default_rng(0)
    >>> L, X = rng.normal(size=(400, 3)), rng.normal(size=(1000, 3))
    >>> _, approx = approximate_nearest(X, L, 5, build_search_index(L, 5))
    >>> _, exact = nearest(X, L, 5)
    >>> float(np.mean([len(set(a) & set(b)) / 5 for a, b in zip(approx, exact)])) > 0.9
    True
    """
    keys, idx, _ = _approximate(X, L, r, index, backend, n_threads, also, None)
    return keys, idx


def approximate_nearest_settled(X, L, r: int, index: SearchIndex, settled, *, n_threads=None):
    """:func:`approximate_nearest` with each row's first-sweep landmark ``p``: ``(sq_distances, indices, p)``; a
    row whose ``p`` has ``settled[p] >= 0`` skips the second sweep, and its distances and indices are
    undefined (its caller needs ``p`` alone); a row whose nearest group has every landmark settled alike skips
    the scan of the group too, and its ``p`` is the group's first landmark (settled as the nearest one is).
    ``settled``: ``(m,)`` int64.  None without numba (the numpy backend finds no ``p``): the caller searches every
    row in full instead.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels.neighbors import build_search_index
    >>> rng = np.random.default_rng(0)
    >>> L, X = rng.normal(size=(400, 3)), rng.normal(size=(1000, 3))
    >>> index = build_search_index(L, 5)
    >>> d2, idx, p = approximate_nearest_settled(X, L, 5, index, np.full(400, -1))
    >>> bool((idx == approximate_nearest(X, L, 5, index)[1]).all())
    True
    """
    if _numba_kernel() is None:
        return None
    return _approximate(X, L, r, index, "numba", n_threads, (), np.ascontiguousarray(settled, dtype=np.int64))


def _approximate(X, L, r, index, backend, n_threads, also, settled):
    """:func:`approximate_nearest`'s work: ``(keys, indices, p)``, ``p`` None on the numpy backend."""
    if sp.issparse(X):
        raise TypeError("the approximate nearest-landmark search takes dense rows; use the exact search for CSR")
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    X = np.ascontiguousarray(X, dtype=dtype)
    L = np.ascontiguousarray(L, dtype=dtype)
    n, m = X.shape[0], L.shape[0]
    if X.shape[1] != L.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but the points searched have {L.shape[1]}")
    if index.candidates.shape[0] != m or index.centres.shape[1] != L.shape[1]:
        raise ValueError("the search index was built for other landmarks")
    r_max = index.candidates.shape[1]
    if not 1 <= r <= r_max:
        raise ValueError(f"r must be in [1, {r_max}] (the candidate neighbourhood of the index), got {r}")
    C: np.ndarray = np.ascontiguousarray(index.centres, dtype=dtype)
    origin = search_origin(L)
    if origin is not None:  # far from the origin: rows, landmarks and group centres measured from their mean
        X, L, C = _moved(X, origin, dtype), _moved(L, origin, dtype), _moved(C, origin, dtype)
    l_sq = (L * L).sum(axis=1)
    skipping = settled is not None  # (a skipped row's keys stay 0, its indices 0: defined, never read)
    keys = np.zeros((n, r), dtype=dtype) if skipping else np.empty((n, r), dtype=dtype)
    idx = np.zeros((n, r), dtype=np.int32) if skipping else np.empty((n, r), dtype=np.int32)
    use_numba = resolve_backend(backend, float(n) * m) == "numba"
    nearest_p = np.empty(n, dtype=np.int64) if use_numba else None
    if settled is None:
        settled = group_settled = np.empty(0, dtype=np.int64)
    else:  # a group whose landmarks are all settled alike: its rows need no scan of the group
        ranks = settled[index.members]
        low = np.minimum.reduceat(ranks, index.offsets[:-1])
        group_settled = np.where(low == np.maximum.reduceat(ranks, index.offsets[:-1]), low, -1).astype(np.int64)
    if use_numba:
        kernel = _numba_coarse
        CT, c_sq, groupT, candidates, candT, cand_sq = _kernel_layout(index, L, C)
        tile = APPROXIMATE_TILE_ROWS
        n_tiles = -(-n // tile)
        extra = list(also)

        def piece(t, _state):
            if t < len(extra):
                extra[t]()
                return
            t -= len(extra)
            s = slice(t * tile, min(n, (t + 1) * tile))
            kernel(
                X[s],
                L,
                l_sq,
                CT,
                c_sq,
                groupT,
                index.members,
                index.offsets,
                candidates,
                candT,
                cand_sq,
                r,
                keys[s],
                idx[s],
                settled,
                group_settled,
                nearest_p[s],
            )

        n_pieces = len(extra) + n_tiles
        run_claim_loops(piece, n_pieces, max(1, min(n_threads or blas_num_threads(), n_pieces)))
    else:
        run_pieces(also, n_threads)
    if not use_numba and n:
        c_sq = (C * C).sum(axis=1)
        _coarse_to_fine_numpy(
            X, L, l_sq, C, c_sq, index.members, index.offsets, index.candidates, r, keys, idx, n_threads
        )
    if skipping and use_numba:  # the rows searched alone get their norms (a skipped row's keys stay 0)
        live = np.flatnonzero(settled[nearest_p] < 0)
        if live.size < n:
            if live.size:
                part = keys[live] + np.einsum("ij,ij->i", X[live], X[live])[:, None]
                keys[live] = np.maximum(part, 0.0, out=part)
            return keys, idx, nearest_p
    keys += np.einsum("ij,ij->i", X, X)[:, None]
    np.maximum(keys, 0.0, out=keys)
    return keys, idx, nearest_p


# -- few points: k-means' nearest centre -----------------------------------------------------------
#: columns of a tile of ``X^T``: its distances and its slice of ``X^T`` stay in a core's L2 cache
def _tile_cols(n_features, itemsize):
    return max(256, tile_bytes() // max(1, n_features * itemsize))


def nearest_centre(X, centers, labels, dist=None, XT=None):
    """Nearest centre of every row of ``X`` into ``labels`` (and ``||x - c||^2 - ||x||^2`` into ``dist``).

    The search with ``r = 1`` for few points: k-means' assignment step
    (:class:`~kernelsketch.cluster.StreamingKMeans`).

    Distances use the expanded form ``-2 c x^T + ||c||^2`` in X's dtype.  Dense
    X is handled as ``X^T`` (``XT``: a C-contiguous transposed copy, made here
    unless given), because ``C @ X^T`` with few centres runs about twice as fast
    in OpenBLAS as ``X @ C^T``; its column tiles go to every core with BLAS
    pinned to one thread per tile, as the kernel blocks do.
    """
    n = X.shape[0]
    if sp.issparse(X):
        C = np.asarray(centers, dtype=X.dtype)
        c_sq = np.einsum("ij,ij->i", C, C)
        step = max(1, get_chunk_n_rows(8 * (C.shape[0] + 2), n))
        for start in range(0, n, step):
            rows = slice(start, min(n, start + step))
            D = np.asarray(X[rows] @ C.T)
            D *= -2.0
            D += c_sq
            labels[rows] = np.argmin(D, axis=1)
            if dist is not None:
                dist[rows] = D[np.arange(D.shape[0]), labels[rows]]
        return
    if XT is None:
        XT = np.ascontiguousarray(X.T)
    C = np.ascontiguousarray(centers, dtype=XT.dtype)
    c_sq = np.einsum("ij,ij->i", C, C)[:, None]
    tile = _tile_cols(XT.shape[0], XT.dtype.itemsize)
    n_tiles = -(-n // tile)

    def piece(i, _):
        cols = slice(i * tile, min(n, (i + 1) * tile))
        D = C @ XT[:, cols]
        D *= -2.0
        D += c_sq
        lab = np.argmin(D, axis=0)
        labels[cols] = lab
        if dist is not None:
            dist[cols] = D[lab, np.arange(D.shape[1])]

    if n_tiles == 1:
        piece(0, None)
        return
    with single_threaded_blas():
        run_claim_loops(piece, n_tiles, blas_num_threads())


def two_nearest_centres(X, centers, x_sq):
    """Nearest and second-nearest centre of each row: ``(labels, d1, d2)``, distances (not squared).

    The search with ``r = 2`` in float64 that Hamerly's bounds of the in-memory Lloyd iterations need.
    """
    k = centers.shape[0]
    C = np.asarray(centers, dtype=np.float64)
    D = np.asarray(X @ C.T, dtype=np.float64)
    D *= -2.0
    D += np.einsum("ij,ij->i", C, C)[None, :]
    D += x_sq[:, None]
    np.maximum(D, 0.0, out=D)
    rows = np.arange(D.shape[0])
    labels = np.argmin(D, axis=1)
    d1 = D[rows, labels]
    if k > 1:
        D[rows, labels] = np.inf
        d2 = D.min(axis=1)
    else:
        d2 = np.full(D.shape[0], np.inf)
    return labels, np.sqrt(d1), np.sqrt(d2)
