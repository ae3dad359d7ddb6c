"""Lloyd's k-means, the numerics: nearest centres, a Lloyd step's statistics, in-memory iterations, seeding.

The one k-means of the package.  :class:`~kernelsketch.cluster.StreamingKMeans` streams it over
blocks of any size (its seeding on a sample is :func:`kmeans_on_sample`, its passes sum
:func:`lloyd_statistics` over blocks), and the k-means landmark selection
(:class:`~kernelsketch.maps.landmark_selection.KMeansLandmarks`, U-SPEC's hybrid selection) is
:func:`kmeans_on_sample` of a sample of rows.  Every assignment is the nearest-point search of
:mod:`kernelsketch.kernels.neighbors` (``r = 1``, or ``r = 2`` for Hamerly's bounds).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..utils.threads import blas_num_threads, run_claim_loops
from ..utils.validation import check_input
from .kmeans_plusplus import kmeans_plusplus
from .neighbors import nearest_centre as _assign
from .neighbors import search_origin
from .neighbors import two_nearest_centres as _two_nearest

__all__ = ["assign", "assign_graph_with_statistics", "assign_with_statistics", "kmeans_on_sample", "lloyd_statistics"]

#: Lloyd iterations on the seeding sample
SAMPLE_MAX_ITER = 300
#: rows of the subsample on which ``n_init > 1`` starts are compared (at least 50 per cluster)
SUBSAMPLE_ROWS = 5000


def _sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _sums(X, labels, k):
    """Per-cluster sums of the rows of X (float64), through a sparse one-hot matrix."""
    n = X.shape[0]
    onehot = sp.csr_matrix((np.ones(n), labels, np.arange(n + 1)), shape=(n, k))
    out = onehot.T @ X
    return np.asarray(out.toarray() if sp.issparse(out) else out, dtype=np.float64)


def lloyd_statistics(X, centers, search=None):
    """One Lloyd step's sufficient statistics of the rows of ``X``.

    Parameters
    ----------
    X : ndarray or CSR of shape (n, d)
    centers : ndarray of shape (k, d)
    search : searcher object, optional
        The nearest-centre search (:func:`assign`).

    Returns
    -------
    sums : ndarray (k, d), float64
        Sum of the rows assigned to each centre.
    counts : ndarray (k,), float64
        Rows assigned to each centre.
    inertia : float
        Sum of squared distances of the rows to their nearest centre.

    Notes
    -----
    Statistics of disjoint blocks add up, so a pass over any blocking of the
    data (or a Dask reduction) gives the same sums, up to the order of the
    floating-point additions.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [9.0], [11.0]])
    >>> sums, counts, inertia = lloyd_statistics(X, np.array([[0.0], [10.0]]))
    >>> sums.ravel().tolist(), counts.tolist(), inertia
    ([1.0, 20.0], [2.0, 2.0], 3.0)
    """
    _labels, dist, sums, counts = assign_with_statistics(X, centers, search)
    return sums, counts, float(dist.sum())


def assign(X, centers, search=None):
    """Nearest centre of every row of ``X``: ``(labels int64, squared distances float64)``.

    Dense rows far from the origin (map coordinates, timestamps: :func:`~kernelsketch.kernels.neighbors.search_origin`
    of the centres) are measured from the centres' mean, so the expanded distance keeps its digits.
    ``search``: a searcher object (:mod:`kernelsketch.kernels.search`) built on the centres instead of
    the package's tiled GEMM.
    """
    if search is not None:
        d2, idx = _search_centres(search, X, centers, 1)
        return idx[:, 0].astype(np.int64), d2[:, 0]
    labels = np.empty(X.shape[0], dtype=np.int64)
    dist = np.empty(X.shape[0], dtype=X.dtype)
    origin = None if sp.issparse(X) else search_origin(np.asarray(centers), X.dtype)
    if origin is not None:
        X = np.array(X, order="C", copy=True)
        X -= origin
        centers = np.asarray(centers, dtype=np.float64) - origin
    _assign(X, centers, labels, dist)
    return labels, np.maximum(dist.astype(np.float64) + _sq_norms(X), 0.0)


def assign_with_statistics(X, centers, search=None):
    """Nearest centre of every row and the statistics of that assignment.

    Returns ``(labels, squared distances, per-cluster sums, counts)``: the
    assignment step (:func:`assign`) and the sums of the next update step of
    Lloyd's algorithm in one pass over ``X``.
    """
    k = centers.shape[0]
    labels, sq = assign(X, centers, search)
    return labels, sq, _sums(X, labels, k), np.bincount(labels, minlength=k).astype(np.float64)


#: rows of one piece of :func:`assign_graph_with_statistics` (its sums are summed piece by piece, in order)
GRAPH_ASSIGN_PIECE_ROWS = 8192


def assign_graph_with_statistics(indices, weights, P, centers, dtype=np.float64):
    """:func:`assign_with_statistics` of the rows ``Z @ P`` of a landmark graph, without forming them.

    ``Z``'s row ``i`` joins ``indices[i]`` with ``weights[i]`` (the input of
    :func:`~kernelsketch.kernels.neighbors.graph_embed`); each embedded row is computed as ``graph_embed``
    computes it (float64), rounded to ``dtype`` (the embedding a float32 run keeps), and assigned to its
    nearest centre in that dtype, as :func:`assign_with_statistics` of the stored embedding would (up to
    the rounding of the distances' sums, which only a near-tie can feel).  One compiled sweep on row
    pieces over the BLAS threads; the sums are summed piece by piece in row order, so they do not depend
    on the number of threads.  Without numba: the embedding, then :func:`assign_with_statistics`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels.neighbors import graph_embed
    >>> rng = np.random.default_rng(0)
    >>> idx, w, P = rng.integers(0, 50, size=(1000, 5)), rng.random((1000, 5)), rng.normal(size=(50, 3))
    >>> C = rng.normal(size=(4, 3))
    >>> labels, sq, sums, counts = assign_graph_with_statistics(idx, w, P, C)
    >>> ref = assign_with_statistics(graph_embed(idx, w, P), C)
    >>> bool((labels == ref[0]).all() and np.allclose(sums, ref[2]) and (counts == ref[3]).all())
    True
    """
    from .neighbors import _numba_kernel, graph_embed

    dtype = np.dtype(dtype)
    if _numba_kernel() is None:
        return assign_with_statistics(graph_embed(indices, weights, P).astype(dtype, copy=False), centers)
    from ._neighbors_numba import graph_assign

    P = np.ascontiguousarray(P, dtype=np.float64)
    C = np.ascontiguousarray(centers, dtype=dtype)
    if C.ndim != 2 or C.shape[1] != P.shape[1]:
        raise ValueError(f"centers must have {P.shape[1]} columns (the embedding's), got shape {C.shape}")
    c_sq = np.einsum("ij,ij->i", C, C)
    indices = np.ascontiguousarray(indices)
    weights = np.ascontiguousarray(weights)
    if weights.dtype not in (np.float32, np.float64):
        weights = weights.astype(np.float64)
    n, k = indices.shape[0], C.shape[0]
    labels = np.empty(n, dtype=np.int64)
    sq = np.empty(n)
    n_pieces = max(1, -(-n // GRAPH_ASSIGN_PIECE_ROWS))
    sums = np.zeros((n_pieces, k, P.shape[1]))
    counts = np.zeros((n_pieces, k))

    def piece(t, _state):
        s = slice(t * GRAPH_ASSIGN_PIECE_ROWS, min(n, (t + 1) * GRAPH_ASSIGN_PIECE_ROWS))
        graph_assign(indices[s], weights[s], P, C, c_sq, labels[s], sq[s], sums[t], counts[t])

    run_claim_loops(piece, n_pieces, max(1, min(blas_num_threads(), n_pieces)))
    return labels, sq, sums.sum(axis=0), counts.sum(axis=0)


def _search_centres(search, X, centers, r):
    """``(squared distances float64, indices)`` of the ``r`` nearest centres by a searcher object."""
    from .search import built_searcher, checked_search

    k = centers.shape[0]
    if sp.issparse(X) and not getattr(search, "accepts_sparse", False):
        X = X.toarray()
    d2, idx = checked_search(built_searcher(search, centers), X, r, k, np.float64)
    return d2.astype(np.float64, copy=False), idx


def _two_nearest_by(search, X, centers, x_sq):
    """:func:`two_nearest_centres` (``(labels, d1, d2)``, distances), by a searcher object when one is given."""
    if search is None:
        return _two_nearest(X, centers, x_sq)
    r = min(2, centers.shape[0])
    d2, idx = _search_centres(search, X, centers, r)
    second = np.sqrt(d2[:, 1]) if r == 2 else np.full(X.shape[0], np.inf)
    return idx[:, 0].astype(np.int64), np.sqrt(d2[:, 0]), second


def _lloyd_in_memory(X, centers, *, max_iter, tol_abs, search=None):
    """Lloyd iterations on an in-memory matrix; returns ``(centers, inertia, n_iter)``.

    Stops when no label changes or the squared centre shift is at most
    ``tol_abs`` (scikit-learn's rules).  Each assignment step is Lloyd's, made
    cheap by Hamerly's bounds: a row whose upper bound on the distance to its
    centre is below both half the distance from that centre to the next one
    and a lower bound on the distance to every other centre cannot change
    label, so only the other rows get their distances recomputed (one GEMM on
    the gathered rows).  The bounds are widened by the rounding error of the
    expanded distance, so the labels are those of plain Lloyd.  Sums are
    updated from the rows whose label changed.  An empty cluster takes the
    row farthest from its centre (as scikit-learn does).

    References
    ----------
    G. Hamerly. Making k-means even faster. SDM 2010.
    """
    n, k = X.shape[0], centers.shape[0]
    centers = np.array(centers, dtype=np.float64)
    x_sq = np.asarray(_sq_norms(X), dtype=np.float64)
    # absolute rounding error of a distance from the expanded form, generously
    eps = np.finfo(X.dtype).eps
    slack = 8.0 * np.sqrt(eps * (x_sq.max() + float((centers**2).sum(axis=1).max()) + 1e-300))
    labels, upper, lower = _two_nearest_by(search, X, centers, x_sq)
    sums = _sums(X, labels, k)
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        new = _centers_from(sums, counts, centers)
        move = np.sqrt(((new - centers) ** 2).sum(axis=1))
        shift = float((move**2).sum())
        centers = new
        slack = max(slack, 8.0 * np.sqrt(eps * (x_sq.max() + float((centers**2).sum(axis=1).max()))))
        # bounds after the move
        upper += move[labels]
        if k > 1:
            order = np.argsort(move)
            top, second = order[-1], order[-2]
            lower -= move[top]
            lower[labels == top] += move[top] - move[second]
            half = 0.5 * np.sqrt(_nearest_other_sq(centers))
            bound = np.maximum(half[labels], lower)
            bound -= 2.0 * slack
            cand = np.flatnonzero(upper > bound)
        else:
            cand = np.empty(0, dtype=np.int64)
        if cand.size:
            old = labels[cand]
            lab_c, up_c, low_c = _two_nearest_by(search, X[cand], centers, x_sq[cand])
            labels[cand], upper[cand], lower[cand] = lab_c, up_c, low_c
            changed = lab_c != old
            moved = cand[changed]
        else:
            moved = cand
        if moved.size > n // 4:
            sums = _sums(X, labels, k)
        elif moved.size:
            # rows leaving a cluster count -1 there and +1 in their new one: one small GEMM
            delta = np.zeros((moved.size, k))
            rows = np.arange(moved.size)
            delta[rows, labels[moved]] = 1.0
            delta[rows, old[changed]] = -1.0
            Xm = X[moved]
            sums += np.asarray(Xm.T @ delta).T if sp.issparse(Xm) else delta.T @ Xm
        counts = np.bincount(labels, minlength=k).astype(np.float64)
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            # relocate empty clusters to the rows farthest from their centres, then recompute everything
            far = np.argsort(upper)[::-1][: empty.size]
            centers[empty] = X[far].toarray() if sp.issparse(X) else X[far]
            labels, upper, lower = _two_nearest_by(search, X, centers, x_sq)
            sums, counts = _sums(X, labels, k), np.bincount(labels, minlength=k).astype(np.float64)
            continue
        if moved.size == 0 or shift <= tol_abs:
            break
    if search is not None:
        labels, sq = assign(X, centers, search)
        return centers, float(sq.sum()), n_iter
    dist = np.empty(n, dtype=X.dtype)
    _assign(X, centers, labels, dist)
    return centers, float(np.maximum(dist.astype(np.float64) + x_sq, 0.0).sum()), n_iter


#: centres up to this many: their pairwise distances from the differences; beyond, from one GEMM
_DIRECT_PAIRS_MAX_CENTRES = 64


def _nearest_other_sq(centers):
    """Each centre's squared distance to its nearest other centre, never above the true one.

    Few centres: from the differences (``k^2 d`` values).  Many (a thousand k-means landmarks):
    from the expanded form ``|a|^2 + |b|^2 - 2 a.b`` (one GEMM), lowered by a bound on its
    rounding error, so that Hamerly's test stays conservative (a bound too low only recomputes
    more rows; the labels are those of plain Lloyd either way).
    """
    k, d = centers.shape
    if k <= _DIRECT_PAIRS_MAX_CENTRES:
        cc = ((centers[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    else:
        sq = np.einsum("ij,ij->i", centers, centers)
        cc = sq[:, None] + sq[None, :] - 2.0 * (centers @ centers.T)
        cc -= 4.0 * (d + 2) * np.finfo(np.float64).eps * (sq[:, None] + sq[None, :])
        np.maximum(cc, 0.0, out=cc)
    np.fill_diagonal(cc, np.inf)
    return cc.min(axis=1)


def _centers_from(sums, counts, previous):
    """``sums / counts``; a centre that received no row keeps its previous position."""
    new = np.array(previous, dtype=np.float64, copy=True)
    got = counts > 0
    new[got] = sums[got] / counts[got, None]
    return new


def _mean_variance(X):
    """Mean over features of the per-feature variance (the scale of ``tol``)."""
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
        return float(np.mean(np.maximum(sq - mean**2, 0.0)))
    # two passes (the mean, then the squared deviations, in row chunks): E[x^2] - E[x]^2 would lose
    # every digit of the variance of a column far from 0 (timestamps, map coordinates)
    mean = X.mean(axis=0, dtype=np.float64)
    ss = np.zeros(X.shape[1])
    for start in range(0, X.shape[0], _VARIANCE_CHUNK_ROWS):
        D = X[start : start + _VARIANCE_CHUNK_ROWS] - mean
        ss += np.einsum("ij,ij->j", D, D)
    return float(np.mean(ss / X.shape[0]))


#: rows a chunk of :func:`_mean_variance`'s deviations (a bounded float64 copy)
_VARIANCE_CHUNK_ROWS = 65536


def kmeans_on_sample(sample, k, rng, *, n_init=1, tol=1e-4, max_iter=SAMPLE_MAX_ITER, search=None):
    """k-means of an in-memory ``sample``: k-means++ and Lloyd, the best of ``n_init`` starts.

    Several starts are compared on a subsample of ``max(5000, 50 k)`` rows (cheap) and the best
    one is refined on the whole sample.  Every draw comes from ``rng`` (a Generator), so the same
    generator state gives the same centres.  Returns ``(centers, n_iter, tol_abs)``: the centres
    (float64), the Lloyd iterations of the final refinement and the absolute tolerance used
    (``tol`` times the sample's mean per-feature variance, scikit-learn's convention).  A dense sample
    far from the origin (:func:`~kernelsketch.kernels.neighbors.search_origin`) is clustered moved to
    its mean (the centres are returned where the rows are).  ``search``: a searcher object
    (:mod:`kernelsketch.kernels.search`) for every nearest-centre step instead of the package's own.
    """
    sample = check_input(sample, accept_sparse=("csr",), name="sample")
    if sample.shape[0] < k:
        raise ValueError(f"n_clusters={k} must be <= the number of rows ({sample.shape[0]})")
    origin = None if sp.issparse(sample) else search_origin(sample, np.float64)
    if origin is not None:
        # far from the origin (map coordinates, timestamps): k-means of the rows moved to their mean, as
        # scikit-learn's KMeans centres its data, so that no expanded distance loses the offset's digits
        sample = np.asarray(sample, dtype=np.float64) - origin
        centers, n_iter, tol_abs = kmeans_on_sample(
            sample, k, rng, n_init=n_init, tol=tol, max_iter=max_iter, search=search
        )
        return centers + origin, n_iter, tol_abs
    tol_abs = tol * _mean_variance(sample)
    n_sub = max(SUBSAMPLE_ROWS, 50 * k)
    trial = sample
    if n_init > 1 and sample.shape[0] > 2 * n_sub:
        trial = sample[np.sort(rng.choice(sample.shape[0], n_sub, replace=False))]
    best = None
    for _ in range(n_init):
        seed = int(rng.integers(0, 2**31 - 1))
        init, _ = kmeans_plusplus(trial, k, random_state=seed)
        centers, inertia, n_iter = _lloyd_in_memory(
            trial, np.asarray(init, dtype=np.float64), max_iter=max_iter, tol_abs=tol_abs, search=search
        )
        if best is None or inertia < best[1]:
            best = (centers, inertia, n_iter)
    if trial is not sample:
        best = _lloyd_in_memory(sample, best[0], max_iter=max_iter, tol_abs=tol_abs, search=search)
    return best[0], best[2], tol_abs
