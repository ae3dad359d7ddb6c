"""Clustering scores: against true classes, and label-free.

:func:`rand_index` and :func:`adjusted_rand_index` are thin validated wrappers
over :func:`sklearn.metrics.rand_score` and
:func:`sklearn.metrics.adjusted_rand_score` (the Kernel JL paper scores its
kernel k-means experiments with them).  :func:`relative_eigengap` and
:func:`embedding_silhouette` need no labels: they are what the clustering
estimators' ``score`` returns, for choosing ``k`` and the bandwidth.
"""

from __future__ import annotations

import numpy as np

__all__ = ["adjusted_rand_index", "embedding_silhouette", "rand_index", "relative_eigengap"]


def _check_labels(labels_true, labels_pred):
    out = []
    for name, labels in (("labels_true", labels_true), ("labels_pred", labels_pred)):
        if labels is None:
            raise TypeError(f"{name} is None; expected a 1-D array of cluster labels")
        arr = np.asarray(labels)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
        if arr.shape[0] == 0:
            raise ValueError(f"{name} is empty; a clustering needs at least one sample")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinity; every sample needs a label")
        if arr.dtype.kind == "c":
            raise TypeError(f"{name} has complex dtype {arr.dtype}")
        out.append(arr)
    if out[0].shape[0] != out[1].shape[0]:
        raise ValueError(f"labels_true has {out[0].shape[0]} samples but labels_pred has {out[1].shape[0]}")
    return out


def rand_index(labels_true, labels_pred):
    """Rand index: the fraction of sample pairs on which two clusterings agree.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n,)
        Cluster labels (any hashable values; label names do not matter).

    Returns
    -------
    score : float in [0, 1]
        1 for identical partitions.

    Notes
    -----
    ``RI = (a + b) / C(n, 2)`` with ``a`` the pairs together in both
    clusterings and ``b`` the pairs apart in both.  O(n + k_1 k_2) via the
    contingency table (:func:`sklearn.metrics.rand_score`).  With ``n = 1``
    there are no pairs and the score is 1 by convention.

    References
    ----------
    W. M. Rand. Objective criteria for the evaluation of clustering methods.
    JASA 66(336), 1971.

    Examples
    --------
    >>> from kernelsketch.metrics import rand_index
    >>> round(rand_index([0, 0, 1, 1], [0, 0, 1, 2]), 4)  # 5 of 6 pairs agree
    0.8333
    """
    t, p = _check_labels(labels_true, labels_pred)
    from sklearn.metrics import rand_score  # (on use: sklearn.metrics loads scipy.stats)

    return float(rand_score(t, p))


def adjusted_rand_index(labels_true, labels_pred):
    """Adjusted Rand index: the Rand index corrected for chance (Hubert & Arabie).

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n,)

    Returns
    -------
    score : float in [-0.5, 1]
        1 for identical partitions, ~0 in expectation for random labels.

    Notes
    -----
    ``ARI = (sum_ij C(n_ij, 2) - E) / (M - E)`` with ``n_ij`` the contingency
    table, ``M = (sum_i C(a_i, 2) + sum_j C(b_j, 2)) / 2`` and
    ``E = sum_i C(a_i, 2) sum_j C(b_j, 2) / C(n, 2)``
    (:func:`sklearn.metrics.adjusted_rand_score`).

    References
    ----------
    L. Hubert, P. Arabie. Comparing partitions. Journal of Classification 2, 1985.

    Examples
    --------
    >>> from kernelsketch.metrics import adjusted_rand_index
    >>> round(adjusted_rand_index([0, 0, 1, 1], [0, 0, 1, 2]), 4)  # 4/7
    0.5714
    """
    t, p = _check_labels(labels_true, labels_pred)
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(t, p))


