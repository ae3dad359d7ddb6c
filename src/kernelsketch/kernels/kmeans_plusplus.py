"""Greedy k-means++ seeding (Arthur & Vassilvitskii 2007), step for step as scikit-learn's ``kmeans_plusplus``.

Every k-means of the package starts here (:func:`~kernelsketch.kernels.lloyd.kmeans_on_sample`,
:class:`~kernelsketch.cluster.StreamingKMeans`).  It is scikit-learn's algorithm (scikit-learn 1.9's
``sklearn.cluster._kmeans._kmeans_plusplus``, BSD-3-Clause): the first centre drawn uniformly, each next one the best
of ``2 + log k`` candidates drawn in proportion to the squared distance to the nearest centre so far, with the same
draws from the same ``numpy.random.RandomState`` and the same arithmetic (squared distances expanded as
``-2 x.y + |x|^2 + |y|^2``, in float64 chunks for float32 rows), so that a seed picks the same rows as
``sklearn.cluster.kmeans_plusplus`` does (tested against it).

It lives here rather than being imported because importing ``sklearn.cluster`` loads ``sklearn.metrics`` and with it
``scipy.stats``: about a second of a command-line ``cluster`` run that needs neither.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["kmeans_plusplus"]

#: rows of ``X`` per chunk of the float64 copy that float32 rows' distances are computed on
_UPCAST_ROWS = 65536


def _row_sq_norms(X):
    """Squared row norms, summed as scikit-learn's ``row_norms`` does (``einsum``; a CSR row's cells in order)."""
    if sp.issparse(X):
        X = X.tocsr()
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return np.bincount(rows, weights=X.data * X.data, minlength=X.shape[0]).astype(X.dtype, copy=False)
    return np.einsum("ij,ij->i", X, X)


def _dot_t(A, B):
    """``A @ B.T`` as a dense array."""
    out = A @ B.T
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def _sq_distances(A, X, x_norms):
    """Squared Euclidean distances of the rows of ``A`` to every row of ``X`` (``X``'s dtype), clipped at 0.

    ``x_norms``: ``X``'s squared row norms in float64 (for float32 rows, those of their float64 copy).
    """
    if X.dtype == np.float32:
        A64 = A.astype(np.float64)
        a_norms = _row_sq_norms(A64)[:, None]
        out = np.empty((A.shape[0], X.shape[0]), dtype=np.float32)
        for start in range(0, X.shape[0], _UPCAST_ROWS):
            stop = min(start + _UPCAST_ROWS, X.shape[0])
            d = -2 * _dot_t(A64, X[start:stop].astype(np.float64))
            d += a_norms
            d += x_norms[None, start:stop]
            out[:, start:stop] = d
    else:
        out = -2 * _dot_t(A, X)
        out += _row_sq_norms(A)[:, None]
        out += x_norms[None, :]
    np.maximum(out, 0, out=out)
    return out


def _upcast_norms(X):
    """Float64 squared row norms of float32 ``X``, chunk by chunk (no float64 copy of all of it)."""
    return np.concatenate(
        [_row_sq_norms(X[s : s + _UPCAST_ROWS].astype(np.float64)) for s in range(0, X.shape[0], _UPCAST_ROWS)]
    )


def kmeans_plusplus(X, n_clusters, *, random_state, n_local_trials=None):
    """Greedy k-means++ centres of the rows of ``X`` (dense or CSR, float32 or float64).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Finite rows (checked by the caller).
    n_clusters : int
        Centres to choose, at most ``n_samples``.
    random_state : int or numpy.random.RandomState
        Seeds the draws (an int: ``RandomState(random_state)``, as scikit-learn's ``check_random_state``).
    n_local_trials : int, optional
        Candidates per centre; default ``2 + int(log(n_clusters))``.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features), ``X``'s dtype
    indices : ndarray of shape (n_clusters,)
        The rows the centres are (``X[indices] == centers``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [10.0, 10.0], [10.1, 10.0]])
    >>> centers, indices = kmeans_plusplus(X, 2, random_state=0)
    >>> sorted(int(i) // 2 for i in indices)  # one centre in each pair
    [0, 1]
    """
    n_samples, n_features = X.shape
    if not 1 <= n_clusters <= n_samples:
        raise ValueError(f"n_clusters={n_clusters} must be between 1 and the number of rows ({n_samples})")
    if isinstance(random_state, np.random.RandomState):
        rs = random_state
    elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        rs = np.random.RandomState(random_state)
    else:
        raise TypeError(f"random_state must be an int or a numpy RandomState; got {type(random_state).__name__}")
    if sp.issparse(X):
        X = X.tocsr()
    if n_local_trials is None:
        n_local_trials = 2 + int(np.log(n_clusters))
    weight = np.ones(n_samples, dtype=X.dtype)
    x_norms = _upcast_norms(X) if X.dtype == np.float32 else _row_sq_norms(X)

    def row(i):
        return X[[i]].toarray()[0] if sp.issparse(X) else X[i]

    centers = np.empty((n_clusters, n_features), dtype=X.dtype)
    indices = np.full(n_clusters, -1, dtype=int)
    center_id = rs.choice(n_samples, p=weight / weight.sum())
    centers[0] = row(center_id)
    indices[0] = center_id
    closest = _sq_distances(X[[center_id]], X, x_norms)
    current_pot = closest @ weight
    for c in range(1, n_clusters):
        # candidates drawn in proportion to the squared distance to the nearest centre so far
        rand_vals = rs.uniform(size=n_local_trials) * current_pot
        candidate_ids = np.searchsorted(np.cumsum(weight * closest), rand_vals)
        np.clip(candidate_ids, None, closest.size - 1, out=candidate_ids)  # (rounding can point past the end)
        dist = _sq_distances(X[candidate_ids], X, x_norms)
        np.minimum(closest, dist, out=dist)
        candidates_pot = dist @ weight.reshape(-1, 1)
        best = np.argmin(candidates_pot)
        current_pot = candidates_pot[best]
        closest = dist[best]
        centers[c] = row(candidate_ids[best])
        indices[c] = candidate_ids[best]
    return centers, indices
