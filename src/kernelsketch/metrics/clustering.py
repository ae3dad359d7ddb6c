"""Rand index and adjusted Rand index between two clusterings.

Thin validated wrappers over :func:`sklearn.metrics.rand_score` and
:func:`sklearn.metrics.adjusted_rand_score` (the Kernel JL paper scores its
kernel k-means experiments with them).
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import adjusted_rand_score, rand_score

__all__ = ["adjusted_rand_index", "rand_index"]


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
    return float(adjusted_rand_score(t, p))
