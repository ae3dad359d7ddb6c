"""Nystroem feature map: a rank-r pseudo-inverse of the landmark Gram, batch or streaming."""

from __future__ import annotations

import numbers
from typing import ClassVar, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, KernelParams, RandomStateLike
from ..kernels.blocks import kernel_blocks, pairwise_kernel
from ..kernels.selection import KERNEL_CONSTRAINTS, KernelEstimatorMixin
from ..utils.array_api import array_namespace, fitted_namespace, host_array, host_rows, move_state_to
from ..utils.eigen import canonical_eigenvectors, drop_noise_eigenpairs, landmark_solver, top_eigenpairs
from ..utils.estimator_checks import Interval, StrOptions
from ..utils.validation import check_input, check_input_xp, check_n_features
from ..utils.warnings import warn as _warn
from .landmark_estimator import LandmarkMapMixin
from .landmarks import AUTO_MIN_LANDMARKS, ReservoirSampler


def landmark_gram64(landmarks, kernel):
    """The landmark Gram ``K(L, L)`` in float64 (small; its spectrum is what gets inverted)."""
    L64 = landmarks.astype(np.float64) if sp.issparse(landmarks) else np.asarray(landmarks, dtype=np.float64)
    return pairwise_kernel(L64, kernel=kernel)


