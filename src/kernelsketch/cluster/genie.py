"""Genie: single linkage that keeps cluster sizes from growing too unequal (Gagolewski, Bartoszuk & Cena 2016).

The minimum spanning tree's edges are merged lightest first, as single linkage merges them, except that
while the Gini index of the cluster sizes is above ``gini_threshold`` the merge must involve a cluster of the
smallest size (the lightest unused tree edge that touches one).  A point far from the rest, which single
linkage leaves as a cluster of its own until the end, is merged early; a long chain of close points stays one
cluster.  ``gini_threshold=1`` is single linkage.

The default clustering uses it on its ``m`` landmarks (:mod:`kernelsketch.cluster.landmark_labels`): ``O(m^2 d)``
for the distances and the tree, ``O(m)`` vectorized work per merge, a few tens of milliseconds for a thousand
landmarks.  Written from the paper's description; its labels equal those of the reference implementation
(``genieclust.Genie(n_clusters, gini_threshold=g)``, in the ``bench`` extra) wherever the tree's edge weights
are distinct (a test compares them); equal weights may be merged in another order.

References
----------
M. Gagolewski, M. Bartoszuk, A. Cena. Genie: A new, fast, and outlier-resistant hierarchical clustering
algorithm. Information Sciences 363, 2016.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["genie_labels", "minimum_spanning_tree"]

#: up to this many rows the tree is built from the full distance matrix (pdist's exact distances); above, each
#: point's distances are computed as it joins (``|x|^2 - 2 x.y + |y|^2``, no ``m x m`` matrix)
DENSE_MST_ROWS = 3000

#: the Gini index of cluster sizes above which a merge must involve a smallest cluster (the paper's default)
GINI_THRESHOLD = 0.3


def minimum_spanning_tree(X):
    """The Euclidean minimum spanning tree of the rows of ``X``: ``(u, v, weight)``, ``m - 1`` edges, lightest first.

    Prim's algorithm on the ``m x m`` distances (``O(m^2)`` memory, as the landmarks' ``Z^T Z``, up to
    :data:`DENSE_MST_ROWS` rows; above, each point's distances computed as it joins, ``O(m d)`` memory; one
    vectorized ``O(m)`` update per point added).  Ties in weight are ordered by their endpoints, so the result is a
    function of ``X``; coincident rows are joined by edges of weight 0.
    """
    from scipy.spatial.distance import pdist, squareform

    X = np.asarray(X, dtype=np.float64)
    m = X.shape[0]
    u = np.empty(max(m - 1, 0), dtype=np.int64)
    v = np.empty_like(u)
    w = np.empty(u.size)
    if m < 2:
        return u, v, w
    if m <= DENSE_MST_ROWS:
        D = squareform(pdist(X))
        row = D.__getitem__
    else:  # (each point's distances computed when it joins the tree: O(m d) memory, not O(m^2))
        sq = np.einsum("ij,ij->i", X, X)

        def row(j):
            return np.sqrt(np.maximum(sq - 2.0 * (X @ X[j]) + sq[j], 0.0))

    best = row(0).copy()  # each point's distance to the tree so far
    parent = np.zeros(m, dtype=np.int64)
    best[0] = np.inf
    done = np.zeros(m, dtype=bool)
    done[0] = True
    for e in range(m - 1):
        j = int(np.argmin(best))
        u[e], v[e], w[e] = min(parent[j], j), max(parent[j], j), best[j]
        done[j] = True
        best[j] = np.inf
        dj = row(j)
        closer = (dj < best) & ~done
        best[closer] = dj[closer]
        parent[closer] = j
    order = np.lexsort((v, u, w))
    return u[order], v[order], w[order]


def genie_labels(X, n_clusters, *, gini_threshold=GINI_THRESHOLD):
    """Genie's partition of the rows of ``X`` into ``n_clusters``: labels ``0 .. n_clusters - 1`` (int64).

    Parameters
    ----------
    X : array-like (m, d)
        Finite rows (the default clustering passes its landmarks).
    n_clusters : int in [1, m]
    gini_threshold : float in [0, 1], default=0.3
        1 is single linkage; lower values force more equal cluster sizes.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [0.4], [5.0], [5.1], [5.2], [5.3], [5.4], [50.0]])
    >>> genie_labels(X, 2, gini_threshold=1.0).tolist()  # single linkage: the far point alone
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    >>> genie_labels(X, 2).tolist()  # Genie: the two groups, the far point merged into the nearer one early
    [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    m, k = X.shape[0], int(n_clusters)
    if not 1 <= k <= m:
        raise ValueError(f"n_clusters must be in [1, {m}] (the number of rows), got {n_clusters}")
    if not 0.0 <= float(gini_threshold) <= 1.0:
        raise ValueError(f"gini_threshold must be in [0, 1], got {gini_threshold}")
    u, v, _ = minimum_spanning_tree(X)
    owner = np.arange(m)  # each point's cluster (the id of one of its points)
    size = np.ones(m, dtype=np.int64)  # by cluster id; 0 once merged away
    compiled = _compiled_merges()
    if compiled is not None:
        compiled(u, v, k, float(gini_threshold), owner, size)
    else:
        _merges(u, v, k, float(gini_threshold), owner, size)
    return np.unique(owner, return_inverse=True)[1].astype(np.int64)


def _compiled_merges():
    """The compiled merge loop (:mod:`kernelsketch.cluster._genie_numba`) where numba is already loaded in this
    process, else None: numba's import (a third of a second) costs more than the NumPy loop's thousand merges
    (a tenth of a second for the default's landmarks); the labels are the same either way."""
    if "numba" not in sys.modules:
        return None
    try:
        from ._genie_numba import merges
    except ImportError:  # pragma: no cover - numba loaded but broken
        return None
    return merges


def _merges(u, v, k, gini_threshold, owner, size):
    """Genie's ``m - k`` merges of the tree ``(u, v)`` into ``owner`` and ``size`` (the NumPy loop: ``O(m)``
    vectorized work per merge)."""
    m = owner.size
    used = np.zeros(u.size, dtype=bool)
    clusters = m
    # Gini numerator sum_{i<j} |c_i - c_j| over the current sizes, kept up to date merge by merge
    pairs = 0.0
    nxt = 0  # the lightest edge not used yet
    for _ in range(m - k):
        alive = size[size > 0]
        gini = pairs / ((clusters - 1) * m) if clusters > 1 else 0.0
        if gini > gini_threshold:
            smallest = alive.min()
            touches = (size[owner[u]] == smallest) | (size[owner[v]] == smallest)
            e = int(np.flatnonzero(touches & ~used)[0])
        else:
            while used[nxt]:
                nxt += 1
            e = nxt
        used[e] = True
        a, b = owner[u[e]], owner[v[e]]
        if size[a] < size[b] or (size[a] == size[b] and b < a):
            a, b = b, a
        sa, sb = size[a], size[b]
        # sizes change: sa and sb leave, sa + sb joins
        pairs -= np.abs(alive - sa).sum() + np.abs(alive - sb).sum() - abs(sa - sb)
        rest = np.concatenate([alive[alive != sa], alive[alive == sa][1:]])  # alive without one sa ...
        rest = np.concatenate([rest[rest != sb], rest[rest == sb][1:]])  # ... and one sb
        pairs += np.abs(rest - (sa + sb)).sum()
        owner[owner == b] = a
        size[a], size[b] = sa + sb, 0
        clusters -= 1
