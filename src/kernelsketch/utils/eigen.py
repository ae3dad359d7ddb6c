"""Eigenpairs of Gram matrices: centring, top-k solvers, and which eigenpairs are signal vs rounding noise."""

from __future__ import annotations

import warnings
from contextlib import nullcontext

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsymm, dsymv
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh
from sklearn.utils.extmath import randomized_svd

from .threads import single_threaded_blas
from .validation import derive_seed, require_finite

#: dense matrices up to this order (8 MiB in float64) run Lanczos on one BLAS thread
_SMALL_DENSE_N = 1024


def noise_floor(n, kmax, eigenvalue_tol, lambda_max):
    """Smallest eigenvalue treated as signal.

    An n x n Gram computed in float64 carries rounding noise of spectral size
    about ``n * eps * max|K_ij|``; an eigenvalue below ten times that, or
    below ``eigenvalue_tol * lambda_max`` (a relative cut for ill-conditioned
    but exact spectra), cannot be inverted or trusted.
    """
    return max(eigenvalue_tol * max(float(lambda_max), 0.0),
               10.0 * n * np.finfo(np.float64).eps * float(kmax),
               np.finfo(np.float64).tiny)


def drop_noise_eigenpairs(w, V, *, n, kmax, eigenvalue_tol, requested, owner, what="Gram matrix", stacklevel=3):
    """Keep eigenpairs (descending ``w``) above :func:`noise_floor`.

    Warns once (RuntimeWarning) when ``requested`` (the user's explicit
    ``n_components``) components had to be dropped; raises ValueError when
    none is left.
    """
    floor = noise_floor(n, kmax, eigenvalue_tol, w[0] if len(w) else 0.0)
    keep = w > floor
    if not np.any(keep):
        raise ValueError(
            f"{owner}: the {what} is numerically zero (all eigenvalues below {floor:.3g}): the points are "
            "indistinguishable under this kernel -- is the bandwidth far larger than the data's spread, "
            "or are all points identical?"
        )
    if not np.all(keep):
        if requested is not None:
            warnings.warn(
                f"{owner}: {int(np.sum(~keep))} of the {len(w)} requested eigenvalues of the {what} are below "
                f"{floor:.3g} (numerically zero, e.g. duplicate points or a fast-decaying spectrum); their "
                f"components were dropped, keeping {int(np.sum(keep))}",
                RuntimeWarning, stacklevel=stacklevel,
            )
        w, V = w[keep], V[:, keep]
    return w, V


def centered_gram(K):
    """Doubly centre a Gram matrix in place: ``K <- H K H``; returns (K, row_means, total_mean)."""
    row_means = K.mean(axis=1)
    total = float(row_means.mean())
    K -= row_means[:, None]
    K -= row_means[None, :]
    K += total
    return K, row_means, total


def _symmetric_operator(A):
    """A dense symmetric float64 matrix as a LinearOperator whose products read one triangle.

    Lanczos on an n x n Gram is bound by memory traffic (one full read of A
    per product); BLAS ``dsymv`` reads only the lower triangle, which halves
    it (5,000 x 5,000: 5.6 ms vs 11 ms per product here).  ``A.T`` is the
    Fortran-ordered view of the same memory (no copy) and equals A.
    """
    if A.dtype != np.float64 or not A.flags.c_contiguous:
        return A
    AT = A.T
    n = A.shape[0]

    def matvec(v):
        return dsymv(1.0, AT, np.asarray(v, dtype=np.float64).ravel(), lower=1)

    def matmat(V):
        return dsymm(1.0, AT, np.asarray(V, dtype=np.float64), lower=1)

    return LinearOperator((n, n), matvec=matvec, matmat=matmat, rmatvec=matvec, dtype=np.float64)


def top_eigenpairs(A, k, solver, rng, tol=0.0, max_iter=None):
    """Top-k eigenpairs of a symmetric PSD matrix or LinearOperator, descending."""
    n = A.shape[0]
    if isinstance(A, np.ndarray):
        require_finite(A, "Gram matrix")
    if solver == "dense":
        w, V = scipy.linalg.eigh(A, subset_by_index=[n - k, n - 1], check_finite=False)
    elif solver in ("arpack", "operator"):
        v0 = rng.uniform(-1, 1, n)
        dense = isinstance(A, np.ndarray)
        op = _symmetric_operator(A) if dense else A
        # A small dense matrix (<= 8 MiB, cache-resident) gains nothing from
        # BLAS threads in its matrix-vector products, and waking them for each
        # of the hundreds of products made a 1000 x 1000 Lanczos 1.5-7x slower
        # and erratic (21-110 ms vs a steady 15 ms single-threaded).
        pin = single_threaded_blas() if dense and n <= _SMALL_DENSE_N else nullcontext()
        try:
            with pin:
                w, V = eigsh(op, k=k, which="LA", v0=v0, tol=tol, maxiter=max_iter)
        except ArpackNoConvergence as exc:
            raise ValueError(f"ARPACK did not converge to {k} eigenpairs ({exc}); raise max_iter or "
                             "use eigen_solver='dense'") from None
        except ArpackError as exc:
            raise ValueError(f"the centred Gram matrix is numerically zero or the eigensolver failed "
                             f"({exc}); check the bandwidth against the data's spread") from None
    elif solver == "randomized":
        if isinstance(A, LinearOperator):
            raise ValueError("eigen_solver='randomized' needs the dense Gram; use 'arpack' for operators")
        # For a PSD matrix the SVD is the eigendecomposition.
        U, w, _ = randomized_svd(A, k, n_oversamples=max(10, k), n_iter=7, random_state=derive_seed(rng))
        V = U
    else:  # pragma: no cover - validated before
        raise ValueError(solver)
    order = np.argsort(w)[::-1]
    return w[order], np.ascontiguousarray(V[:, order])
