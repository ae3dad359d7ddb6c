"""k-means for data streamed in row blocks: seeded on a sample, refined by exact Lloyd passes.

The embedding of a large file never exists in memory at once, so the
clustering step works from what a stream of blocks can give cheaply:

1. **Seeding on a sample.** k-means++ (scikit-learn's algorithm,
   :func:`~kernelsketch.kernels.kmeans_plusplus.kmeans_plusplus`) on a uniform sample of
   ``init_size`` rows, refined there by Lloyd iterations to convergence; the best of ``n_init`` starts (compared on a
   subsample) is kept.
2. **Exact Lloyd passes.** Each pass assigns every block to its nearest
   centre and accumulates per-cluster sums and counts (one GEMM per block for
   the distances, one for the sums); the new centres are ``sums / counts``.
   These passes are the Lloyd iterations of full-data k-means, computed
   block by block, so with enough passes the result is the full-data local
   optimum reached from the sample's centres.
3. **Assignment.** ``predict`` maps each block to its nearest centre; the
   out-of-core driver (:func:`kernelsketch.cluster_file`) streams these labels
   to the output.

Cost: seeding ``O(n_init * init_size * k * d * iters)``; each full pass
``O(N k d)`` (two GEMMs per block) plus the cost of producing the blocks;
memory ``O(init_size * d + block * k)``.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, FloatArray, NDArray, RandomStateLike
from ..kernels.kmeans_plusplus import kmeans_plusplus
from ..kernels.lloyd import (
    _centers_from,
    _mean_variance,
    _sq_norms,
    assign,
    assign_with_statistics,
    kmeans_on_sample,
    lloyd_statistics,
)
from ..kernels.neighbors import search_origin
from ..utils.estimator_checks import HasMethods, Interval
from ..utils.validation import check_input, check_n_features, check_random_state

__all__ = ["StreamingKMeans", "assign_with_statistics", "lloyd_statistics"]

#: rows used for seeding when ``init_size=None`` (all rows when there are fewer)
DEFAULT_INIT_SIZE = 100_000


class StreamingKMeans(ClusterMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""k-means that never needs all rows at once: sample seeding, exact Lloyd passes, streamed assignment.

    Parameters
    ----------
    n_clusters : int, default=8
        Number ``k`` of clusters.
    init_size : int or None, default=None
        Rows of the uniform sample that k-means++ seeds on (and Lloyd refines
        before the full passes).  None: ``min(N, 100_000)``.  When the sample
        is all of X, ``fit`` is plain Lloyd k-means with k-means++ seeding.
    n_init : int, default=3
        k-means++ starts; each is refined by Lloyd on a subsample of
        ``max(5000, 50 k)`` rows of the sample, and the one with the lowest
        inertia there is refined on the whole sample.  More than one start
        guards against the poor local optima a single k-means++ start
        sometimes falls into (two centres in one of well-separated clusters).
    max_iter : int, default=100
        Exact Lloyd passes over all rows in :meth:`fit` (each pass: one read of
        X, two GEMMs per block).
    tol : float, default=1e-4
        Stop when the squared centre shift of a pass, summed over centres, is at
        most ``tol`` times the mean per-feature variance of the data (the
        sample's, scikit-learn's convention).
    search : searcher object or None, default=None
        Every nearest-centre step (seeding's Lloyd, the passes, ``predict``): an object with
        ``build(points)`` and ``search(X, r)`` (:mod:`kernelsketch.kernels.search`, e.g. faiss's);
        None: the package's tiled GEMM.
    random_state : int, Generator or None
        Seeds the sample and k-means++.

    Attributes
    ----------
    cluster_centers_ : ndarray (n_clusters, n_features)
    labels_ : ndarray of int64 (N,)
        Nearest centre of every row of the data given to ``fit`` (consistent
        with ``cluster_centers_``).
    inertia_ : float
        Sum of squared distances of the rows to their nearest centre.
    n_iter_ : int
        Lloyd passes over all rows made by ``fit``.
    n_steps_ : int
        Blocks absorbed by ``partial_fit``.
    counts_ : ndarray (n_clusters,)
        Rows each centre has absorbed (``partial_fit``'s learning rates).

    Notes
    -----
    **fit.** k-means++ seeding and Lloyd on a sample of ``init_size`` rows,
    then Lloyd passes over all rows, block by block: each pass computes the
    distances ``||x||^2 - 2 x c^T + ||c||^2`` with one GEMM per block and the
    per-cluster sums with a second (a one-hot matrix), so memory is one
    block plus the centres.  A pass is exactly one Lloyd iteration of full-data
    k-means.  On data that fit in memory this is scikit-learn's Lloyd k-means
    (labels agree with :class:`sklearn.cluster.KMeans`, tested); on data that
    do not, :func:`kernelsketch.cluster_file` runs the same steps with the
    rows recomputed (or re-read) pass by pass.

    **partial_fit.** Mini-batch k-means (Sculley 2010): the first call
    seeds with k-means++ on its block (at least ``n_clusters`` rows), every
    call moves each centre towards the mean of its rows in the block with
    learning rate ``n_block / n_total`` of that centre, so a centre is the
    running mean of every row ever assigned to it.

    References
    ----------
    S. Lloyd. Least squares quantization in PCM. IEEE Trans. Inf. Theory 28(2), 1982.
    D. Arthur, S. Vassilvitskii. k-means++: the advantages of careful seeding. SODA 2007.
    D. Sculley. Web-scale k-means clustering. WWW 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.cluster import StreamingKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 0.3, (500, 2)), rng.normal(4, 0.3, (500, 2))])
    >>> km = StreamingKMeans(2, init_size=100, random_state=0).fit(X)
    >>> sorted(np.bincount(km.labels_).tolist())
    [500, 500]
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_n_features_out",
        "_sample_iter",
        "_tol_abs",
        "cluster_centers_",
        "counts_",
        "inertia_",
        "labels_",
        "n_iter_",
        "n_steps_",
    )

    #: the fitted arrays' shapes against each other, checked when a model file is loaded ("d": n_features_in_)
    _state_shapes: ClassVar[dict[str, tuple[str, ...]]] = {"cluster_centers_": ("k", "d"), "counts_": ("k",)}

    #: the parameters that set the output dimension and the approximation"s size (the CLI"s -d and -n)
    _dim_param: ClassVar[str | None] = None
    _size_param: ClassVar[str | None] = None

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "init_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "search": [HasMethods(["build", "search"]), None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        init_size: int | None = None,
        n_init: int = 3,
        max_iter: int = 100,
        tol: float = 1e-4,
        search: Any = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.init_size = init_size
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.search = search
        self.random_state = random_state

    # -- the pieces the out-of-core driver calls ---------------------------
    def sample_indices(self, n_rows, rng):
        """Sorted row indices of the seeding sample (all rows when they fit)."""
        size = DEFAULT_INIT_SIZE if self.init_size is None else int(self.init_size)
        if size >= n_rows:
            return np.arange(n_rows, dtype=np.int64)
        return np.sort(rng.choice(n_rows, size, replace=False)).astype(np.int64)

    def seed_on_sample(self, n_rows, embedded_rows, rng):
        """The one "embed, then k-means on a sample" step of every clustering path: ``(indices, sample)``.

        Draws the seeding sample's row indices from ``n_rows`` (:meth:`sample_indices`), asks
        ``embedded_rows(indices)`` for those rows' coordinates (from an array in memory, a file or
        a Dask array: the caller's business), then :meth:`seed` on them, the same generator ``rng``
        for both draws.  ``LandmarkSpectralClustering.fit``, ``fit_source`` of a clusterer and
        :func:`~kernelsketch.cluster_file` all call this, so they draw the same sample and the same
        k-means++ starts for a seed.
        """
        idx = self.sample_indices(n_rows, rng)
        if idx.size < self.n_clusters:
            raise ValueError(
                f"init_size={self.init_size} rows cannot seed n_clusters={self.n_clusters} clusters: the k-means "
                f"sample needs at least one row per cluster ({self.n_clusters} or more; None: min(N, 100,000))"
            )
        sample = embedded_rows(idx)
        self.seed(sample, rng)
        return idx, sample

    def seed(self, sample, rng):
        """k-means++ and Lloyd on ``sample`` (best of ``n_init``); sets ``cluster_centers_``. Returns self.

        :func:`~kernelsketch.kernels.lloyd.kmeans_on_sample`, the k-means the landmark selection
        ``KMeansLandmarks`` runs too.
        """
        self._validate_params()
        sample = check_input(sample, accept_sparse=("csr",), name="sample")
        centers, n_iter, self._tol_abs = kmeans_on_sample(
            sample, self.n_clusters, rng, n_init=self.n_init, tol=self.tol, search=self.search
        )
        k = self.n_clusters
        self.cluster_centers_ = centers
        self._sample_iter = n_iter
        self.n_features_in_ = sample.shape[1]
        self._n_features_out = k
        self.counts_ = np.zeros(k)
        return self

    def update(self, sums, counts):
        """Lloyd step from full-data statistics (:func:`lloyd_statistics` summed over blocks).

        Returns the squared centre shift (summed over centres).
        """
        new = _centers_from(
            np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64), self.cluster_centers_
        )
        shift = float(((new - self.cluster_centers_) ** 2).sum())
        self.cluster_centers_ = new
        return shift

    def converged(self, shift):
        """Whether a pass that moved the centres by ``shift`` meets ``tol``."""
        return shift <= getattr(self, "_tol_abs", 0.0)

    # -- scikit-learn API ----------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Seed on a sample of X, then Lloyd passes over all of X block by block. Returns self."""
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)
        N = X.shape[0]
        if self.n_clusters > N:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={N}")
        rng = check_random_state(self.random_state)
        idx, _ = self.seed_on_sample(N, lambda idx: X[idx] if idx.size < N else X, rng)
        self._tol_abs = self.tol * _mean_variance(X)
        n_iter = self._sample_iter  # Lloyd on the sample ran on every row when the sample is all of X
        if idx.size < N:  # the sample's Lloyd already ran on all rows otherwise
            for n_iter in range(1, self.max_iter + 1):  # noqa: B007 (read after the loop)
                sums, counts, _ = lloyd_statistics(X, self.cluster_centers_, self.search)
                if self.converged(self.update(sums, counts)):
                    break
        self.n_iter_ = n_iter
        self.labels_, dist = self._assign(X)
        self.inertia_ = float(dist.sum())
        self.counts_ = np.bincount(self.labels_, minlength=self.n_clusters).astype(np.float64)
        self.n_steps_ = 0
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: object = None) -> Self:
        """Mini-batch update with one block (the first block seeds by k-means++). Returns self."""
        first = not hasattr(self, "cluster_centers_")
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=first)
        if first:
            if X.shape[0] < self.n_clusters:
                raise ValueError(
                    f"the first block has {X.shape[0]} rows; partial_fit needs at least "
                    f"n_clusters={self.n_clusters} to seed the centres"
                )
            rng = check_random_state(self.random_state)
            origin = None if sp.issparse(X) else search_origin(X, np.float64)
            shift = 0.0 if origin is None else origin
            seed = int(rng.integers(0, 2**31 - 1))
            init, _ = kmeans_plusplus(X if origin is None else X - origin, self.n_clusters, random_state=seed)
            self.cluster_centers_ = np.asarray(init, dtype=np.float64) + shift
            self.counts_ = np.zeros(self.n_clusters)
            self.n_steps_ = 0
            self._n_features_out = self.n_clusters
        sums, counts, _ = lloyd_statistics(X, self.cluster_centers_, self.search)
        total = self.counts_ + counts
        got = counts > 0
        # running mean of every row assigned to the centre so far
        self.cluster_centers_[got] += (sums[got] - counts[got, None] * self.cluster_centers_[got]) / total[got, None]
        self.counts_ = total
        self.n_steps_ += 1
        return self

    def _assign(self, X):
        return assign(X, self.cluster_centers_, self.search)

    def predict(self, X: ArrayLike) -> NDArray[np.intp]:
        """Index of the nearest centre of each row."""
        check_is_fitted(self, "cluster_centers_")
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        return self._assign(X)[0]

    def transform(self, X: ArrayLike) -> FloatArray:
        """Euclidean distances of each row to every centre (as :meth:`sklearn.cluster.KMeans.transform`)."""
        check_is_fitted(self, "cluster_centers_")
        A = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        check_n_features(self, A)
        C = self.cluster_centers_
        origin = None if sp.issparse(A) else search_origin(C, A.dtype)
        if origin is not None:  # far from the origin: measured from the centres' mean (as the assignment is)
            A, C = A - origin, C - origin
        C = C.astype(A.dtype, copy=False)
        D = np.asarray(A @ C.T) * -2.0
        D += np.einsum("ij,ij->i", C, C)[None, :]
        D += _sq_norms(A)[:, None]
        return np.sqrt(np.maximum(D, 0.0))

    def score(self, X: ArrayLike, y: object = None) -> float:
        """Opposite of the inertia of X (higher is better, as :meth:`sklearn.cluster.KMeans.score`)."""
        check_is_fitted(self, "cluster_centers_")
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        return -float(self._assign(X)[1].sum())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
