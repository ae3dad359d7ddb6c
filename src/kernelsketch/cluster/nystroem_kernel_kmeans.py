"""Kernel k-means through a rank-d Nystroem embedding (as the Kernel JL paper runs it)."""

from __future__ import annotations

import contextlib
import numbers
import warnings
from typing import ClassVar, Self

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.cluster import KMeans
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, KernelParams, NDArray, RandomStateLike
from ..kernels.selection import KERNEL_CONSTRAINTS, KernelEstimatorMixin
from ..maps.landmarks import resolve_n_landmarks
from ..maps.nystroem import Nystroem
from ..utils.array_api import array_namespace, fitted_namespace, move_state_to, to_numpy
from ..utils.dispatch import maybe_dask_transform
from ..utils.estimator_checks import Interval, StrOptions
from ..utils.validation import check_input, check_input_xp, check_random_state


class NystroemKernelKMeans(
    KernelEstimatorMixin, ClusterMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Kernel k-means on the Nystroem approximation ``K(N,n) K_(d)^+ K(N,n)^T``.

    Parameters
    ----------
    n_clusters : int, default=8
        Number ``k`` of clusters of the k-means step.
    n_components : int or None, default=None
        Rank ``d`` of the pseudo-inverse of the subsample Gram; None means the
        paper's ``d = 10 * n_clusters``, capped at ``n`` (and, silently, at the
        numerical rank of the subsample Gram; an explicit ``d`` above that rank
        warns).
    n_landmarks : int or "auto", default="auto"
        Subsample size ``n``; ``"auto"`` = ``max(200, N // 100)`` capped at 4096 and at ``N``.
        Ignored when ``landmarks`` is given.
    kernel : str or Kernel, default="gaussian"
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
    kernel_params : dict, optional
    landmarks : array-like or CSR, optional
        Use these points as the subsample.
    n_init : int, default=10
        Runs of :class:`sklearn.cluster.KMeans` (best inertia kept).
    max_iter : int, default=300
        Lloyd iterations per run.
    random_state : int, Generator or None
        Seeds the subsample, the bandwidth heuristic and k-means.

    Attributes
    ----------
    labels_ : ndarray of int (N,)
    cluster_centers_ : ndarray (n_clusters, d)
        Centres in the embedding space (``transform`` coordinates).
    inertia_ : float
        Kernel k-means objective under ``K_tilde_N``: sum of squared
        feature-space distances to the assigned centres.
    nystroem_ : Nystroem
        The fitted embedding.
    kmeans_ : sklearn.cluster.KMeans
    n_components_ : int

    Notes
    -----
    Kernel k-means with Gram ``K_tilde_N = K_(N,n) K_(d)^+ K_(N,n)^T`` only
    depends on the distances ``K_tilde_ii + K_tilde_jj - 2 K_tilde_ij``.  The
    Nystroem features ``F = K_(N,n) U_d Lambda_d^{-1/2}`` satisfy
    ``F F^T = K_tilde_N``, and so do the rows of ``K_tilde_N^{1/2}`` (the
    paper's embedding): the two differ by an orthogonal map, so plain k-means
    on the ``N x d`` matrix ``F`` is exactly kernel k-means with
    ``K_tilde_N``, without the ``N x N`` square root.

    Cost: Nystroem ``fit`` O(n^2 D + n^3), embedding O(N n D + N n d),
    k-means O(N d k) per Lloyd iteration.

    References
    ----------
    S. Kpotufe, B. K. Sriperumbudur. Gaussian sketching yields a J-L lemma in
    RKHS. AISTATS 2020 (Section 5.2, K-k-means baseline).
    S. Wang, A. Gittens, M. W. Mahoney. Scalable kernel k-means clustering with
    Nystroem approximation: relative-error bounds. JMLR 20(12), 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.cluster import NystroemKernelKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 0.3, (100, 2)), rng.normal(3, 0.3, (100, 2))])
    >>> labels = NystroemKernelKMeans(n_clusters=2, random_state=0).fit_predict(X)
    >>> sorted(np.bincount(labels).tolist())
    [100, 100]
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_n_features_out",
        "cluster_centers_",
        "inertia_",
        "kmeans_",
        "labels_",
        "n_components_",
        "n_iter_",
        "nystroem_",
    )

    #: how the out-of-core driver (files, Dask) fits it (:data:`kernelsketch.out_of_core.FIT_STRATEGIES`)
    _fit_strategy: ClassVar[str] = "landmarks_then_sample"
    #: the parameters that set the output dimension and the approximation"s size (the CLI"s -d and -n)
    _dim_param: ClassVar[str | None] = "n_components"
    _size_param: ClassVar[str | None] = "n_landmarks"

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        **KERNEL_CONSTRAINTS,
        "landmarks": ["array-like", "sparse matrix", None],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        n_components: int | None = None,
        n_landmarks: int | str = "auto",
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        kernel_params: KernelParams = None,
        landmarks: ArrayLike | None = None,
        n_init: int = 10,
        max_iter: int = 300,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.landmarks = landmarks
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Embed X with rank-d Nystroem, then run k-means. Returns self."""
        if (on_device := array_namespace(X)) is not None:  # a PyTorch / CuPy / ... array
            return self._fit_on_device(X, *on_device)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)
        nystroem, seed_km = self._plan_embedding(X.shape[0])
        with self._embedding_warnings():
            self.nystroem_ = nystroem.fit(X)
        self.n_features_in_ = X.shape[1]
        self._fit_clusters(self.nystroem_.transform(X), seed_km)
        return self

    def _fit_on_device(self, X, xp, device):
        """``fit`` of a device array: the embedding's fit and map on the device (Nystroem's device
        route); k-means itself (scikit-learn's, the host fit's) on the embedded rows, copied to
        the host (``N x d``, d = 10 k by default); the fitted model then lives on the device."""
        X = check_input_xp(X, xp, estimator=self, reset=True)
        nystroem, seed_km = self._plan_embedding(X.shape[0])
        with self._embedding_warnings():
            self.nystroem_ = nystroem.fit(X)
        self._fit_clusters(to_numpy(self.nystroem_.transform(X), xp), seed_km)
        move_state_to(self, xp, device)
        return self

    def _assign_on_device(self, X, xp):
        """(embedding, squared distances to the centres up to each row's constant ``|e|^2``) on the device."""
        E = self.nystroem_.transform(X)
        C = xp.astype(self.cluster_centers_, E.dtype)
        return E, xp.sum(C * C, axis=1)[None, :] - 2.0 * (E @ xp.matrix_transpose(C))

    def _plan_embedding(self, N):
        """The unfitted Nystroem embedding of ``N`` rows and k-means' seed, in fit's order of draws.

        The embedding is then fitted like any landmark estimator (in memory, or by the
        out-of-core driver through the same seams), and :meth:`_fit_clusters` runs
        k-means on embedded rows.
        """
        if self.n_clusters > N:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={N}")
        rng = check_random_state(self.random_state)
        # two independent seeds: the embedding's and k-means'
        seed_map, seed_km = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        if self.landmarks is not None:
            n = check_input(self.landmarks, accept_sparse=("csr",), name="landmarks").shape[0]
        else:
            n = resolve_n_landmarks(self.n_landmarks, N)
        d = min(10 * self.n_clusters, n) if self.n_components is None else self.n_components
        if d > n:
            raise ValueError(f"n_components={d} must be <= n_landmarks={n}")
        nystroem = Nystroem(
            n_landmarks=n,
            n_components=d,
            kernel=self.kernel,
            bandwidth=self.bandwidth,
            gamma=self.gamma,
            kernel_params=self.kernel_params,
            landmarks=self.landmarks,
            random_state=seed_map,
        )
        return nystroem, seed_km

    @contextlib.contextmanager
    def _embedding_warnings(self):
        """Around the embedding's fit: the default d = 10 k may exceed the numerical rank of the
        landmark Gram, and dropping null directions is then expected, not news."""
        with warnings.catch_warnings():
            if self.n_components is None:
                warnings.filterwarnings("ignore", message="Nystroem: .* requested eigenvalues", category=RuntimeWarning)
            yield

    def _fit_clusters(self, E, seed_km):
        """k-means on embedded rows ``E`` with seed ``seed_km``; sets the clustering attributes."""
        self.kmeans_ = KMeans(
            n_clusters=self.n_clusters, n_init=self.n_init, max_iter=self.max_iter, random_state=seed_km
        ).fit(E)
        self.labels_ = self.kmeans_.labels_
        self.cluster_centers_ = self.kmeans_.cluster_centers_
        self.inertia_ = float(self.kmeans_.inertia_)
        self.n_iter_ = self.kmeans_.n_iter_
        self.n_components_ = self.nystroem_.n_components_
        self._n_features_out = self.n_components_

    def transform(self, X: ArrayLike) -> FloatArray:
        """The Nystroem embedding ``K(X, landmarks) U_d Lambda_d^{-1/2}`` (not distances to centres)."""
        if (Z := maybe_dask_transform(self, X)) is not None:  # a dask array: map over its blocks
            return Z
        check_is_fitted(self)
        if fitted_namespace(self, X, "transform") is not None:  # on the model's device
            return self.nystroem_.transform(X)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        return self.nystroem_.transform(X)

    def predict(self, X: ArrayLike) -> NDArray[np.intp]:
        """Index of the closest centre in the embedding space."""
        if (Z := maybe_dask_transform(self, X, method="predict")) is not None:  # a dask array: map over its blocks
            return Z
        check_is_fitted(self)
        if (ns := fitted_namespace(self, X, "predict")) is not None:  # nearest centre on the model's device
            _, D = self._assign_on_device(X, ns[0])
            return ns[0].astype(ns[0].argmin(D, axis=1), ns[0].int32)  # KMeans.predict's dtype
        return self.kmeans_.predict(self.transform(X))

    @property
    def kernel_(self):
        """The kernel of the fitted Nystroem map (its resolved bandwidth included)."""
        if "nystroem_" not in vars(self):
            raise AttributeError("kernel_ is set by fit")
        return self.nystroem_.kernel_

    def score(self, X: ArrayLike, y: object = None) -> float:
        """Label-free quality of the clustering of X: the mean silhouette of its rows in the embedding.

        :func:`kernelsketch.metrics.embedding_silhouette` of ``transform(X)`` labelled by
        :meth:`predict`, on a seeded sample of at most 2,000 rows; higher is better.  The
        silhouette is a ratio of distances, so it compares bandwidths, ranks and ``k`` in an
        unsupervised :class:`~sklearn.model_selection.GridSearchCV`.  (The k-means objective,
        which :meth:`sklearn.cluster.KMeans.score` returns, always prefers more clusters and
        cannot compare embeddings: it is ``-inertia_`` here.)
        """
        from ..metrics.clustering import embedding_silhouette

        check_is_fitted(self)
        if (ns := fitted_namespace(self, X, "score")) is not None:  # embed and assign on the model's device
            xp = ns[0]
            E, D = self._assign_on_device(X, xp)
            E, labels = to_numpy(E, xp), to_numpy(xp.argmin(D, axis=1), xp)
        else:
            E = self.transform(X)
            labels = self.kmeans_.predict(E)
        return embedding_silhouette(E, labels, random_state=0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # PyTorch / CuPy / ... input under array_api_dispatch
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
