"""Kernel spectral and Frobenius errors of a low-rank Gram approximation ``G' = Y Y^T``.

The Streaming KPCA paper (Ghashami, Perry & Phillips, Section 5) compares
methods by

* kernel spectral error  ``||G - G'||_2 / n``   (the worst direction), and
* kernel Frobenius error ``||G - G'||_F / n^2`` (the global error),

where ``G = [k(x_i, x_j)]`` is the exact (uncentred) Gram matrix.  Every
approximation in kernelsketch that exposes an ``n x k`` factor ``Y`` with
``G' = Y Y^T`` (a Nystroem or random-feature embedding, a Frequent Directions
projection, ...) can be scored here at large ``n`` without ever forming an
``n x n`` array:

* spectral: Lanczos (ARPACK ``eigsh``) on the operator ``G - Y Y^T``, whose
  products recompute kernel blocks under the working-memory budget;
* Frobenius: a sum over row blocks of the Gram, either of the residual
  ``(G_b - Y_b Y^T)^2`` directly (``"blocked"``, no cancellation) or of the
  expansion ``||G||_F^2 - 2 tr(Y^T G Y) + ||Y^T Y||_F^2`` (``"formula"``).

All computations run in float64 whatever the input dtype (a metric must
resolve errors below float32's ~1e-7 resolution of kernel values).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dgemm
from scipy.sparse.linalg import LinearOperator, eigsh

from .._config import get_config
from ..kernels.blocks import kernel_blocks, pairwise_kernel
from ..kernels.gram_operator import GramOperator
from ..utils.array_api import array_namespace, host_array, like
from ..utils.validation import check_random_state
from ._inputs import check_method, check_tol, data_float64, factor_float64, resolve_kernel

# "auto" forms the dense n x n Gram only when it is small in absolute terms
# (eigvalsh is O(n^3)) *and* a few n x n float64 arrays fit the budget.
_DENSE_MAX_N = 1000
# "auto" Frobenius: the direct residual sum ("blocked") up to this n, the
# expansion ("formula") beyond -- see kernel_frobenius_error, Notes.
_BLOCKED_MAX_N = 20000

__all__ = [
    "gram_residual_norms",
    "kernel_frobenius_error",
    "kernel_frobenius_error_dense",
    "kernel_spectral_error",
    "kernel_spectral_error_dense",
]


def _budget_mib(working_memory=None):
    return get_config()["working_memory"] if working_memory is None else float(working_memory)


def _dense_fits(n, n_arrays):
    return n <= _DENSE_MAX_N and n_arrays * n * n * 8 <= _budget_mib() * 2**20


def _dense_residual(X, Y, kern):
    """``G - Y Y^T`` formed densely (float64, O(n^2) memory)."""
    D = pairwise_kernel(X, kernel=kern)
    # D <- D - Y Y^T with one BLAS call, no n x n temporary
    D = dgemm(-1.0, Y, Y, beta=1.0, c=D.T, trans_b=True, overwrite_c=True).T
    return D


def _normalise(value, n, power, normalize):
    return float(value / n**power) if normalize else float(value)


# ---------------------------------------------------------------------------
# the device route: X and Y on a device (PyTorch, CuPy, ...) under array_api_dispatch
# ---------------------------------------------------------------------------
def _on_device(X, Y):
    """``(X, Y, xp)`` validated in float64 on X's device (Y follows X), or None for the host route."""
    if (ns := array_namespace(X)) is None:
        return None
    from ..utils.validation import check_input_xp

    xp = ns[0]
    X = xp.astype(check_input_xp(X, xp), xp.float64)
    Y = like(Y, X)
    if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y must have shape (n, k) with n = {X.shape[0]} rows of X; got {tuple(Y.shape)}")
    Y = xp.astype(Y, xp.float64)
    if not bool(xp.all(xp.isfinite(Y))):
        raise ValueError("Y contains NaN or infinity")
    return X, Y, xp


def _device_residual_sq(X, Y, kern, xp):
    """``||G - Y Y^T||_F^2`` summed block by block on the device (the blocked route: no cancellation)."""
    from ..kernels.array_api import gram_row_blocks_xp

    total = 0.0
    Yt = xp.matrix_transpose(Y)
    for rows, Gb in gram_row_blocks_xp(kern, X, xp, 8 * Y.shape[1]):
        Db = Gb - Y[rows, ...] @ Yt
        total += float(xp.sum(Db * Db))
    return total


