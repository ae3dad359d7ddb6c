"""Nystroem additional approximation error and eigengaps (Mahdavi, Yang & Jin).

For a kernel matrix ``K`` (n x n, PSD) with eigenvalues
``lambda_1 >= lambda_2 >= ...`` and its best rank-r approximation ``K_r``, the
rank-r Nystroem approximation from landmarks ``D_hat = {x_hat_1..x_hat_m}`` is

    K_hat_r = K_b W_r^+ K_b^T,   K_b = [k(x_i, x_hat_j)] (n x m),
    W_r^+ = sum_{i <= r} u_i u_i^T / lambda_hat_i,

with ``(lambda_hat_i, u_i)`` the top-r eigenpairs of ``W = K(D_hat, D_hat)``.
The paper studies the *additional* approximation error

    ||K - K_hat_r||_F - ||K - K_r||_F  (>= 0 by Eckart-Young)

against the eigengap ``lambda_r - lambda_{r+1}`` (their Figure 1).  The
approximation is built here from that formula; the Nystroem estimator of
:mod:`kernelsketch.maps` is deliberately not used (metrics sit beside the
estimators and must not depend on them).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator

from ..kernels.blocks import pairwise_kernel
from ..kernels.gram_operator import GramOperator
from ..utils.eigen import top_eigenpairs
from ..utils.validation import check_random_state
from ._inputs import check_method, check_positive_int, check_tol, data_float64, resolve_kernel
from .gram_errors import _BLOCKED_MAX_N, _dense_fits, _frobenius_sums

__all__ = [
    "NystroemErrors",
    "additional_approximation_error",
    "additional_approximation_error_dense",
    "eigengaps",
    "nystroem_errors",
    "nystroem_factor",
    "top_eigen",
]


class NystroemErrors(NamedTuple):
    """Frobenius errors of a rank-r Nystroem approximation (all unnormalised).

    Attributes
    ----------
    additional_error : float
        ``||K - K_hat_r||_F - ||K - K_r||_F``.
    nystroem_error : float
        ``||K - K_hat_r||_F``.
    best_rank_r_error : float
        ``||K - K_r||_F = sqrt(sum_{i > r} lambda_i^2)``.
    eigenvalues : ndarray of shape (r + 1,)
        ``lambda_1 >= ... >= lambda_{r+1}`` of ``K``.
    eigengap : float
        ``lambda_r - lambda_{r+1}``.
    """

    additional_error: float
    nystroem_error: float
    best_rank_r_error: float
    eigenvalues: np.ndarray
    eigengap: float


def eigengaps(eigenvalues):
    """Consecutive eigengaps ``lambda_r - lambda_{r+1}``, r = 1 .. len - 1.

    Parameters
    ----------
    eigenvalues : array-like of shape (p,), p >= 2
        Eigenvalues in any order; they are sorted in descending order first.

    Returns
    -------
    gaps : ndarray of shape (p - 1,)
        ``gaps[r - 1] = lambda_r - lambda_{r+1}`` (all ``>= 0``).  The paper's
        normalised gap is ``gaps / N`` for an N x N kernel matrix.

    References
    ----------
    M. Mahdavi, T. Yang, R. Jin. An improved bound for the Nystrom method for
    large eigengap. arXiv:1209.0001, 2012.

    Examples
    --------
    >>> from kernelsketch.metrics import eigengaps
    >>> eigengaps([5.0, 1.0, 3.0, 0.5])
    array([2. , 2. , 0.5])
    """
    w = np.asarray(eigenvalues)
    if w.ndim != 1:
        raise ValueError(f"eigenvalues must be 1-D, got shape {w.shape}")
    if w.shape[0] < 2:
        raise ValueError(f"eigengaps need at least 2 eigenvalues, got {w.shape[0]}")
    if not np.issubdtype(w.dtype, np.number) or np.iscomplexobj(w):
        raise TypeError(f"eigenvalues must be real numbers, got dtype {w.dtype}")
    w = w.astype(np.float64)
    if not np.all(np.isfinite(w)):
        raise ValueError("eigenvalues contain NaN or infinity")
    w = np.sort(w)[::-1]
    return w[:-1] - w[1:]


def top_eigen(A, r, *, kernel=None, method="auto", tol=0.0, random_state=None, **kernel_params):
    """Top-r eigenpairs of a symmetric PSD matrix, or of the Gram of ``X`` without forming it.

    Parameters
    ----------
    A : ndarray of shape (n, n), LinearOperator, or data X of shape (n, d)
        A symmetric matrix/operator when ``kernel`` is None; the data whose
        Gram ``K = [k(x_i, x_j)]`` is decomposed when ``kernel`` is given.
    r : int
        Number of eigenpairs, ``1 <= r <= n``.
    kernel : str, Kernel or None
    method : {"auto", "dense", "lanczos"}, default="auto"
        ``dense``: LAPACK ``eigh`` (subset) on the formed matrix.
        ``lanczos``: ARPACK ``eigsh(which="LA")`` on the matrix or, for data,
        on :class:`~kernelsketch.kernels.GramOperator` (O(chunk * n) memory).
        ``auto``: dense for a matrix, or for data when ``n <= 1000`` and the
        Gram fits ``working_memory``; Lanczos otherwise (and for operators).
    tol : float, default=0
        ARPACK relative tolerance (0 = machine precision).
    random_state : int, Generator or None
        Seeds the Lanczos start vector.
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    eigenvalues : ndarray of shape (r,), descending
    eigenvectors : ndarray of shape (n, r)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import top_eigen
    >>> w, V = top_eigen(np.diag([1.0, 4.0, 2.0]), 2)
    >>> w
    array([4., 2.])
    """
    check_method(method, {"auto", "dense", "lanczos"})
    tol = check_tol(tol)
    r = check_positive_int(r, "r")
    if kernel is not None:
        X = data_float64(A)
        n = X.shape[0]
        kern = resolve_kernel(kernel, kernel_params)
        if method == "auto":
            method = "dense" if _dense_fits(n, 2) else "lanczos"
        if r > n:
            raise ValueError(f"r={r} must be <= n_samples={n}")
        if method == "dense" or r >= n - 1:
            A = pairwise_kernel(X, kernel=kern)
            method = "dense"
        else:
            A = GramOperator(X, kern)
    else:
        if isinstance(A, LinearOperator):
            if method == "dense":
                raise ValueError("method='dense' needs a matrix, not a LinearOperator")
            method = "lanczos"
        else:
            A = np.asarray(A, dtype=np.float64)
            if A.ndim != 2 or A.shape[0] != A.shape[1]:
                raise ValueError(f"A must be a square matrix when kernel is None, got shape {A.shape}")
            if not np.all(np.isfinite(A)):
                raise ValueError("A contains NaN or infinity")
            if method == "auto":
                method = "dense"
        n = A.shape[0]
        if r > n:
            raise ValueError(f"r={r} must be <= n={n}")
        if method == "lanczos" and r >= n - 1:
            if isinstance(A, LinearOperator):
                raise ValueError(f"Lanczos needs r < n - 1 (r={r}, n={n})")
            method = "dense"
    # the one eigensolver wrapper of the package (the estimators use it too)
    return top_eigenpairs(A, r, "dense" if method == "dense" else "arpack", check_random_state(random_state), tol=tol)


def _check_landmarks(landmarks, n, r):
    idx = np.asarray(landmarks)
    if idx.ndim != 1 or idx.shape[0] == 0:
        raise ValueError(f"landmarks must be a non-empty 1-D array of row indices, got shape {idx.shape}")
    if not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"landmarks must be integer row indices of X, got dtype {idx.dtype}")
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"landmark indices must lie in [0, {n}), got range [{idx.min()}, {idx.max()}]")
    if idx.shape[0] < r:
        raise ValueError(f"a rank-{r} Nystroem approximation needs >= {r} landmarks, got {idx.shape[0]}")
    return idx


def nystroem_factor(C, idx, r):
    """``Y`` with ``Y Y^T = C W_r^+ C^T``: ``Y = C U_r diag(lambda_hat_r)^{-1/2}`` (the paper's Nystroem).

    ``C = K[:, idx]`` (n x m) and ``W = C[idx]`` the landmark block; the columns of
    ``Y`` follow the landmark eigenvalues in descending order, so ``Y[:, :s]`` is the
    rank-``s`` factor for every ``s <= r``.  The paper assumes ``lambda_hat_r > 0``:
    a landmark block of numerical rank below ``r`` is an error, not a warning (the
    estimator :class:`~kernelsketch.maps.Nystroem` drops such directions instead).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[2.0, 1.0, 0.5], [1.0, 2.0, 1.0], [0.5, 1.0, 2.0]])
    >>> Y = nystroem_factor(K[:, [0, 2]], np.array([0, 2]), 2)
    >>> bool(np.allclose((Y @ Y.T)[[0, 2]][:, [0, 2]], K[[0, 2]][:, [0, 2]]))
    True
    """
    W = C[idx]
    W = (W + W.T) / 2.0  # exact symmetry for eigh
    m = W.shape[0]
    w, U = top_eigenpairs(W, r, "dense", None)
    # below eps * m * lambda_hat_1 the r-th landmark eigenvalue is rounding noise and W_r^+ would blow it up
    if not w[-1] > np.finfo(np.float64).eps * m * max(w[0], 0.0):
        raise ValueError(
            f"the landmark kernel matrix W has numerical rank < r={r} (lambda_hat_r = {w[-1]:.3g}); "
            "use distinct landmarks or a smaller r"
        )
    return C @ (U / np.sqrt(w))


def nystroem_errors(
    X, landmarks, r, kernel="gaussian", *, method="auto", tol=0.0, random_state=None, **kernel_params
) -> NystroemErrors:
    """Frobenius errors of the rank-r Nystroem approximation, computed in bounded memory.

    Parameters
    ----------
    X : array-like or CSR of shape (n, d)
    landmarks : array-like of int, shape (m,)
        Row indices of X used as landmarks (duplicates allowed; ``m >= r``).
    r : int
        Rank of the approximation, ``1 <= r < n``.
    kernel : str or Kernel, default="gaussian"
    method : {"auto", "dense", "blocked", "formula"}, default="auto"
        How ``||K - K_hat_r||_F`` and ``||K||_F`` are computed: ``dense`` forms
        ``K`` (and uses *all* its eigenvalues for ``||K - K_r||_F``), the
        others make one pass over row blocks of ``K`` (see
        :func:`kernel_frobenius_error`) and take the top ``r + 1``
        eigenvalues by Lanczos.  ``auto``: dense when ``n <= 1000`` and the
        Gram fits ``working_memory``, else blocked up to n = 20000, else formula.
    tol : float, default=0
        ARPACK tolerance for the top eigenvalues of ``K``.
    random_state : int, Generator or None
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    NystroemErrors

    Notes
    -----
    ``K_hat_r = Y Y^T`` with ``Y = K_b U_r diag(lambda_hat)^{-1/2}`` (n x r), so
    ``||K - K_hat_r||_F`` is the blocked Frobenius residual of that factor.
    For the optimum, ``K`` is PSD so ``||K - K_r||_F^2 = sum_{i > r}
    lambda_i^2 = ||K||_F^2 - sum_{i <= r} lambda_i^2``, which needs only the
    top-r eigenvalues (Lanczos on the Gram operator) and ``||K||_F^2`` (taken
    in the same pass over the blocks).  That difference cancels when the tail
    is below ~1e-8 of ``||K||_F``, like the ``formula`` route; the dense
    method sums the tail eigenvalues directly.  The additional error is
    ``>= 0`` (Eckart-Young: ``K_hat_r`` has rank ``<= r``) up to rounding.
    Cost: O(n m (d + r) + m^3) for the factor, one Gram pass O(n^2 (d + r)),
    plus O(n^2 d) per Lanczos step.

    References
    ----------
    M. Mahdavi, T. Yang, R. Jin. An improved bound for the Nystrom method for
    large eigengap. arXiv:1209.0001, 2012 (Section 3, Figure 1).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import nystroem_errors
    >>> X = np.random.default_rng(0).normal(size=(400, 3))
    >>> res = nystroem_errors(X, np.arange(0, 400, 8), r=5, kernel="gaussian", bandwidth=2.0)
    >>> bool(res.additional_error >= 0), res.eigenvalues.shape
    (True, (6,))
    """
    check_method(method, {"auto", "dense", "blocked", "formula"})
    X = data_float64(X, ensure_min_samples=2)
    n = X.shape[0]
    r = check_positive_int(r, "r")
    if r >= n:
        raise ValueError(f"r={r} must be < n_samples={n}")
    idx = _check_landmarks(landmarks, n, r)
    kern = resolve_kernel(kernel, kernel_params)
    if method == "auto":
        if _dense_fits(n, 2):
            method = "dense"
        else:
            method = "blocked" if n <= _BLOCKED_MAX_N else "formula"
    if method == "dense":
        return additional_approximation_error_dense(pairwise_kernel(X, kernel=kern), idx, r, details=True)
    C = pairwise_kernel(X, X[idx], kernel=kern)
    Y = nystroem_factor(C, idx, r)
    del C
    resid_sq, gram_sq = _frobenius_sums(X, kern, Y, method, gram_norm=True)
    lam, _ = top_eigen(X, r + 1, kernel=kern, method="lanczos", tol=tol, random_state=random_state)
    best_sq = max(gram_sq - float(np.sum(lam[:r] ** 2)), 0.0)
    return _report(resid_sq, best_sq, lam, r)


def _report(resid_sq, best_sq, lam, r):
    nys, best = float(np.sqrt(resid_sq)), float(np.sqrt(best_sq))
    return NystroemErrors(nys - best, nys, best, lam[: r + 1], float(lam[r - 1] - lam[r]))


def additional_approximation_error(
    X, landmarks, r, kernel="gaussian", *, method="auto", tol=0.0, random_state=None, **kernel_params
):
    """``||K - K_hat_r||_F - ||K - K_r||_F`` for the rank-r Nystroem approximation.

    Same parameters as :func:`nystroem_errors`, which returns this number
    together with its two terms and the eigengap ``lambda_r - lambda_{r+1}``.

    Returns
    -------
    error : float
        ``>= 0`` up to rounding (Eckart-Young).

    References
    ----------
    M. Mahdavi, T. Yang, R. Jin. An improved bound for the Nystrom method for
    large eigengap. arXiv:1209.0001, 2012 (Figure 1).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import additional_approximation_error
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> e = additional_approximation_error(X, np.arange(0, 200, 4), r=3, kernel="gaussian", bandwidth=1.0)
    >>> bool(e >= 0)
    True
    """
    return nystroem_errors(
        X, landmarks, r, kernel, method=method, tol=tol, random_state=random_state, **kernel_params
    ).additional_error


def additional_approximation_error_dense(K, landmarks, r, *, details=False):
    """Dense reference: the additional Nystroem error from a formed kernel matrix.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric PSD kernel matrix.
    landmarks : array-like of int, shape (m,)
        Row/column indices of the landmarks.
    r : int
        Rank, ``1 <= r < n``.
    details : bool, default=False
        Return the full :class:`NystroemErrors` instead of the float.

    Returns
    -------
    error : float or NystroemErrors

    Notes
    -----
    ``K_hat_r = K[:, S] W_r^+ K[S, :]`` formed explicitly and
    ``||K - K_r||_F = sqrt(sum_{i > r} lambda_i^2)`` from the full ``eigh``
    (O(n^3)).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import additional_approximation_error_dense
    >>> K = np.diag([3.0, 2.0, 1.0])
    >>> additional_approximation_error_dense(K, [0, 1], r=2)  # landmarks span the top-2 eigenvectors
    0.0
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinity")
    n = K.shape[0]
    r = check_positive_int(r, "r")
    if r >= n:
        raise ValueError(f"r={r} must be < n={n}")
    idx = _check_landmarks(landmarks, n, r)
    K = (K + K.T) / 2.0
    Y = nystroem_factor(np.ascontiguousarray(K[:, idx]), idx, r)
    D = K - Y @ Y.T
    resid_sq = float(np.einsum("ij,ij->", D, D))
    lam = scipy.linalg.eigvalsh(K, check_finite=False)[::-1]
    best_sq = float(np.sum(lam[r:] ** 2))
    out = _report(resid_sq, best_sq, lam, r)
    return out if details else out.additional_error
