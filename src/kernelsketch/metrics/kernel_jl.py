r"""Theorem 1 of Kernel JL: how well the Gaussian sketch ``Z K`` preserves ``<f, Sigma^3 g>_H``.

Kpotufe & Sriperumbudur map a function ``f`` of the RKHS through its values on
the subsample ``X = {x_1..x_n}``, ``f|X = (f(x_1), ..., f(x_n))``, and the
Gaussian sketch ``Z K`` (``Z`` is d x n with i.i.d. N(0, 1) entries,
``K = [k(x_i, x_j)]``).  Theorem 1 states that, uniformly over ``f, g``,

    (1 / (n^3 d)) <Z K f|X, Z K g|X>_2  ~  <f, Sigma^3 g>_H

at the rate ``n^{-1/2} + d^{-1/2}``, relative to ``||f||_H ||g||_H``.  This
module evaluates both sides exactly for functions in the span of the
subsample, ``f = sum_i a_i k(., x_i)``.

Derivation of the closed form
-----------------------------
Let ``S: H -> R^n, f -> f|X`` be the sampling operator; its adjoint is
``S^* c = sum_i c_i k(., x_i)``, so ``f = S^* a``, ``S S^* = K`` and the
empirical covariance operator is ``Sigma_n = (1/n) sum_i k(., x_i) (x)
k(., x_i) = (1/n) S^* S``.  Then

* ``f|X = S S^* a = K a``;
* ``Sigma_n^3 g = (1/n^3) S^* (S S^*)(S S^*) S S^* b = (1/n^3) S^* K^3 b``;
* ``<f, S^* c>_H = <S f, c>_2 = (K a)^T c``,

hence

    <f, Sigma_n^3 g>_H = (1/n^3) a^T K^4 b = (1/n^3) (K a)^T K^2 (K b),

i.e. ``(1/n^3) f|X^T K^2 g|X`` -- the middle factor is ``K^2``, which is also
``E_Z`` of the sketched side: ``E[Z^T Z] = d I`` gives
``E (1/(n^3 d)) (K f|X)^T Z^T Z (K g|X) = (1/n^3) f|X^T K^2 g|X``.  The RKHS
norm is ``||f||_H^2 = a^T K a``.

For a second, larger sample ``X_N`` (a proxy for the population ``Sigma``),
``Sigma_N = (1/N) S_N^* S_N`` and the same steps give
``<f, Sigma_N^3 g>_H = (1/N^3) (K_NN K_Nn a)^T (K_NN K_Nn b)`` with
``K_Nn = K(X_N, X)``.

The supremum over *all* ``f, g in H`` of the normalised error against
``Sigma_n`` (the sketching term of the proof's bound (5)) is attained in the
span of the subsample (components orthogonal to it vanish on ``X`` and under
``Sigma_n``); substituting ``u = K^{1/2} a`` it equals the spectral norm

    || (1/n^3) (K^{3/2} Z^T Z K^{3/2} / d - K^3) ||_2.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg

from ..kernels.blocks import kernel_blocks, pairwise_kernel
from ..kernels.gram_operator import GramOperator
from ._inputs import data_float64, resolve_kernel

__all__ = ["Theorem1Error", "theorem1_inner_product_error"]


class Theorem1Error(NamedTuple):
    """Both sides of Kernel JL's Theorem 1 for sets of functions.

    Attributes
    ----------
    sketched : ndarray of shape (p, q)
        ``(1 / (n^3 d)) <Z K f_j|X, Z K g_l|X>_2``.
    target : ndarray of shape (p, q)
        ``<f_j, Sigma^3 g_l>_H`` with ``Sigma = Sigma_n`` (or ``Sigma_N`` on
        ``X_population``).
    abs_error : ndarray of shape (p, q)
        ``|sketched - target|``.
    normalized_error : ndarray of shape (p, q)
        ``abs_error / (||f_j||_H ||g_l||_H)`` (the left side of Theorem 1
        before the supremum; ``nan`` where a function is 0).
    sup_error : float or None
        Supremum of the normalised error over all ``f, g in H`` against
        ``Sigma_n``; None when ``X_population`` is given or ``sup=False``.
    """

    sketched: np.ndarray
    target: np.ndarray
    abs_error: np.ndarray
    normalized_error: np.ndarray
    sup_error: float | None


def _coefficients(F, n, name):
    if F is None:
        raise TypeError(f"{name} is None; expected coefficients of shape ({n}, p)")
    F = np.asarray(F)
    if not np.issubdtype(F.dtype, np.number) or np.iscomplexobj(F):
        raise TypeError(f"{name} must be a real numeric array, got dtype {F.dtype}")
    if F.ndim == 1:
        F = F[:, None]
    if F.ndim != 2 or F.shape[0] != n or F.shape[1] == 0:
        raise ValueError(
            f"{name} must have shape ({n}, p) with p >= 1 (one coefficient per subsample point), got {F.shape}"
        )
    F = np.asarray(F, dtype=np.float64)
    if not np.all(np.isfinite(F)):
        raise ValueError(f"{name} contains NaN or infinity")
    return F


def _real_matrix(A, name):
    A = np.asarray(A)
    if not np.issubdtype(A.dtype, np.number) or np.iscomplexobj(A):
        raise TypeError(f"{name} must be a real numeric array, got dtype {A.dtype}")
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {A.shape}")
    A = np.asarray(A, dtype=np.float64)
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity")
    return A


def _population_products(X_pop, X, kern, A):
    """``K_NN K_Nn A`` in bounded memory (K_Nn by row blocks, K_NN as an operator)."""
    B = np.empty((X_pop.shape[0], A.shape[1]), dtype=np.float64)
    for rows, Kb in kernel_blocks(X_pop, X, kern, validate=False):
        B[rows] = Kb @ A
    return GramOperator(X_pop, kern).matmat(B)


def theorem1_inner_product_error(
    X, Z, F, G=None, kernel="gaussian", *, projection=None, X_population=None, sup=True, **kernel_params
) -> Theorem1Error:
    r"""Kernel JL Theorem 1: sketched vs exact ``<f, Sigma^3 g>_H`` for sets of functions.

    Parameters
    ----------
    X : array-like or CSR of shape (n, D)
        The subsample that defines the sketch.
    Z : array-like of shape (d, n) or None
        The Gaussian sketch matrix (i.i.d. N(0, 1) entries).  None when
        ``projection`` is given instead.
    F : array-like of shape (n, p) or (n,)
        Column ``j`` holds the coefficients of ``f_j = sum_i F[i, j] k(., x_i)``.
    G : array-like of shape (n, q) or (n,), optional
        Coefficients of the ``g_l``; defaults to ``F``.
    kernel : str or Kernel, default="gaussian"
    projection : array-like of shape (n, d), optional
        The normalised sketch ``V_hat = K Z^T / (n^{3/2} sqrt(d))`` instead of
        ``Z`` -- e.g. ``KernelJL(centered=False).projection_`` fitted on ``X``.
    X_population : array-like or CSR of shape (N, D), optional
        A larger sample whose empirical covariance ``Sigma_N`` stands in for
        the population ``Sigma`` of the theorem.  Default: ``Sigma_n`` of
        ``X`` itself, which isolates the sketching (``d^{-1/2}``) term.
    sup : bool, default=True
        Also compute the supremum of the normalised error over all of ``H``
        (``Sigma_n`` target only; O(n^3)).
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    Theorem1Error

    Notes
    -----
    With ``K = [k(x_i, x_j)]``, ``f|X = K a`` and (derivation in the module
    docstring)

    .. math::

        \langle f, \Sigma_n^3 g\rangle_H = \frac{1}{n^3} a^\top K^4 b, \qquad
        \frac{1}{n^3 d}\langle Z K f_{|X}, Z K g_{|X}\rangle_2
        = \frac{1}{n^3 d} (Z K^2 a)^\top (Z K^2 b),

    and ``||f||_H^2 = a^T K a``.  The sketched side is evaluated as
    ``<V_hat^T K b, V_hat^T K a>`` with ``V_hat = K Z^T / (n^{3/2} sqrt(d))``.
    Cost: O(n^2 (D + d)) for ``K`` and ``V_hat``, O(n^2 (p + q) + d n (p + q))
    for the products, O(n^3 + d n^2) for the supremum; with
    ``X_population``, O(N n D + N^2 D) in the working-memory budget.

    References
    ----------
    S. Kpotufe, B. K. Sriperumbudur. Gaussian sketching yields a J-L lemma in
    RKHS. AISTATS 2020 (Theorem 1).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.metrics import theorem1_inner_product_error
    >>> rng = np.random.default_rng(0)
    >>> X, Z = rng.normal(size=(100, 2)), rng.standard_normal((2000, 100))
    >>> res = theorem1_inner_product_error(X, Z, rng.normal(size=(100, 3)), kernel="gaussian", bandwidth=1.0)
    >>> res.sketched.shape, bool(np.all(res.normalized_error <= res.sup_error + 1e-12))
    ((3, 3), True)
    """
    X = data_float64(X)
    n = X.shape[0]
    if (Z is None) == (projection is None):
        raise ValueError("give exactly one of Z (the d x n Gaussian matrix) and projection (the n x d V_hat)")
    if Z is not None:
        Z = _real_matrix(Z, "Z")
        if Z.shape[1] != n or Z.shape[0] == 0:
            raise ValueError(f"Z must have shape (d, {n}) with d >= 1 (one column per subsample point), got {Z.shape}")
    else:
        projection = _real_matrix(projection, "projection")
        if projection.shape[0] != n or projection.shape[1] == 0:
            raise ValueError(f"projection must have shape ({n}, d) with d >= 1, got {projection.shape}")
    F = _coefficients(F, n, "F")
    G = F if G is None else _coefficients(G, n, "G")
    kern = resolve_kernel(kernel, kernel_params)

    K = pairwise_kernel(X, kernel=kern)
    K = (K + K.T) / 2.0
    # V_hat = K Z^T / (n^{3/2} sqrt(d)): the sketched side is <V_hat^T g|X, V_hat^T f|X>
    V = K @ Z.T / (n * np.sqrt(n * Z.shape[0])) if projection is None else projection
    KF, KG = K @ F, K @ G  # f|X, g|X
    sketched = (V.T @ KF).T @ (V.T @ KG)

    if X_population is None:
        target = ((K @ KF).T @ (K @ KG)) / n**3
    else:
        X_pop = data_float64(X_population, name="X_population")
        if X_pop.shape[1] != X.shape[1]:
            raise ValueError(f"X_population has {X_pop.shape[1]} features but X has {X.shape[1]}")
        N = X_pop.shape[0]
        P = _population_products(X_pop, X, kern, np.hstack([F, G]))
        target = (P[:, : F.shape[1]].T @ P[:, F.shape[1] :]) / float(N) ** 3

    abs_error = np.abs(sketched - target)
    # ||f||_H^2 = a^T K a, clipped: rounding can make it slightly negative for f ~ 0
    f_norm = np.sqrt(np.maximum(np.einsum("ij,ij->j", F, KF), 0.0))
    g_norm = np.sqrt(np.maximum(np.einsum("ij,ij->j", G, KG), 0.0))
    denom = np.outer(f_norm, g_norm)
    with np.errstate(divide="ignore", invalid="ignore"):
        normalized = np.where(denom > 0, abs_error / denom, np.nan)

    sup_error = None
    if sup and X_population is None:
        lam, U = scipy.linalg.eigh(K, check_finite=False)
        lam = np.maximum(lam, 0.0)  # K is PSD; negative eigenvalues are rounding
        # K^{1/2} (V V^T - K^2 / n^3) K^{1/2} in K's eigenbasis:
        # Lam^{1/2} U^T V V^T U Lam^{1/2} - Lam^3 / n^3  (= (1/n^3)(Lam^{3/2} U^T Z^T Z U Lam^{3/2} / d - Lam^3))
        M = (V.T @ U) * np.sqrt(lam)
        B = M.T @ M
        B[np.diag_indices(n)] -= lam**3 / float(n) ** 3
        w = scipy.linalg.eigvalsh(B, check_finite=False)
        sup_error = float(max(abs(w[0]), abs(w[-1])))
    return Theorem1Error(sketched, target, abs_error, normalized, sup_error)
