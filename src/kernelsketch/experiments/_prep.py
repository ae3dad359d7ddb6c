"""Data preparation shared by the reproductions (one implementation; seeds are in :mod:`._seeds`)."""

from __future__ import annotations

import numpy as np


def zscore(X, *others):
    """z-score the columns of ``X`` (constant columns are left at 0), and ``others`` with X's mean and std.

    Returns the standardized ``X`` alone, or a tuple ``(X, *others)`` when others are given
    (a held-out set scaled with the training columns' statistics).

    Examples
    --------
    >>> import numpy as np
    >>> zscore(np.array([[1.0, 5.0], [3.0, 5.0]]))
    array([[-1.,  0.],
           [ 1.,  0.]])
    >>> zscore(np.array([[1.0], [3.0]]), np.array([[5.0]]))[1]
    array([[3.]])
    """
    X = np.asarray(X, dtype=np.float64)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd == 0] = 1.0
    if not others:
        return (X - mu) / sd
    return ((X - mu) / sd, *((np.asarray(Y, dtype=np.float64) - mu) / sd for Y in others))
