"""Eigenpairs of Gram matrices: centring, top-k solvers, and which eigenpairs are signal vs rounding noise."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsymm, dsymv
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh
from sklearn.utils.extmath import randomized_svd

from .threads import single_threaded_blas
from .validation import derive_seed, require_finite
from .warnings import warn as _warn

#: dense matrices up to this order (8 MiB in float64) run Lanczos on one BLAS thread
_SMALL_DENSE_N = 1024


def noise_floor(n, kmax, eigenvalue_tol, lambda_max):
    """Smallest eigenvalue treated as signal.

    An n x n Gram computed in float64 carries rounding noise of spectral size
    about ``n * eps * max|K_ij|``; an eigenvalue below ten times that, or
    below ``eigenvalue_tol * lambda_max`` (a relative cut for ill-conditioned
    but exact spectra), cannot be inverted or trusted.
    """
    return max(
        eigenvalue_tol * max(float(lambda_max), 0.0),
        10.0 * n * np.finfo(np.float64).eps * float(kmax),
        np.finfo(np.float64).tiny,
    )


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
            _warn(
                f"{owner}: {int(np.sum(~keep))} of the {len(w)} requested eigenvalues of the {what} are below "
                f"{floor:.3g} (numerically zero, e.g. duplicate points or a fast-decaying spectrum); their "
                f"components were dropped, keeping {int(np.sum(keep))}",
                RuntimeWarning,
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
    it (``benchmarks/results/design-measurements.md``).  ``A.T`` is the
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


def landmark_solver(n: int, k: int) -> str:
    """The eigensolver for the top ``k`` eigenpairs of a formed ``n x n`` landmark Gram.

    Few components of a large matrix: Lanczos (``"arpack"``, one-triangle BLAS products,
    a fixed start vector so the result stays a function of the matrix) is many times faster
    than a full tridiagonalisation; otherwise LAPACK's subset ``eigh`` (``"dense"``).
    Nystroem and SubsampleKPCA use it; KernelPCA's ``eigen_solver="auto"`` is a different
    rule because it also decides whether the ``n x n`` Gram is formed at all.

    Examples
    --------
    >>> landmark_solver(2000, 50), landmark_solver(2000, 500), landmark_solver(400, 5)
    ('arpack', 'dense', 'dense')
    """
    return "arpack" if n > 500 and k <= n // 10 else "dense"


def top_eigenpairs(A, k, solver, rng, tol=0.0, max_iter=None):
    """Top-k eigenpairs of a symmetric PSD matrix or LinearOperator, descending."""
    n = A.shape[0]
    if isinstance(A, np.ndarray):
        require_finite(A, "Gram matrix")
    if solver == "dense":
        w, V = scipy.linalg.eigh(A, subset_by_index=[n - k, n - 1], check_finite=False)
        if w.shape[0] < k:  # LAPACK's ?syevr may return fewer pairs than asked when eigenvalues cluster
            w, V = _all_eigenpairs_top(A, k)
    elif solver in ("arpack", "operator"):
        v0 = rng.uniform(-1, 1, n)
        dense = isinstance(A, np.ndarray)
        op = _symmetric_operator(A) if dense else A
        # A small dense matrix (<= 8 MiB, cache-resident) gains nothing from
        # BLAS threads in its matrix-vector products, and waking them for each
        # of the hundreds of products made a 1000 x 1000 Lanczos slower
        # and erratic (benchmarks/results/design-measurements.md).
        pin = single_threaded_blas() if dense and n <= _SMALL_DENSE_N else nullcontext()
        try:
            with pin:
                w, V = eigsh(op, k=k, which="LA", v0=v0, tol=tol, maxiter=max_iter)
        except ArpackNoConvergence as exc:
            raise ValueError(
                f"ARPACK did not converge to {k} eigenpairs ({exc}); raise max_iter or use eigen_solver='dense'"
            ) from None
        except ArpackError as exc:
            if dense:  # ARPACK fails on a matrix with one eigenvalue of high multiplicity (I - 11^T / n)
                w, V = _all_eigenpairs_top(A, k)
                order = np.argsort(w)[::-1]
                return w[order], np.ascontiguousarray(V[:, order])
            raise ValueError(
                f"the centred Gram matrix is numerically zero or the eigensolver failed "
                f"({exc}); check the bandwidth against the data's spread"
            ) from None
    elif solver == "randomized":
        if isinstance(A, LinearOperator):
            raise ValueError("eigen_solver='randomized' needs the dense Gram; use 'arpack' for operators")
        # For a PSD matrix the SVD is the eigendecomposition.
        U, w, _ = randomized_svd(A, k, n_oversamples=max(10, k), n_iter=7, random_state=derive_seed(rng))
        V = U
    else:  # pragma: no cover - validated before
        raise ValueError(solver)
    if w.shape[0] != k:  # pragma: no cover - every solver above returns k pairs or raises
        raise ValueError(f"the eigensolver returned {w.shape[0]} eigenpairs where {k} were asked for")
    order = np.argsort(w)[::-1]
    return w[order], np.ascontiguousarray(V[:, order])


def _all_eigenpairs_top(A, k):
    """The top ``k`` pairs from the whole dense eigendecomposition (divide and conquer: every pair, always)."""
    w, V = scipy.linalg.eigh(np.asarray(A), check_finite=False, driver="evd")
    return w[-k:], V[:, -k:]


#: entries within this relative distance of a column's largest magnitude tie for its sign
SIGN_TIE_RTOL = 1e-6


def sign_anchor(V):
    """Per column of ``V``, the row whose entry fixes the sign: the first within
    :data:`SIGN_TIE_RTOL` of the column's largest magnitude.

    ``argmax(|v|)`` alone breaks a tie between entries of equal magnitude by rounding:
    on mirror-symmetric data an eigenvector has ``v_i = -v_j`` exactly in exact
    arithmetic, and two solvers pick opposite entries, so opposite signs.  The first
    index of the near-maximal set is the same for both.
    """
    A = np.abs(V)
    top = A.max(axis=0)
    return np.argmax(A >= top * (1.0 - SIGN_TIE_RTOL), axis=0)


def canonical_eigenvectors(w, V, *, rtol=1e-9):
    """Eigenvectors in a basis that depends only on the eigenspaces, not on the solver.

    ``w`` descending, ``V`` the matching orthonormal columns (modified in place and
    returned).  A simple eigenvalue's vector is defined up to sign: its largest-|.|
    entry is made positive (the first of several within a relative ``1e-6`` of the
    largest, :func:`sign_anchor`, so that mirror-image entries do not tie by rounding).
    Eigenvalues within ``rtol * max|w|`` of their neighbour
    form a degenerate eigenspace, in which any rotation of the vectors is as valid
    (LAPACK's choice changes with the thread count, the solver and the row order of
    rounding): its columns are replaced by a basis fixed by the subspace alone.

    The rule: walk the rows of ``U`` (the group's columns) in index order and keep
    row ``i`` when its component outside the rows already kept is at least
    ``0.1 / sqrt(n)``, until ``k`` rows are kept; the columns of the
    orthogonal projector ``U U^T`` at those rows, orthonormalised by QR with a
    positive diagonal, are the basis.  ``U U^T`` is unique, so is the result
    (to rounding, unless a row's residual lies at the threshold).
    """
    w = np.asarray(w)
    if V.shape[1] == 0:
        return V
    scale = float(np.max(np.abs(w))) if w.size else 0.0
    start = 0
    k_all = V.shape[1]
    while start < k_all:
        stop = start + 1
        while stop < k_all and abs(w[stop - 1] - w[stop]) <= rtol * scale:
            stop += 1
        if stop - start == 1:
            col = V[:, start]
            i = int(sign_anchor(col[:, None])[0])
            if col[i] < 0:
                col *= -1.0
        else:
            V[:, start:stop] = _canonical_basis(V[:, start:stop])
        start = stop
    return V


def _canonical_basis(U):
    n, k = U.shape
    # Rows whose residual is below 0.1 / sqrt(n) are skipped.  After j < k rows are
    # kept the residuals' squares sum to k - j >= 1, so some row is above it: k rows
    # are always found.
    threshold = 0.1 / np.sqrt(n)
    Q = np.empty((k, k))
    rows = []
    for i in range(n):
        r = U[i].copy()
        if rows:
            B = Q[:, : len(rows)]
            r -= B @ (B.T @ r)
            r -= B @ (B.T @ r)  # twice is enough (Kahan-Parlett)
        norm = float(np.linalg.norm(r))
        if norm >= threshold:
            Q[:, len(rows)] = r / norm
            rows.append(i)
            if len(rows) == k:
                break
    if len(rows) < k:
        raise ValueError("canonical_eigenvectors needs orthonormal columns")
    # U U^T[:, rows] = U M with M = U[rows].T; M = Q' R' (R' diagonal > 0) gives the basis U Q'.
    Qm, R = np.linalg.qr(U[rows].T)
    Qm *= np.where(np.diag(R) < 0, -1.0, 1.0)[None, :]
    return U @ Qm
