"""Plain dense reference implementations, written for clarity, not speed.

Tests compare the optimised code against these: every pair of points is
handled explicitly in float64, with no GEMM tricks.
"""

import numpy as np
import scipy.sparse as sp


def _dense64(A):
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)


def naive_kernel(X, Y, name, bandwidth=1.0, degree=3, gamma=None, coef0=1.0):
    X, Y = _dense64(X), _dense64(Y)
    diff = X[:, None, :] - Y[None, :, :]
    if name == "gaussian":
        return np.exp(-np.sum(diff**2, axis=2) / bandwidth**2)
    if name == "laplacian":
        return np.exp(-np.sum(np.abs(diff), axis=2) / bandwidth)
    if name == "cauchy":
        return np.prod(1.0 / (1.0 + diff**2 / bandwidth**2), axis=2)
    if name == "polynomial":
        g = 1.0 / X.shape[1] if gamma is None else gamma
        return (g * X @ Y.T + coef0) ** degree
    if name == "linear":
        return X @ Y.T
    raise ValueError(name)


def naive_centered(K):
    n = K.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    return H @ K @ H