def _device_spectral_dense(X, Y, kern, xp):
    """``||G - Y Y^T||_2`` from the residual formed on the device and its eigenvalues there."""
    from ..kernels.array_api import pairwise_kernel_xp

    D = pairwise_kernel_xp(kern, X, None, xp, X.device) - Y @ xp.matrix_transpose(Y)
    w = xp.linalg.eigvalsh(D)
    return max(abs(float(w[0])), abs(float(w[-1])))


# ---------------------------------------------------------------------------
# spectral error
# ---------------------------------------------------------------------------
class _ResidualOperator(LinearOperator):
    """``G - Y Y^T`` as a symmetric LinearOperator (the Gram is never formed; a device X keeps
    its Gram blocks on the device, :class:`~kernelsketch.kernels.GramOperator`)."""

    def __init__(self, X, kern, Y):
        self._gram = GramOperator(X, kern)
        self._Y = host_array(Y)  # n x k: the low-rank part of each product, on the host
        n = X.shape[0]
        super().__init__(dtype=np.float64, shape=(n, n))

    def _matmat(self, V):
        V = np.asarray(V, dtype=np.float64)
        if V.ndim == 1:
            V = V[:, None]
        out = self._gram.matmat(V)
        out -= self._Y @ (self._Y.T @ V)
        return out

    def _matvec(self, v):
        return self._matmat(np.asarray(v).reshape(-1, 1)).ravel()

    def _adjoint(self):
        return self


def kernel_spectral_error_dense(X, Y, kernel="gaussian", *, normalize=True, **kernel_params):
    """Exact ``||G - Y Y^T||_2 / n`` from the dense Gram (reference for small n).

    Parameters
    ----------
    X : array-like or CSR of shape (n, d)
    Y : array-like of shape (n, k)
        Factor of the approximation ``G' = Y Y^T``.
    kernel : str or Kernel
    normalize : bool, default=True
        Divide by ``n`` (the paper's normalisation); False returns the norm.
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    error : float

    Notes
    -----
    ``G - Y Y^T`` is symmetric, so its spectral norm is its largest eigenvalue
    in absolute value (LAPACK ``eigvalsh``).  O(n^2) memory, O(n^3) time.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import kernel_spectral_error_dense
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> e = kernel_spectral_error_dense(X, np.zeros((20, 1)), "linear", normalize=False)
    >>> bool(np.isclose(e, np.linalg.norm(X, 2) ** 2, rtol=1e-12))  # ||X X^T||_2 = sigma_1(X)^2
    True
    """
    kern = resolve_kernel(kernel, kernel_params)
    if (dev := _on_device(X, Y)) is not None:
        return _normalise(_device_spectral_dense(dev[0], dev[1], kern, dev[2]), dev[0].shape[0], 1, normalize)
    X = data_float64(X)
    Y = factor_float64(Y, X.shape[0])
    D = _dense_residual(X, Y, kern)
    w = scipy.linalg.eigvalsh(D, check_finite=False)
    return _normalise(max(abs(w[0]), abs(w[-1])), X.shape[0], 1, normalize)