def relative_eigengap(eigenvalues, k, *, offset=0.05):
    """Label-free quality of ``k`` clusters from a normalized affinity's spectrum.

    Parameters
    ----------
    eigenvalues : array-like
        The largest eigenvalues ``lambda_1 >= lambda_2 >= ...`` of a normalized
        affinity (row sums 1, so ``lambda_1 = 1``), at least ``k + 1`` of them.
    k : int >= 1
        The number of clusters scored.
    offset : float >= 0, default=0.05
        ``tau`` below.

    Returns
    -------
    gap : float in [0, 1]
        ``(mu_{k+1} - mu_k) / (mu_{k+1} + tau)`` with ``mu = 1 - lambda`` the normalized
        Laplacian's eigenvalues; 0 when there is no ``k+1``-th eigenvalue.

    Notes
    -----
    ``k`` well separated groups make ``mu_1 .. mu_k`` nearly 0 and ``mu_{k+1}`` not
    (von Luxburg 2007, Section 8.3).  The plain gap ``mu_{k+1} - mu_k`` grows with the
    spread of the whole spectrum, which a looser graph or a larger ``k`` widens, so it
    tends to pick large ``k``; the pure ratio ``1 - mu_k / mu_{k+1}`` (``tau = 0``) is
    scale-free but is 1 for every ``k`` up to the number of disconnected pieces and
    favours the coarsest split.  ``tau`` blends the two: a gap counts in proportion to
    where it starts, and gaps among near-zero ``mu`` (noise-sized pieces) do not dominate.
    ``tau = 0.05`` is the value that picked the true ``k`` most often across the labelled
    sets of the clustering-quality benchmark (``benchmarks/results/cluster-quality.md``
    reports how often).

    Examples
    --------
    >>> from kernelsketch.metrics import relative_eigengap
    >>> round(relative_eigengap([1.0, 0.99, 0.5, 0.45], 2), 3)   # two groups, then a jump
    0.891
    """
    lam = np.asarray(eigenvalues, dtype=np.float64).ravel()
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if not (isinstance(offset, (int, float, np.floating)) and np.isfinite(offset) and offset >= 0):
        raise ValueError(f"offset must be a finite number >= 0, got {offset!r}")
    if not np.all(np.isfinite(lam)):
        raise ValueError("eigenvalues contain NaN or infinity")
    if lam.size <= k:
        return 0.0
    mu_k, mu_next = max(1.0 - lam[k - 1], 0.0), max(1.0 - lam[k], 0.0)
    den = mu_next + offset
    if not den > 0:
        return 0.0
    return float(np.clip((mu_next - mu_k) / den, 0.0, 1.0))


def embedding_silhouette(embedding, labels, *, sample_size=2000, random_state=0):
    """Mean silhouette of clustered rows in their embedding, on a seeded sample of rows.

    Parameters
    ----------
    embedding : array-like (n, d)
        The rows as the clusterer sees them (its ``transform``).
    labels : array-like (n,)
        Their clusters.
    sample_size : int, default=2000
        Rows scored (all when ``n`` is smaller): the silhouette costs ``O(s^2 d)``.
    random_state : int, default=0
        Seeds the sample, so that settings compared in a grid search see the same rows.

    Returns
    -------
    score : float in [-1, 1]
        :func:`sklearn.metrics.silhouette_score`; higher is better.  -1 when every row
        is in one cluster (no partition to score).

    Notes
    -----
    The silhouette ``(b - a) / max(a, b)`` is a ratio of distances, so it does not
    change with the embedding's scale, and unlike the k-means objective it does not
    improve by itself as ``k`` grows: a grid search can compare bandwidths, ranks
    and ``k`` with it.

    References
    ----------
    P. J. Rousseeuw. Silhouettes: a graphical aid to the interpretation and validation
    of cluster analysis. J. Comput. Appl. Math. 20, 1987.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import embedding_silhouette
    >>> E = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> round(embedding_silhouette(E, [0, 0, 1, 1]), 3)
    0.98
    """
    from sklearn.metrics import silhouette_score

    E = np.asarray(embedding, dtype=np.float64)
    labels = np.asarray(labels)
    if E.ndim != 2 or labels.ndim != 1 or E.shape[0] != labels.shape[0]:
        raise ValueError(f"embedding (n, d) and labels (n,) must match, got {E.shape} and {labels.shape}")
    if E.shape[0] == 0:
        raise ValueError("no rows to score")
    if not np.all(np.isfinite(E)):
        raise ValueError("embedding contains NaN or infinity")
    n = E.shape[0]
    if n > sample_size:
        idx = np.sort(np.random.default_rng(random_state).choice(n, sample_size, replace=False))
        E, labels = E[idx], labels[idx]
    n_labels = np.unique(labels).size
    if n_labels < 2:
        return -1.0
    if n_labels >= E.shape[0]:
        return 0.0
    return float(silhouette_score(E, labels))
