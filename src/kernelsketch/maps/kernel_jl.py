"""Kernel Johnson-Lindenstrauss map: a Gaussian sketch of a subsample Gram (Kpotufe & Sriperumbudur)."""

from __future__ import annotations

import numbers
from typing import ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, KernelParams, RandomStateLike
from ..kernels.selection import KERNEL_CONSTRAINTS, KernelEstimatorMixin
from ..utils.estimator_checks import Interval, StrOptions
from ..utils.threads import blas_for
from .landmark_estimator import LandmarkMapMixin
from .nystroem import landmark_gram64


class KernelJL(
    KernelEstimatorMixin, LandmarkMapMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Kernel JL: random projection in the RKHS through a Gaussian sketch ``Z K``.

    Parameters
    ----------
    n_components : int >= 1
        Sketch dimension ``d`` (required; the paper's clustering experiments
        use ``d = 10 k`` for ``k`` clusters).  ``d`` may exceed ``n``.
    n_landmarks : int or "auto", default="auto"
        Subsample size ``n``; ``"auto"`` is the paper's ``max(200, N // 100)``,
        capped at 4096 (:data:`~kernelsketch.maps.landmarks.AUTO_MAX_LANDMARKS`) and at ``N``.  Ignored when
        ``landmarks`` is given.
    centered : bool, default=True
        Centre the feature maps on the subsample mean (the paper's
        "centralized" K-JL, used in its figures and clustering experiments);
        False gives the plain sketch of Theorem 1.
    scaling : {"unit", "paper"}, default="unit"
        ``"paper"`` keeps the paper's normalisation ``V_hat = K Z^T / (n sqrt(n d))``
        exactly; its coordinates are tiny (standard deviation around ``1e-3``), which
        k-means and the theorem do not mind but scale-sensitive models downstream
        (logistic regression, SVMs with default ``C``) do.  ``"unit"`` multiplies
        ``V_hat`` by one scalar, ``scale_``, chosen so that the subsample's
        coordinates have mean square 1: distances and inner products keep their
        ratios (Theorem 1's inner products are multiplied by ``scale_ ** 2``), so
        clusterings are unchanged, and the output drops into a pipeline the way
        :class:`~kernelsketch.Nystroem`'s does.
    kernel : str or Kernel, default="gaussian"
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
        The paper uses the 25th percentile of interpoint distances (``"percentile"``).
    kernel_params : dict, optional
    landmarks : array-like or CSR of shape (n, n_features), optional
        Use these points as the subsample.
    random_state : int, Generator or None
        Seeds the subsample, the Gaussian matrix ``Z`` and the bandwidth heuristic.

    Attributes
    ----------
    landmarks_ : ndarray or CSR (n, n_features)
        The subsample ``X_sub``.
    landmark_indices_ : ndarray of int64 (n,) or None
    random_matrix_ : ndarray (d, n)
        The Gaussian matrix ``Z`` (i.i.d. N(0, 1)).
    projection_ : ndarray (n, d)
        ``P = scale_ * K Z^T / (n sqrt(n d))`` (``K`` centred when ``centered``), i.e.
        ``scale_`` times ``V_hat`` of the paper; ``transform(x) = K(x, X_sub) @ P + offset_``.
    scale_ : float
        The factor applied to the paper's ``V_hat``: 1.0 with ``scaling="paper"``,
        ``1 / sqrt(mean((K_c P_paper)^2))`` with ``scaling="unit"``.
    offset_ : ndarray (d,)
        ``-kbar^T P`` with ``kbar`` the row means of the subsample Gram
        (zeros when not centred).
    landmark_means_ : ndarray (n,) or None
        ``kbar``, when centred.
    n_landmarks_ : int
    kernel_ : Kernel

    Notes
    -----
    **Sketch.** With ``X_sub = {x_1..x_n}``, Gram ``K``, and ``Z`` a ``d x n``
    matrix of i.i.d. N(0, 1) entries, the paper's approximate random
    projection is ``V_hat^T = Z K / (n sqrt(n d))`` and a point maps to
    ``V_hat^T K(X_sub, x)``.  Theorem 1: for every ``f, g`` in the RKHS,
    ``<V_hat^T f|X, V_hat^T g|X> = <f, Sigma_n^3 g>_H + O(d^{-1/2})``
    uniformly, and ``<f, Sigma_n^3 g> -> <f, Sigma^3 g>`` at rate
    ``n^{-1/2}``, where ``Sigma_n = (1/n) sum_i k(., x_i) (x) k(., x_i)`` --
    a JL lemma for the weighted inner product ``<f, Sigma^3 g>``.

    **Centralized variant (derivation).** Replace the feature map
    ``phi(x) = k(., x)`` by ``phi_c(x) = phi(x) - mu_n`` with
    ``mu_n = (1/n) sum_j phi(x_j)``.  Its kernel is
    ``k_c(x, y) = k(x, y) - mean_j k(x, x_j) - mean_j k(y, x_j) + mean_{jl} k(x_j, x_l)``,
    a positive semi-definite kernel (given the subsample) whose empirical
    covariance operator is the *centred* covariance
    ``C_n = (1/n) sum_i phi_c(x_i) (x) phi_c(x_i)``.  Applying the sketch to
    ``k_c``: the subsample Gram becomes ``K_c = H K H`` (``H = I - 11^T/n``)
    and the cross-kernel vector of a point becomes
    ``k_c(x) = H (k(x) - kbar)`` with ``k(x) = K(X_sub, x)`` and ``kbar = K 1 / n``
    -- the centring KernelPCA's ``transform`` applies.  Since ``K_c H = K_c``,
    ``V_hat_c^T k_c(x) = Z K_c (k(x) - kbar) / (n sqrt(n d))``, i.e.
    ``transform(x) = k(x)^T P - kbar^T P`` with ``P = K_c Z^T / (n sqrt(n d))``:
    the same single GEMM per block plus a constant row ``offset_``.  Theorem 1
    holds verbatim for ``k_c`` (conditionally on the subsample), with
    ``Sigma_n`` replaced by ``C_n``: the map preserves ``<f, C_n^3 g>``, which
    weights the KPCA directions by the cube of their variance.

    **Cost.** ``fit``: O(n^2 D) for ``K`` and O(d n^2) for ``Z K`` (no
    eigendecomposition).  ``transform``: O(N n D) kernel work plus one
    ``(chunk x n) @ (n x d)`` GEMM per block, blocks sized by the
    working-memory budget, in the input dtype.

    References
    ----------
    S. Kpotufe, B. K. Sriperumbudur. Gaussian sketching yields a J-L lemma in
    RKHS. AISTATS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps import KernelJL
    >>> X = np.random.default_rng(0).normal(size=(1000, 5))
    >>> Z = KernelJL(n_components=20, random_state=0).fit_transform(X)
    >>> Z.shape
    (1000, 20)
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    #: the fitted arrays' shapes against each other, checked when a model file is loaded ("d": n_features_in_)
    _state_shapes: ClassVar[dict[str, tuple[str, ...]]] = {
        "landmarks_": ("n", "d"),
        "landmark_indices_": ("n",),
        "landmark_means_": ("n",),
        "projection_": ("n", "k"),
        "random_matrix_": ("k", "n"),
        "offset_": ("k",),
    }
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_n_features_out",
        "kernel_",
        "landmark_indices_",
        "landmark_means_",
        "landmarks_",
        "n_landmarks_",
        "offset_",
        "projection_",
        "random_matrix_",
        "scale_",
    )

    n_seeds_before_landmarks = 1  # the Gaussian matrix's seed
    # Model files written before ``scaling`` existed hold the paper's V_hat.
    _before_parameter_added: ClassVar[dict] = {"scaling": ("paper", {"scale_": 1.0})}

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "centered": ["boolean"],
        "scaling": [StrOptions({"unit", "paper"})],
        **KERNEL_CONSTRAINTS,
        "landmarks": ["array-like", "sparse matrix", None],
    }

    def __init__(
        self,
        *,
        n_components: int | None = None,
        n_landmarks: int | str = "auto",
        centered: bool = True,
        scaling: str = "unit",
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        kernel_params: KernelParams = None,
        landmarks: ArrayLike | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.centered = centered
        self.scaling = scaling
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.landmarks = landmarks
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Draw the subsample, form its Gram once and the projection ``P``. Returns self."""
        self._fit_landmarks_in_memory(X)
        return self

    def _check_fit_params(self):
        if self.n_components is None:
            raise ValueError(
                "KernelJL needs n_components (the sketch dimension d >= 1); "
                "the paper uses d = 10 * n_clusters for clustering"
            )

    def _fit_from_landmarks(self, L, idx, seeds, n_rows):
        # The Gaussian matrix gets its own stream, drawn before the landmarks:
        # every fitting path (in memory, a file, Dask) draws the same Z.
        (z_seed,) = seeds
        z_rng = np.random.default_rng(z_seed)
        n, d = L.shape[0], self.n_components
        K = landmark_gram64(L, self.kernel_)
        if self.centered:
            # K <- H K H (doubly centred), kbar = K 1 / n
            kbar = K.mean(axis=1)
            K -= kbar[:, None]
            K -= kbar[None, :]
            K += kbar.mean()
        Z = z_rng.standard_normal((d, n))
        # V_hat^T = Z K / (n sqrt(n d)); K symmetric so P = V_hat = K Z^T / (n sqrt(n d)).
        with blas_for(2.0 * n * n * d):  # small: leave no spinning BLAS threads behind for transform
            P = (K @ Z.T) / (n * np.sqrt(n * d))
        if self.centered:
            # H P = P in exact arithmetic (H K_c = K_c); re-centring makes the
            # one-GEMM form k(x)^T P - kbar^T P exact to rounding.
            P -= P.mean(axis=0)
            self.landmark_means_ = kbar
        scale = 1.0
        if self.scaling == "unit":
            # The subsample's own coordinates are K_c P (K P when not centred):
            # one scalar makes their mean square 1 without changing any ratio.
            with blas_for(2.0 * n * n * d):
                mean_sq = float(np.mean(np.square(K @ P)))
            if mean_sq > 0.0 and np.isfinite(mean_sq):
                scale = 1.0 / np.sqrt(mean_sq)
                P *= scale
        if self.centered:
            self.offset_ = -(kbar @ P)
        else:
            self.offset_ = np.zeros(d)
            self.landmark_means_ = None
        self.scale_ = float(scale)
        self.landmarks_ = L
        self.landmark_indices_ = idx
        self.random_matrix_ = Z
        self.projection_ = P
        self.n_landmarks_ = n
        self._n_features_out = d

    def transform(self, X: ArrayLike) -> FloatArray:
        """Map each x to ``V_hat^T K(X_sub, x)`` (centred if ``centered``), block by block."""
        return self._map(X)