def kernel_spectral_error(
    X,
    Y,
    kernel="gaussian",
    *,
    method="auto",
    tol=1e-8,
    max_iter=None,
    random_state=None,
    normalize=True,
    **kernel_params,
):
    """Kernel spectral error ``||G - Y Y^T||_2 / n`` without forming ``G``.

    Parameters
    ----------
    X : array-like or CSR of shape (n, d)
        The data the Gram ``G = [k(x_i, x_j)]`` is built on.
    Y : array-like of shape (n, k)
        Factor of the approximation ``G' = Y Y^T`` (one row per sample).
    kernel : str or Kernel, default="gaussian"
        A kernel name with ``**kernel_params`` (a numeric ``bandwidth`` for
        shift-invariant kernels) or a fitted estimator's ``kernel_``.
    method : {"auto", "dense", "lanczos"}, default="auto"
        ``dense``: :func:`kernel_spectral_error_dense`.  ``lanczos``: ARPACK
        on the operator ``G - Y Y^T``, O(chunk * n + n * k) memory.
        ``auto``: dense when ``n <= 1000`` and three ``n x n`` float64 arrays
        fit ``working_memory``, Lanczos otherwise.
    tol : float, default=1e-8
        ARPACK relative tolerance (0 means machine precision).
    max_iter : int, optional
        ARPACK iteration cap (default ``10 n``).
    random_state : int, Generator or None
        Seeds the Lanczos start vector.
    normalize : bool, default=True
        Divide by ``n`` as in the paper; False returns ``||G - Y Y^T||_2``.
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    error : float

    Notes
    -----
    ``G - Y Y^T`` is symmetric but *not* necessarily positive semi-definite
    (random-feature approximations overshoot ``G`` in some directions), so its
    spectral norm is the eigenvalue of largest magnitude: ``eigsh(which="LM",
    k=1)``, started from a seeded random vector.  ARPACK stops when the Ritz
    residual ``||A v - theta v|| <= tol * |theta|``; for a symmetric operator the
    eigenvalue error is at most that residual, so the returned norm has
    relative error ``<= tol`` (usually far less: the error is quadratic in the
    residual when the top eigenvalue is separated).  Each Lanczos step is one
    pass over the Gram blocks, O(n^2 (d + k)) flops; memory is one block under
    the working-memory budget plus a few length-n vectors.

    References
    ----------
    M. Ghashami, D. J. Perry, J. M. Phillips. Streaming kernel principal
    component analysis. AISTATS 2016 (Section 5, "Error measures").

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import kernel_spectral_error
    >>> X = np.random.default_rng(0).normal(size=(300, 3))
    >>> Y = np.zeros((300, 1))
    >>> e_lanczos = kernel_spectral_error(X, Y, "gaussian", bandwidth=2.0, method="lanczos", random_state=0)
    >>> e_dense = kernel_spectral_error(X, Y, "gaussian", bandwidth=2.0, method="dense")
    >>> bool(np.isclose(e_lanczos, e_dense, rtol=1e-8))
    True
    """
    check_method(method, {"auto", "dense", "lanczos"})
    tol = check_tol(tol)
    kern = resolve_kernel(kernel, kernel_params)
    if (dev := _on_device(X, Y)) is not None:  # PyTorch / CuPy / ...: Gram blocks on the device
        X, Y, _ = dev
    else:
        X = data_float64(X)
        Y = factor_float64(Y, X.shape[0])
    n = X.shape[0]
    if method == "auto":
        method = "dense" if _dense_fits(n, 3) else "lanczos"
    if method == "dense" or n < 3:  # ARPACK needs k < n - 1
        return kernel_spectral_error_dense(X, Y, kern, normalize=normalize)
    rng = check_random_state(random_state)
    op = _ResidualOperator(X, kern, Y)
    v0 = rng.uniform(-1.0, 1.0, n)
    w = eigsh(op, k=1, which="LM", v0=v0, tol=tol, maxiter=max_iter, return_eigenvectors=False)
    return _normalise(abs(float(w[0])), n, 1, normalize)