class Nystroem(
    KernelEstimatorMixin, LandmarkMapMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Nystroem feature map from ``m`` uniformly drawn landmarks, rank ``r``.

    Parameters
    ----------
    n_landmarks : int or "auto", default="auto"
        Number ``m`` of landmarks drawn from X (ignored when ``landmarks`` is
        given); ``"auto"`` is ``max(200, N // 100)`` capped at 4096 and at ``N``,
        as for the other landmark estimators.  ``partial_fit`` does not know the
        stream's length: there ``"auto"`` keeps a reservoir of 200 (the rule's
        floor); give an int to keep more.  (Before 0.2 the default was 100.)
    n_components : int or None, default=None
        Rank ``r <= m`` of the pseudo-inverse (output dimension).  None keeps
        every eigenvalue above ``eigenvalue_tol * lambda_max``.
    kernel : str or Kernel, default="gaussian"
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
        Bandwidth ``h`` of ``exp(-||x-y||^2 / h^2)``, or the heuristic that
        sets it on the data given to ``fit`` (the first block in ``partial_fit``).
    kernel_params : dict, optional
        ``degree``, ``gamma``, ``coef0`` of the polynomial kernel.
    replace : bool, default=False
        Draw landmarks with replacement (then ``m`` may exceed ``n_samples``;
        duplicates make the landmark Gram singular -- see ``eigenvalue_tol``).
    landmarks : array-like or CSR of shape (m, n_features), optional
        Use these landmarks instead of drawing them.
    eigenvalue_tol : float in [0, 1), default=1e-10
        Eigenvalues of the landmark Gram below ``eigenvalue_tol * lambda_max``
        are treated as zero and their components dropped; if ``n_components``
        asked for them, one ``RuntimeWarning`` says how many.
    random_state : int, Generator or None
        Seeds the landmark draw (and the bandwidth heuristic).

    Attributes
    ----------
    landmarks_ : ndarray or CSR (m, n_features)
    landmark_indices_ : ndarray of int64 (m,) or None
        Rows of X (``fit``) or stream positions (``partial_fit``) of the
        landmarks; None for user-given landmarks.
    eigenvalues_ : ndarray (r,)
        Top eigenvalues ``lambda_i`` of the landmark Gram ``W``, descending.
    eigenvectors_ : ndarray (m, r)
        Matching unit eigenvectors ``u_i`` (largest-magnitude entry positive; a canonical basis within equal
        eigenvalues).
    projection_ : ndarray (m, r)
        ``U_r Lambda_r^{-1/2}``; ``transform(X) = K(X, landmarks_) @ projection_``.
    n_components_ : int
        Output dimension ``r`` actually used.
    kernel_ : Kernel
    n_samples_seen_ : int
        Rows seen by ``partial_fit`` (``fit``: rows of X).

    Notes
    -----
    With ``W = K(L, L) = sum_i lambda_i u_i u_i^T`` and the rank-r
    pseudo-inverse ``W_r^+ = sum_{i <= r} u_i u_i^T / lambda_i`` (Mahdavi et
    al.'s ``W_hat``), the Nystroem approximation of ``K = K(X, X)`` is
    ``K_r_hat = K_b W_r^+ K_b^T`` with ``K_b = K(X, L)``.  The feature map
    ``phi(x) = k_b(x)^T U_r Lambda_r^{-1/2}`` satisfies
    ``phi(x)^T phi(y) = K_r_hat(x, y)``.  With ``r = m = n_samples`` and
    landmarks = X, ``K_r_hat = K`` exactly.

    ``K - K_r_hat`` is positive semi-definite (a Schur complement, minus a
    further PSD truncation), so its trace -- :meth:`trace_error`, computed
    from diagonals in O(N m) -- bounds its nuclear, Frobenius and spectral
    norms: a cheap certificate of the approximation quality on any data.

    Streaming (:meth:`partial_fit`): the landmarks are a reservoir sample of
    the stream (Ghashami et al.: reservoir samplers make Nystroem streaming),
    uniform without replacement (Algorithm L) or, with ``replace=True``,
    ``m`` independent uniform draws.  This sample is *not* the one ``fit``
    draws from the concatenated data (``fit`` calls
    :func:`sample_landmarks`), but the same seed and the same sequence of
    rows give the same landmarks however the stream is cut into blocks.
    Each call recomputes the landmark eigendecomposition (O(m^2 D + m^3)).

    Cost: ``fit`` O(m^2 D + m^3) (dense ``eigh`` in float64); ``transform``
    O(N m D + N m r) with kernel blocks under the working-memory budget and
    one GEMM per block in the input dtype.

    References
    ----------
    C. Williams, M. Seeger. Using the Nystroem method to speed up kernel
    machines. NIPS 2001.
    M. Mahdavi, T. Yang, R. Jin. An improved bound for the Nystroem method for
    large eigengap. arXiv:1209.0001, 2012 (``K_r_hat = K_b W_hat K_b^T``).
    M. Ghashami, D. Perry, J. M. Phillips. Streaming kernel principal
    component analysis. AISTATS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps import Nystroem
    >>> X = np.random.default_rng(0).normal(size=(500, 3))
    >>> ny = Nystroem(n_landmarks=50, n_components=20, bandwidth=2.0, random_state=0).fit(X)
    >>> ny.transform(X).shape
    (500, 20)
    >>> bool(ny.trace_error(X) >= 0)
    True
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    #: the fitted arrays' shapes against each other, checked when a model file is loaded ("d": n_features_in_)
    _state_shapes: ClassVar[dict[str, tuple[str, ...]]] = {
        "landmarks_": ("m", "d"),
        "landmark_indices_": ("m",),
        "eigenvectors_": ("m", "c"),
        "eigenvalues_": ("c",),
        "projection_": ("m", "c"),
    }
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_n_features_out",
        "_sampler",
        "eigenvalues_",
        "eigenvectors_",
        "kernel_",
        "landmark_indices_",
        "landmarks_",
        "n_components_",
        "n_samples_seen_",
        "projection_",
    )

    _parameter_constraints: ClassVar[dict] = {
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        **KERNEL_CONSTRAINTS,
        "replace": ["boolean"],
        "landmarks": ["array-like", "sparse matrix", None],
        "eigenvalue_tol": [Interval(numbers.Real, 0, 1, closed="left")],
    }

    #: the reservoir of landmarks of a partial_fit stream (None after fit)
    _sampler: ReservoirSampler | None

    def __init__(
        self,
        *,
        n_landmarks: int | str = "auto",
        n_components: int | None = None,
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        kernel_params: KernelParams = None,
        replace: bool = False,
        landmarks: ArrayLike | None = None,
        eigenvalue_tol: float = 1e-10,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_landmarks = n_landmarks
        self.n_components = n_components
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.replace = replace
        self.landmarks = landmarks
        self.eigenvalue_tol = eigenvalue_tol
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Draw ``n_landmarks`` rows of X uniformly (or take ``landmarks``) and factor their Gram."""
        X = self._fit_landmarks_in_memory(X)
        self._warn_if_little_captured(X)
        return self

    def _fit_from_landmarks(self, L, idx, seeds, n_rows):
        self._sampler = None
        self.n_samples_seen_ = n_rows
        self._factor(L, idx, partial=False)

    def _warn_if_little_captured(self, X, n_check=256):
        """Warn (ApproximationWarning) when the map captures under half of the kernel's trace on X.

        ``1 - trace_error / trace`` on at most ``n_check`` evenly spaced rows of X:
        ``O(n_check m)`` kernel values, no randomness consumed.
        """

        from ..utils.threads import single_threaded_blas
        from ..utils.warnings import CAPTURED_TRACE_WARN, ApproximationWarning

        n = X.shape[0]
        rows = np.unique(np.linspace(0, n - 1, num=min(n, n_check)).astype(np.int64))
        Xs = host_rows(X, rows)  # a device X: only these rows come to the host
        total = float(np.sum(self.kernel_.diag(Xs), dtype=np.float64))
        if not total > 0:
            return
        # a small pass (n_check x m kernel values): on one thread, as blas_for does for small products, so
        # OpenBLAS threads still spinning from the eigensolver do not slow it down
        with single_threaded_blas():
            captured = 1.0 - self.trace_error(Xs) / total
        if captured < CAPTURED_TRACE_WARN:
            _warn(
                f"Nystroem with {self.landmarks_.shape[0]} landmarks and rank {self.n_components_} captures only "
                f"{captured:.0%} of the kernel's trace on {len(rows)} rows of X (bandwidth "
                f"{getattr(self.kernel_, 'bandwidth', float('nan')):.4g}): its Gram approximation is poor here. "
                "More landmarks or a larger bandwidth help; kernelsketch.diagnose(X) (or `kernelsketch diagnose "
                "FILE`) measures which.",
                ApproximationWarning,
            )

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: object = None) -> Self:
        """Feed a block of the stream: update the reservoir of landmarks, refactor. Returns self.

        The kernel (and a bandwidth heuristic) is fixed on the first block.
        While fewer than ``n_landmarks`` rows have been seen (without
        replacement), all of them are landmarks and the rank is capped by
        their number.
        """
        first = getattr(self, "_sampler", None) is None
        if not first:
            fitted_namespace(self, X, "partial_fit")  # under dispatch: the stream's namespace and device
        on_device = array_namespace(X)  # the reservoir is on the host; the fitted map follows the stream's device
        if first:
            if self.landmarks is not None:
                raise ValueError(
                    "partial_fit draws landmarks from the stream; it cannot be used with user-given landmarks (use fit)"
                )
            m = AUTO_MIN_LANDMARKS if self.n_landmarks == "auto" else self.n_landmarks
            X, rng, _ = self._begin_fit(X)
            self._sampler = sampler = ReservoirSampler(m, replace=self.replace, random_state=rng)
        else:
            assert self._sampler is not None  # not the first block
            sampler = self._sampler
            if on_device is not None:  # validated on its device: the reservoir copies only the rows it keeps
                X = check_input_xp(X, on_device[0], estimator=self, reset=False)
            else:
                X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
            if sp.issparse(X) != sampler._sparse:
                raise TypeError("partial_fit blocks must all be dense or all CSR")
        sampler.partial_fit(X)
        self.n_samples_seen_ = sampler.n_seen_
        self._factor(sampler.sample_, sampler.sample_indices_, partial=True)
        if on_device is not None:
            move_state_to(self, *on_device)
        return self

    def _factor(self, L, idx, partial):
        """Rank-r eigendecomposition of the landmark Gram and the projection ``U_r Lambda_r^{-1/2}``."""
        m = L.shape[0]
        r_req = self.n_components
        if r_req is not None and r_req > m and not partial:
            raise ValueError(f"n_components={r_req} must be <= n_landmarks={m}")
        r = m if r_req is None else min(r_req, m)
        W = landmark_gram64(L, self.kernel_)
        solver = landmark_solver(m, r)
        w, U = top_eigenpairs(W, r, solver, np.random.default_rng(0))
        # Tiny eigenvalues are rounding noise (duplicate or near-duplicate
        # landmarks, fast-decaying spectra); inverting them would blow up.
        w, U = drop_noise_eigenpairs(
            w,
            U,
            n=m,
            kmax=float(np.max(np.abs(W))),
            eigenvalue_tol=self.eigenvalue_tol,
            requested=r_req,
            owner="Nystroem",
            what="landmark Gram matrix",
            stacklevel=4,
        )
        self.landmarks_ = L
        self.landmark_indices_ = idx
        self.eigenvalues_ = w
        self.eigenvectors_ = canonical_eigenvectors(w, U)
        self.projection_ = self.eigenvectors_ / np.sqrt(w)
        self.n_components_ = len(w)
        self._n_features_out = len(w)
        return self

    def transform(self, X: ArrayLike) -> FloatArray:
        """Map X to ``K(X, landmarks_) U_r Lambda_r^{-1/2}`` (shape ``(N, n_components_)``)."""
        return self._map(X)

    def trace_error(self, X):
        """``tr(K - K_r_hat)`` over the rows of X, from diagonals in O(N m).

        ``sum_i k(x_i, x_i) - ||phi(x_i)||^2``: no ``N x N`` matrix is formed,
        kernel blocks respect the working-memory budget.  As ``K - K_r_hat`` is
        PSD, the value bounds ``||K - K_r_hat||_F`` and ``||K - K_r_hat||_2``.

        Returns
        -------
        float
        """
        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self)
        check_n_features(self, X)
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        L = host_array(self.landmarks_).astype(dtype, copy=False)
        P = host_array(self.projection_).astype(dtype)
        captured = 0.0
        for _, Kb in kernel_blocks(X, L, self.kernel_, validate=False):
            F = Kb @ P
            captured += float(np.einsum("ij,ij->", F, F, dtype=np.float64))
        total = float(np.sum(self.kernel_.diag(X), dtype=np.float64))
        return total - captured
