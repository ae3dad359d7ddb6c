"""Kernel PCA on a uniform subsample, extended to every point (the Kernel JL paper's fast KPCA)."""

from __future__ import annotations

import numbers
from typing import ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, KernelParams, RandomStateLike
from ..kernels.selection import KERNEL_CONSTRAINTS, KernelEstimatorMixin
from ..maps.landmark_estimator import LandmarkMapMixin
from ..maps.nystroem import landmark_gram64
from ..utils.eigen import canonical_eigenvectors, centered_gram, drop_noise_eigenpairs, landmark_solver, top_eigenpairs
from ..utils.estimator_checks import Interval, StrOptions


class SubsampleKPCA(
    KernelEstimatorMixin, LandmarkMapMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Kernel PCA fitted on ``n`` uniformly drawn points, applied to all points.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components ``d <= n``; None keeps every component with an
        eigenvalue above ``eigenvalue_tol * lambda_max``.
    n_landmarks : int or "auto", default="auto"
        Subsample size ``n``; ``"auto"`` = ``max(200, N // 100)`` capped at
        4096 and at ``N`` (the paper's choice, capped).  Ignored when ``landmarks`` is given.
    kernel : str or Kernel, default="gaussian"
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
    kernel_params : dict, optional
    landmarks : array-like or CSR of shape (n, n_features), optional
        Use these points as the subsample.
    eigenvalue_tol : float in [0, 1), default=1e-10
        Components with eigenvalue below ``eigenvalue_tol * lambda_max`` are
        dropped (one ``RuntimeWarning`` if ``n_components`` asked for them).
    scaling : {"kpca", "paper"}, default="kpca"
        ``"kpca"``: the i-th coordinate is the projection on the i-th unit
        eigenfunction, ``sum_j alpha_ij k_c(x, x_j) / sqrt(lambda_i)`` (kernel
        PCA's coordinates, as :class:`KernelPCA` and scikit-learn's; ``n = N``
        gives exact kernel PCA).  ``"paper"``: the Kernel JL paper's literal
        map ``sum_j alpha_ij K(x, x_j)`` with unit-norm eigenvectors ``alpha``,
        i.e. the ``"kpca"`` coordinates times ``sqrt(lambda_i)`` (plus a
        constant).  The two differ by a per-coordinate weight, which is *not*
        harmless for k-means: ``"paper"`` weights the leading components more
        (their spread grows like ``lambda_i`` instead of ``sqrt(lambda_i)``).
    random_state : int, Generator or None
        Seeds the subsample and the bandwidth heuristic.

    Attributes
    ----------
    eigenvalues_ : ndarray (d,)
        Eigenvalues of the centred subsample Gram ``H K H``, descending.
    eigenvectors_ : ndarray (n, d)
        Unit eigenvectors ``alpha`` (largest-magnitude entry positive; a canonical basis within equal eigenvalues).
    explained_variance_ : ndarray (d,)
        ``eigenvalues_ / n``.
    projection_ : ndarray (n, d)
        ``alpha Lambda^{-1/2}`` (``alpha`` with ``scaling="paper"``).
    offset_ : ndarray (d,)
        ``-kbar^T projection_`` (centring on the subsample mean).
    landmarks_ : ndarray or CSR (n, n_features)
    landmark_indices_ : ndarray of int64 (n,) or None
    kernel_ : Kernel

    Notes
    -----
    With ``H K H = sum_i lambda_i alpha_i alpha_i^T`` on the subsample, a
    point ``x`` maps to ``sum_j alpha_ij k_c(x, x_j) / sqrt(lambda_i)``,
    where ``k_c`` is the kernel centred on the subsample mean in feature
    space (as in :class:`KernelPCA`): its projection on the i-th unit
    eigenfunction of the subsample's centred covariance operator.  (The
    paper writes ``sum_j alpha_j K(x, x_j)``: ``scaling="paper"``.  The
    ``lambda^{-1/2}`` rescales each coordinate by its own factor, which
    changes what k-means sees, and makes ``n = N`` reproduce exact KPCA.)
    As ``k_c(x) = H (k(x) - kbar)`` and ``H alpha = alpha`` (eigenvectors of
    ``H K H`` with nonzero eigenvalue are orthogonal to 1), the map is
    ``k(x)^T P - kbar^T P`` with ``P = alpha Lambda^{-1/2}``: one GEMM per
    kernel block plus a constant row.

    Cost: O(n^2 D + n^3) to fit (dense ``eigh`` in float64); O(N n D + N n d)
    to transform, blocks under the working-memory budget.

    References
    ----------
    S. Kpotufe, B. K. Sriperumbudur. Gaussian sketching yields a J-L lemma in
    RKHS. AISTATS 2020 (Section 5, "fast implementation" of KPCA).
    B. Schoelkopf, A. Smola, K.-R. Mueller. Nonlinear component analysis as a
    kernel eigenvalue problem. Neural Computation 10(5), 1998.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.decomposition import SubsampleKPCA
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> Z = SubsampleKPCA(n_components=5, random_state=0).fit(X).transform(X)
    >>> Z.shape
    (2000, 5)
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_n_features_out",
        "eigenvalues_",
        "eigenvectors_",
        "explained_variance_",
        "kernel_",
        "landmark_indices_",
        "landmarks_",
        "n_landmarks_",
        "offset_",
        "projection_",
    )

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        **KERNEL_CONSTRAINTS,
        "landmarks": ["array-like", "sparse matrix", None],
        "eigenvalue_tol": [Interval(numbers.Real, 0, 1, closed="left")],
        "scaling": [StrOptions({"kpca", "paper"})],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        n_landmarks: int | str = "auto",
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        kernel_params: KernelParams = None,
        landmarks: ArrayLike | None = None,
        eigenvalue_tol: float = 1e-10,
        scaling: str = "kpca",
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.landmarks = landmarks
        self.eigenvalue_tol = eigenvalue_tol
        self.scaling = scaling
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Draw the subsample and eigendecompose its centred Gram. Returns self."""
        self._fit_landmarks_in_memory(X)
        return self

    def _fit_from_landmarks(self, L, idx, seeds, n_rows):
        n = L.shape[0]
        k_req = self.n_components
        if k_req is not None and k_req > n:
            raise ValueError(f"n_components={k_req} must be <= n_landmarks={n}")
        k = n if k_req is None else k_req
        K = landmark_gram64(L, self.kernel_)
        kmax = float(np.max(np.abs(K)))
        Kc, kbar, _ = centered_gram(K)
        # few components of a large subsample: Lanczos with one-triangle products;
        # a fixed start vector keeps the result a function of the landmarks alone
        solver = landmark_solver(n, k)
        w, V = top_eigenpairs(Kc, k, solver, np.random.default_rng(0))
        w, V = drop_noise_eigenpairs(
            w,
            V,
            n=n,
            kmax=kmax,
            eigenvalue_tol=self.eigenvalue_tol,
            requested=k_req,
            owner="SubsampleKPCA",
            what="centred subsample Gram matrix",
        )
        V = canonical_eigenvectors(w, V)
        P = V / np.sqrt(w) if self.scaling == "kpca" else V.copy()
        P -= P.mean(axis=0)  # H P: exact one-GEMM centring (see Notes)
        self.eigenvalues_ = w
        self.eigenvectors_ = V
        self.explained_variance_ = w / n
        self.projection_ = P
        self.offset_ = -(kbar @ P)
        self.landmarks_ = L
        self.landmark_indices_ = idx
        self.n_landmarks_ = n
        self._n_features_out = len(w)

    def transform(self, X: ArrayLike) -> FloatArray:
        """Project X on the subsample's kernel principal components (centred)."""
        return self._map(X)