def gram_residual_norms(G, Y, *, tol=1e-8, random_state=0, out=None):
    """``(||G - Y Y^T||_2, ||G - Y Y^T||_F)`` for a Gram ``G`` already formed (symmetric, n x n).

    For callers that hold the exact Gram of a sample and compare several factors
    ``Y`` with it (:func:`kernelsketch.diagnose`, the Streaming KPCA reproduction):
    the residual is formed once per ``Y``, its spectral norm is the eigenvalue of
    largest magnitude (Lanczos, ``eigsh(which="LM")``, much cheaper than an SVD;
    the start vector is drawn from ``random_state``), and nothing is normalised.
    ``out``: an ``n x n`` float64 C-contiguous buffer for the residual, reused across
    calls (no ``n x n`` allocation per factor).

    Examples
    --------
    >>> import numpy as np
    >>> G = np.diag([3.0, 2.0, 1.0, 0.5])
    >>> Y = np.sqrt(np.diag([3.0, 2.0, 0.0, 0.0]))[:, :2]
    >>> [round(v, 6) for v in gram_residual_norms(G, Y)]
    [1.0, 1.118034]
    """
    G = np.asarray(G, dtype=np.float64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n = G.shape[0]
    if out is None:
        out = np.empty((n, n))
    elif out.shape != (n, n) or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 array of shape {(n, n)}")
    R = out
    np.matmul(Y, Y.T, out=R)
    np.subtract(G, R, out=R)
    flat = R.reshape(-1)
    frob = float(np.sqrt(np.dot(flat, flat)))
    if n < 3:  # ARPACK needs k < n - 1
        return float(np.max(np.abs(np.linalg.eigvalsh(R)))), frob
    v0 = check_random_state(random_state).uniform(-1.0, 1.0, n)
    w = eigsh(R, k=1, which="LM", v0=v0, tol=tol, return_eigenvectors=False)
    return abs(float(w[0])), frob


# ---------------------------------------------------------------------------
# Frobenius error
# ---------------------------------------------------------------------------
def kernel_frobenius_error_dense(X, Y, kernel="gaussian", *, normalize=True, **kernel_params):
    """Exact ``||G - Y Y^T||_F / n^2`` from the dense Gram (reference for small n).

    Parameters
    ----------
    X : array-like or CSR of shape (n, d)
    Y : array-like of shape (n, k)
    kernel : str or Kernel
    normalize : bool, default=True
        Divide by ``n^2`` (the paper's normalisation).
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    error : float

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import kernel_frobenius_error_dense
    >>> X = np.eye(3)
    >>> kernel_frobenius_error_dense(X, np.zeros((3, 1)), "linear", normalize=False)  # ||I||_F
    1.7320508075688772
    """
    kern = resolve_kernel(kernel, kernel_params)
    if (dev := _on_device(X, Y)) is not None:  # PyTorch / CuPy / ...: on the device
        return _normalise(np.sqrt(_device_residual_sq(dev[0], dev[1], kern, dev[2])), dev[0].shape[0], 2, normalize)
    X = data_float64(X)
    Y = factor_float64(Y, X.shape[0])
    D = _dense_residual(X, Y, kern)
    return _normalise(np.sqrt(np.einsum("ij,ij->", D, D)), X.shape[0], 2, normalize)


def _frobenius_sums(X, kern, Y, route, *, gram_norm=False, working_memory=None):
    """One pass over the Gram row blocks; returns ``(||G - Y Y^T||_F^2, ||G||_F^2 or None)``.

    ``route="blocked"`` sums the residual block by block; ``"formula"``
    expands the square.  Never allocates an n x n array.
    """
    n, k = Y.shape
    budget = _budget_mib(working_memory)
    # kernel_blocks budgets its (rows, n) block and the kernel's scratch; the
    # one other per-row temporary here is a (rows, k) slice/product, so the
    # block gets the share n / (n + k) of the budget.
    block_budget = budget * n / (n + k)
    Yf = np.asfortranarray(Y)
    gram_sq = 0.0
    resid_sq = 0.0
    cross = 0.0
    for rows, Gb in kernel_blocks(X, None, kern, working_memory=block_budget, validate=False):
        if gram_norm or route == "formula":
            gram_sq += float(np.einsum("ij,ij->", Gb, Gb))
        if route == "blocked":
            # Gb is C-ordered (rows, n), so Gb.T is a Fortran (n, rows) array
            # that dgemm overwrites with Gb.T - Y Y_rows^T in place: the
            # residual block costs no second (rows, n) buffer.
            Db = dgemm(-1.0, Yf, Y[rows], beta=1.0, c=Gb.T, trans_b=True, overwrite_c=True)
            resid_sq += float(np.einsum("ij,ij->", Db, Db))
        else:
            # tr(Y^T G Y) = sum over row blocks of <Y_rows, G_rows Y>
            cross += float(np.einsum("ij,ij->", Y[rows], Gb @ Y))
    if route == "formula":
        YtY = Y.T @ Y
        # Expansion of ||G - YY^T||_F^2; rounding of the three O(||G||_F^2)
        # terms can push a tiny result below zero.
        resid_sq = max(gram_sq - 2.0 * cross + float(np.einsum("ij,ij->", YtY, YtY)), 0.0)
    return resid_sq, (gram_sq if gram_norm else None)


def kernel_frobenius_error(X, Y, kernel="gaussian", *, method="auto", normalize=True, **kernel_params):
    """Kernel Frobenius error ``||G - Y Y^T||_F / n^2`` without forming ``G``.

    Parameters
    ----------
    X : array-like or CSR of shape (n, d)
        The data the Gram ``G = [k(x_i, x_j)]`` is built on.
    Y : array-like of shape (n, k)
        Factor of the approximation ``G' = Y Y^T``.
    kernel : str or Kernel, default="gaussian"
    method : {"auto", "dense", "blocked", "formula"}, default="auto"
        ``dense``: :func:`kernel_frobenius_error_dense`.  ``blocked``: the sum
        of ``(G_b - Y_b Y^T)^2`` over row blocks (no cancellation).
        ``formula``: ``||G||_F^2 - 2 tr(Y^T G Y) + ||Y^T Y||_F^2`` by row
        blocks.  ``auto``: dense when ``n <= 1000`` and two ``n x n`` float64
        arrays fit ``working_memory``, else blocked up to ``n = 20000``, else
        formula.
    normalize : bool, default=True
        Divide by ``n^2`` as in the paper; False returns ``||G - Y Y^T||_F``.
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    error : float

    Notes
    -----
    Both blocked routes make one pass over the Gram in row blocks
    ``G_b = K(X_b, X)`` sized by the working-memory budget, and cost
    O(n^2 (d + k)) flops: ``blocked`` does one GEMM ``Y Y_b^T`` per block into
    the block itself, ``formula`` one GEMM ``G_b Y``.  The formula reads each
    block twice instead of writing it once more, hence its use by ``auto``
    for large n, where a relative error of 1e-4 or more
    is rarely approached.

    Cancellation: the formula subtracts quantities of size ``||G||_F^2``, so
    its absolute error in ``||G - Y Y^T||_F^2`` is about
    ``eps * ||G||_F^2`` (``eps = 2.2e-16``), a relative error of
    ``eps * (||G||_F / ||G - Y Y^T||_F)^2`` -- e.g. 1e-4 when the error is
    1e-6 of ``||G||_F``, and meaningless below ~1e-8 of it.  The ``blocked``
    route sums the squared residual entries themselves and is accurate to
    ``~eps`` relative in every regime; prefer it (and ``dense`` for small n)
    whenever the approximation is very accurate.  That bound is a worst
    case: at n = 50000 (Gaussian, d = 8, a 200-landmark rank-50 Nystroem
    factor, error 1.5e-7 after normalisation) the two routes agreed to 3e-12
    relative, in bounded memory (working_memory=64: peak RSS no higher than
    the data and factor themselves).

    References
    ----------
    M. Ghashami, D. J. Perry, J. M. Phillips. Streaming kernel principal
    component analysis. AISTATS 2016 (Section 5, "Error measures").

    Examples
    --------
    >>> import numpy as np
    >>> import kernelsketch
    >>> from kernelsketch.metrics import kernel_frobenius_error, kernel_frobenius_error_dense
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(500, 3)), rng.normal(size=(500, 4)) / 10
    >>> with kernelsketch.config_context(working_memory=1):  # 1 MiB: many row blocks
    ...     e = kernel_frobenius_error(X, Y, "gaussian", bandwidth=1.0, method="blocked")
    >>> bool(np.isclose(e, kernel_frobenius_error_dense(X, Y, "gaussian", bandwidth=1.0), rtol=1e-12))
    True
    """
    check_method(method, {"auto", "dense", "blocked", "formula"})
    kern = resolve_kernel(kernel, kernel_params)
    if (dev := _on_device(X, Y)) is not None:  # PyTorch / CuPy / ...: the blocked sum on the device, any method
        return _normalise(np.sqrt(_device_residual_sq(dev[0], dev[1], kern, dev[2])), dev[0].shape[0], 2, normalize)
    X = data_float64(X)
    n = X.shape[0]
    Y = factor_float64(Y, n)
    if method == "auto":
        if _dense_fits(n, 2):
            method = "dense"
        else:
            method = "blocked" if n <= _BLOCKED_MAX_N else "formula"
    if method == "dense":
        return kernel_frobenius_error_dense(X, Y, kern, normalize=normalize)
    resid_sq, _ = _frobenius_sums(X, kern, Y, method)
    return _normalise(np.sqrt(resid_sq), n, 2, normalize)
