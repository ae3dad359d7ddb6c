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


def algorithm1_skpca(Z, ell):
    """Algorithm 1 of Ghashami, Perry & Phillips (SKPCA), verbatim, on precomputed feature rows ``Z``.

    ``B`` starts as ``ell`` zero rows; each row goes into a zero row; when no zero
    row is left, ``[Y, S, W] = svd(B)`` and ``B = sqrt(max(0, S^2 - S_{ell/2}^2)) W^T``.
    Returns ``(W, B)``: ``W`` (m x ell) from the last SVD (None if the buffer never
    filled) and the final ``B``.
    """
    n, m = Z.shape
    B = np.zeros((ell, m))
    W = None
    for z in Z:
        zero = np.flatnonzero(~B.any(axis=1))
        B[zero[0]] = z
        if not (~B.any(axis=1)).any():
            _, S, Wt = np.linalg.svd(B, full_matrices=False)
            W = Wt.T
            shrunk = np.sqrt(np.maximum(0.0, S**2 - S[ell // 2 - 1] ** 2))
            B = shrunk[:, None] * Wt
    return W, B
