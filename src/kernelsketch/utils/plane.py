"""A 2-D view of rows for a scatter plot: the rows themselves when they have two columns, else their PCA plane.

What ``kernelsketch cluster --plot`` draws: the data, coloured by cluster, never an embedding coordinate (the
spectral embedding's first component is constant on a connected graph, so clusters would stack on a line).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def two_d_view(X, feature_names=None):
    """``(P, (x label, y label))``: ``X``'s two columns, or its rows on their top two principal axes.

    Parameters
    ----------
    X : ndarray or CSR of shape (n, d)
        The rows to show (a sample; this is O(n d min(n, d))).
    feature_names : sequence of str, optional
        Column names, for the axes of a two-column ``X``.

    Returns
    -------
    P : ndarray of shape (n, 2)
    labels : tuple of two str
        ``"column a"`` / ``"column b"``, or ``"PC1 (62% of the variance)"``; a constant column is plotted as
        zeros and so labelled.

    Examples
    --------
    >>> import numpy as np
    >>> P, axes = two_d_view(np.random.default_rng(0).normal(size=(100, 5)) * [5, 1, 1, 1, 1])
    >>> P.shape, axes[0].startswith("PC1")
    ((100, 2), True)
    """
    n, d = X.shape
    if d <= 2:
        A = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        names = list(feature_names) if feature_names is not None else [f"column {j}" for j in range(d)]
        P = np.zeros((n, 2))
        P[:, :d] = A
        return P, (names[0], names[1] if d == 2 else "(one column)")
    if sp.issparse(X):
        from scipy.sparse.linalg import svds

        mean = np.asarray(X.mean(axis=0)).ravel()
        A = X.toarray() - mean if X.shape[0] * X.shape[1] <= 5e7 else None
        if A is None:  # (too wide to densify: the top singular vectors of the uncentred rows)
            _, s, Vt = svds(X.astype(np.float64), k=2)
            order = np.argsort(s)[::-1]
            P = np.asarray(X @ Vt[order].T)
            return P, ("SVD 1", "SVD 2")
    else:
        A = np.asarray(X, dtype=np.float64)
        A = A - A.mean(axis=0)
    _, s, Vt = np.linalg.svd(A, full_matrices=False)
    total = float(np.sum(s**2))
    share = s[:2] ** 2 / total if total > 0 else np.zeros(2)
    P = A @ Vt[:2].T
    return P, tuple(f"PC{i + 1} ({share[i]:.0%} of the variance)" for i in range(2))
