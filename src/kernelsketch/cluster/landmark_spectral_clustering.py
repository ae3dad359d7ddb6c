"""Spectral clustering at any N: the landmark spectral embedding, then k-means on it."""

from __future__ import annotations

import numbers
from typing import ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, NDArray, RandomStateLike
from ..maps.landmark_eigen import landmark_spectrum
from ..maps.landmark_graph import sample_embedding
from ..maps.landmark_spectral import (
    _HEURISTICS,
    STATISTICS_ROWS,
    LandmarkSpectralEmbedding,
    graph_warnings_deferred,
    rows_in_memory,
    user_searcher,
)
from ..metrics.clustering import relative_eigengap
from ..utils.estimator_checks import HasMethods, Interval, StrOptions
from ..utils.validation import check_input, check_random_state, derive_seed, refuse_label_like_frame
from .landmark_labels import CANDIDATES, LABELINGS
from .seeding import Seeding
from .streaming_kmeans import StreamingKMeans


def kmeans_on_embedding(n_clusters, *, n_init, random_state, **params):
    """``(StreamingKMeans, rng)`` in the driver's order of draws: the k-means of ``cluster_file``.

    The generator seeds the sample and then k-means++ (:meth:`StreamingKMeans.seed_on_sample`),
    so an in-memory fit and :func:`kernelsketch.cluster_file` give the same labels for the same
    seed.  ``params``: StreamingKMeans's other parameters (``init_size``, ``tol``).
    """
    km = StreamingKMeans(n_clusters, n_init=n_init, random_state=random_state, **params)
    return km, check_random_state(derive_seed(random_state) + 1)


class LandmarkSpectralClustering(ClusterMixin, BaseEstimator):
    r"""Spectral clustering through ``m`` landmarks: linear in ``N``, one streamed pass to fit.

    :class:`~kernelsketch.maps.LandmarkSpectralEmbedding` (each row joined to its
    ``n_neighbors`` nearest landmarks, the normalized graph's top ``k`` eigenvectors
    from an ``m x m`` problem), then k-means on the embedded rows; and Genie's hierarchy on the
    landmarks, every row taking its graph's vote, when that partition has the lower normalized
    cut (``assign_labels="auto"``, :mod:`~kernelsketch.cluster.landmark_labels`).  The command line's
    ``cluster --method spectral`` and :func:`kernelsketch.cluster_file` with
    ``embedding="spectral"`` run the same steps on data of any size, in memory, on a file
    or on Dask, with the same labels for the same seed.

    Parameters
    ----------
    n_clusters : int >= 1 or "auto", default=8
        Number ``k`` of clusters, and of eigenvectors kept.  ``"auto"``: chosen without labels from the one
        fit (:func:`~kernelsketch.cluster.choose_k.choose_n_clusters`, k = 2 .. 20, the criterion
        ``benchmarks/results/choose-k-pool.md`` chose), then the embedding re-solved for it from its kept
        statistics: no second pass over the data.
    n_landmarks : int or "auto", default=1000
        Landmarks ``m`` (a uniform sample of rows, capped at ``N``).
    n_neighbors : int >= 1, default=10
        Nearest landmarks each row is joined to.
    bandwidth : "local", "knn_mean", float or {"median", "percentile", "mean_sq"}, default="local"
        See :class:`~kernelsketch.maps.LandmarkSpectralEmbedding` (``"local"``: each row's
        distance to its ``n_neighbors``-th nearest landmark).
    landmarks : {"uniform", "kmeans"}, default="uniform"
        Uniform rows, or k-means centres of a ``10 m``-row sample (LSC-K); see
        :class:`~kernelsketch.maps.LandmarkSpectralEmbedding`.
    unit_rows : bool, default=False
        Scale each embedded row to unit length before k-means (Ng, Jordan & Weiss).
    trivial : {"keep", "drop"}, default="keep"
        Keep the trivial top eigenvector as one of the ``k``, or drop it and keep the next ``k``.
    assign_labels : {"auto", "kmeans", "genie"}, default="auto"
        How rows get their labels: k-means on the embedded rows (``"kmeans"``), Genie (Gagolewski et al.
        2016, ``gini_threshold=0.3``) on the landmarks with each row following the weighted vote of its
        graph (``"genie"``), or whichever of the two has the lower normalized cut of the landmark graph on
        the rows k-means was seeded on (``"auto"``: chosen by leave-one-group-out on 48 labelled sets,
        ``benchmarks/results/cluster-pool.md``; no labels needed). The choice is ``labeling_``.
    n_init : int, default=3
        k-means++ starts (the best is kept).
    init_size : int or None, default=None
        Rows of the uniform sample k-means++ and Lloyd run on (None: ``min(N, 100,000)``; all rows when
        there are fewer, which is exact k-means of the embedded rows); see
        :class:`~kernelsketch.cluster.StreamingKMeans`.
    tol : float, default=1e-4
        Lloyd's stopping tolerance on the sample (relative to the embedded rows' variance).
    search : {"auto", "exact", "approximate"} or a searcher object, default="auto"
        How each row's nearest landmarks are found (see :class:`~kernelsketch.maps.LandmarkSpectralEmbedding`):
        U-SPEC's approximate search for data of at most 40 columns, the exact one otherwise; or any object
        with ``build(points)`` and ``search(X, r)`` (:mod:`kernelsketch.kernels.search`).
    statistics_rows : int or None, default=1_000_000
        The embedding's graph statistics are summed over a seeded uniform sample of this many rows when there
        are more (see :class:`~kernelsketch.maps.LandmarkSpectralEmbedding`); None: every row.  Then no row's
        graph is kept, and the rows are labelled by a second search whose second sweep is skipped for rows
        whose cell settles their label (:meth:`~kernelsketch.maps.LandmarkSpectralEmbedding.settled_cells`):
        the same labels as a full search.
    random_state : int, Generator or None
        Seeds the landmarks, the bandwidth heuristic and k-means.
    n_jobs : int or None, default=None
        Threads for ``fit`` and ``predict`` (BLAS, OpenMP, the compiled searches:
        :func:`~kernelsketch.utils.threads.thread_limit`; -1 every usable core, 1 one core); None: the
        process's current limits.  The labels do not depend on it.

    Attributes
    ----------
    labels_ : ndarray of int64 (N,)
    embedding_ : LandmarkSpectralEmbedding
    kmeans_ : StreamingKMeans
        Its ``cluster_centers_`` live in the embedding.
    n_clusters_ : int
        The number of non-empty clusters: ``n_clusters`` (or the one ``"auto"`` chose) unless the labels left
        some cluster without a row, which an ``EmptyClusterWarning`` names (labels stay in ``[0, k)``).
    k_choice_ : KChoice or None
        With ``n_clusters="auto"``: the k chosen, the criterion and its score for every candidate k.
    eigenvalues_ : ndarray
        The normalized affinity's largest eigenvalues (``embedding_.eigenvalues_``).
    labeling_ : {"kmeans", "genie"}
        Which partition labels the rows (``assign_labels``).
    landmark_labels_ : ndarray of int64 (m,) or None
        Genie's labels of the landmarks (None when ``assign_labels="kmeans"``).
    normalized_cuts_ : dict
        The normalized cut of each partition computed (``{"kmeans": ..., "genie": ...}``; lower is better).

    Notes
    -----
    ``score(X)`` is label-free: the stability of the clustering over random halvings of ``X``
    (Lange et al. 2004; :meth:`score`), a number in ``[-1, 1]`` whatever the bandwidth,
    ``n_neighbors`` or ``k``, so :class:`~sklearn.model_selection.GridSearchCV` can rank them
    without labels.  ``eigengap_score(X)`` is the former score, the relative eigengap
    ``(mu_{k+1} - mu_k) / (mu_{k+1} + 0.05)`` (:func:`kernelsketch.metrics.relative_eigengap`,
    ``mu = 1 - lambda``) of the normalized affinity of ``X``'s rows to the fitted landmarks
    (von Luxburg 2007, Section 8.3).  How often each finds the true ``k``:
    ``benchmarks/results/choose-k.md``.

    References
    ----------
    X. Chen, D. Cai. Large scale spectral clustering with landmark-based representation. AAAI 2011.
    U. von Luxburg. A tutorial on spectral clustering. Statistics and Computing 17(4), 2007.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from kernelsketch.cluster import LandmarkSpectralClustering
    >>> X, y = make_moons(1000, noise=0.06, random_state=0)
    >>> labels = LandmarkSpectralClustering(n_clusters=2, n_landmarks=300, random_state=0).fit_predict(X)
    >>> adjusted_rand_score(y, labels) > 0.95
    True
    """

    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_k_criterion",
        "embedding_",
        "k_scores_",
        "kmeans_",
        "_labeling",
        "labels_",
        "landmark_labels_",
        "n_clusters_",
        "normalized_cuts_",
        "labeling_scores_",
    )
    #: a model file written before ``search`` existed searched exactly: it loads as ``search="exact"``
    _before_parameter_added: ClassVar[dict] = {
        "search": ("exact", {}),
        "statistics_rows": (None, {}),  # (fitted on every row)
        "init_size": (None, {}),
        "tol": (1e-4, {}),
        "n_jobs": (None, {}),
        "assign_labels": ("kmeans", {"_labeling": "kmeans", "landmark_labels_": None, "normalized_cuts_": {}}),
    }
    #: how the out-of-core driver fits it: the embedding's landmarks and pass, k-means on a sample
    _fit_strategy: ClassVar[str] = "embedding_then_sample"
    _dim_param: ClassVar[str | None] = None
    _size_param: ClassVar[str | None] = "n_landmarks"

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "bandwidth": [
            Interval(numbers.Real, 0, None, closed="neither"),
            StrOptions({"local", "knn_mean", *_HEURISTICS}),
        ],
        "landmarks": [StrOptions({"uniform", "kmeans"})],
        "unit_rows": ["boolean"],
        "trivial": [StrOptions({"keep", "drop"})],
        "assign_labels": [StrOptions(set(LABELINGS))],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "init_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "search": [StrOptions({"auto", "exact", "approximate"}), HasMethods(["build", "search"])],
        "statistics_rows": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
        "n_jobs": [Interval(numbers.Integral, None, None, closed="neither"), None],
    }

    def __init__(
        self,
        n_clusters: int | str = 8,
        *,
        n_landmarks: int | str = 1000,
        n_neighbors: int = 10,
        bandwidth: float | str = "local",
        landmarks: str = "uniform",
        unit_rows: bool = False,
        trivial: str = "keep",
        assign_labels: str = "auto",
        n_init: int = 3,
        init_size: int | None = None,
        tol: float = 1e-4,
        search: str = "auto",
        statistics_rows: int | None = STATISTICS_ROWS,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_landmarks = n_landmarks
        self.n_neighbors = n_neighbors
        self.bandwidth = bandwidth
        self.landmarks = landmarks
        self.unit_rows = unit_rows
        self.trivial = trivial
        self.assign_labels = assign_labels
        self.n_init = n_init
        self.init_size = init_size
        self.tol = tol
        self.search = search
        self.statistics_rows = statistics_rows
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _plan_embedding(self, n_rows):
        """The unfitted embedding and k-means (with its generator), in fit's order of draws (``"auto"``: an
        embedding of one component, re-solved for the k chosen by :meth:`_choose_k`, and k-means of 2)."""
        auto = self.n_clusters == "auto"
        if not auto and self.n_clusters > n_rows:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={n_rows}")
        seed = derive_seed(self.random_state) if not isinstance(self.random_state, numbers.Integral) else None
        rs = self.random_state if seed is None else seed
        embedding = LandmarkSpectralEmbedding(
            n_components=1 if auto else self.n_clusters,
            n_landmarks=self.n_landmarks,
            n_neighbors=self.n_neighbors,
            bandwidth=self.bandwidth,
            landmarks=self.landmarks,
            unit_rows=self.unit_rows,
            trivial=self.trivial,
            search=self.search,
            statistics_rows=self.statistics_rows,
            random_state=rs,
        )
        km, rng = kmeans_on_embedding(
            2 if auto else self.n_clusters,
            n_init=self.n_init,
            random_state=rs,
            init_size=self.init_size,
            tol=self.tol,
            search=user_searcher(self.search),
        )
        return embedding, km, rng

    def _choose_k(self, rows, km):
        """With ``n_clusters="auto"``: choose k from the fitted ``embedding_`` (and ``rows()``, a sample of rows
        as fitted, for a criterion that needs one), re-solve the embedding for it and set ``km``'s k; else
        record the given k.  Sets ``n_clusters_``, ``k_scores_`` (rows ``(k, score)``) and the criterion's name."""
        if self.n_clusters != "auto":
            self.n_clusters_, self._k_criterion, self.k_scores_ = int(self.n_clusters), None, None
            return
        from .choose_k import AUTO_CRITERION, choose_n_clusters

        sample = rows() if AUTO_CRITERION == "stability" else None
        choice = choose_n_clusters(self.embedding_, sample, random_state=derive_seed(self.random_state))
        self.embedding_ = self.embedding_.with_components(choice.k)
        km.set_params(n_clusters=choice.k)
        self.n_clusters_, self._k_criterion = choice.k, choice.criterion
        self.k_scores_ = np.array(sorted(choice.scores.items()), dtype=np.float64)

    @property
    def k_choice_(self):
        """With ``n_clusters="auto"``: the :class:`~kernelsketch.cluster.choose_k.KChoice` (k, criterion, scores)."""
        from .choose_k import CRITERIA, KChoice

        check_is_fitted(self)
        criterion = getattr(self, "_k_criterion", None)
        if criterion not in CRITERIA or getattr(self, "k_scores_", None) is None:
            return None
        return KChoice(int(self.kmeans_.n_clusters), criterion, {int(k): float(v) for k, v in self.k_scores_})

    def _adopt_clusters(self, km):
        """Take ``km`` (seeded by :meth:`StreamingKMeans.seed_on_sample`) as this clusterer's k-means."""
        self.kmeans_ = km
        self.n_features_in_ = self.embedding_.n_features_in_
        if hasattr(self.embedding_, "feature_names_in_"):
            self.feature_names_in_ = self.embedding_.feature_names_in_

    def _choose_labeling(self, indices, weights, kmeans_labels, rows=None):
        """Set ``labeling_``, ``landmark_labels_``, ``normalized_cuts_`` and ``labeling_scores_`` from the rows
        k-means was seeded on: their graph, k-means' labels and (for a rule that reads them) their features
        (:func:`~kernelsketch.cluster.landmark_labels.choose_labeling`)."""
        from .landmark_labels import LabelingContext, choose_labeling

        context = LabelingContext(
            indices,
            weights,
            self.embedding_.landmarks_,
            np.asarray(kmeans_labels),
            int(self.n_clusters_),
            rows=rows,
            random_state=self.random_state,
        )
        chosen, scores = choose_labeling(context, self.assign_labels)
        self._labeling, self.landmark_labels_ = chosen.name, chosen.landmark_labels
        self.normalized_cuts_, self.labeling_scores_ = scores["cut"], scores

    def _check_fitted_state(self):
        """A ValueError when the fitted labeling's state disagrees with itself (a model file checks it at load,
        :func:`kernelsketch.load`): its kind, the landmarks' labels' kind, range and length, the counts."""
        k = int(self.kmeans_.cluster_centers_.shape[0])
        labeling = vars(self).get("_labeling", "kmeans")
        if not isinstance(labeling, str) or labeling not in CANDIDATES:
            raise ValueError(f"the labeling is {labeling!r}; a fit makes one of {sorted(CANDIDATES)}")
        n = vars(self).get("n_clusters_", k)  # (a model saved before n_clusters_ existed: k)
        if not (isinstance(n, (int, np.integer)) and 1 <= n <= k):
            raise ValueError(f"n_clusters_ = {n!r} is not a count of clusters in [1, {k}] (k-means has {k} centres)")
        labels = vars(self).get("landmark_labels_")
        m = int(self.embedding_.landmarks_.shape[0])
        if labels is None:
            if labeling != "kmeans":
                raise ValueError(f"the labeling is {labeling!r}, but the landmarks' labels are missing")
        elif not (isinstance(labels, np.ndarray) and labels.dtype.kind in "iu" and labels.shape == (m,)):
            raise ValueError(
                f"landmark_labels_ must be {m} integer labels (one a landmark), got "
                f"{getattr(labels, 'dtype', type(labels).__name__)} of shape {getattr(labels, 'shape', None)}"
            )
        elif labels.size and (labels.min() < 0 or labels.max() >= k):
            raise ValueError(f"landmark_labels_ hold labels outside [0, {k})")
        rows = vars(self).get("labels_")
        if isinstance(rows, np.ndarray) and rows.size:
            if rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= k:
                raise ValueError(f"labels_ must be integer labels in [0, {k})")
            if np.unique(rows).size > n:  # (fewer: a model saved when n_clusters_ counted empty clusters too)
                raise ValueError(f"n_clusters_ = {n} but labels_ hold {np.unique(rows).size} clusters")

    @property
    def labeling_(self):
        """Which partition labels the rows (a name of :data:`~kernelsketch.cluster.landmark_labels.CANDIDATES`:
        ``"kmeans"``, ``"genie"`` or ``"genie_sample"``), as ``assign_labels``'s rule chose it."""
        check_is_fitted(self)
        return getattr(self, "_labeling", "kmeans")  # (a model saved before assign_labels existed: k-means)

    def assigner(self):
        """``(embedding, k-means)`` whose nearest-centre assignment of a row is its label: the fitted ones, or for
        ``labeling_ == "genie"`` the embedding projecting each row on its vote (the one-hot matrix of the
        landmarks' labels) and the identity's rows as centres, so that every assignment path (``predict``,
        :func:`~kernelsketch.cluster_file`'s pass on one machine or on Dask, a kept graph) gives the vote."""
        from copy import copy

        from .landmark_labels import landmark_vote_projection

        check_is_fitted(self)
        if self.labeling_ == "kmeans":
            return self.embedding_, self.kmeans_
        k = int(self.kmeans_.n_clusters)  # (n_clusters_ counts the non-empty ones)
        emb = copy(self.embedding_)  # (the same landmarks and searcher cache; only the projection differs)
        emb.unit_rows = False
        emb.projection_ = landmark_vote_projection(self.landmark_labels_, k)
        emb._n_features_out = k
        km = StreamingKMeans(k, n_init=1, search=self.kmeans_.search)
        km.cluster_centers_ = np.eye(k)
        km.n_features_in_, km._n_features_out, km.counts_ = k, k, np.zeros(k)
        km._tol_abs, km._sample_iter = 0.0, 0
        return emb, km

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Embed X through the landmark graph, k-means, and the labeling its rule keeps (:meth:`fit_rows` of the
        rows in memory), then label every row. Returns self."""
        from ..utils.threads import thread_limit

        with thread_limit(self.n_jobs):
            refuse_label_like_frame(X)
            X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)
            names = vars(self).get("feature_names_in_")
            rows = rows_in_memory(X, self.n_landmarks)
            seeding = self.fit_rows(rows, keep_graph=True)
            labels: list = []
            embedding, km = self.assigner()
            if seeding.graphs is None:  # (statistics of a sample: every row searched again, settled cells skipped)
                dtype = np.float32 if X.dtype == np.float32 else np.float64
                state = (embedding, km.cluster_centers_, dtype, embedding.settled_cells(km.cluster_centers_))
                rows.foreach(_rows_labels, lambda out, _y: labels.append(out), state=state)
            else:
                try:  # (each row's graph, kept by the fit: embedded and labelled without a second search)
                    cast = X.dtype == np.float32 and self.labeling_ == "kmeans"  # (transform's float32 rows)
                    kept = (embedding, km, cast)
                    seeding.graphs.foreach(_graph_labels, lambda out, _y: labels.append(out), state=kept)
                finally:
                    seeding.graphs.release()
            self.labels_ = np.concatenate(labels)
            if names is not None:
                self.feature_names_in_ = names
            self.count_clusters(np.bincount(self.labels_, minlength=km.n_clusters))
        return self

    def fit_rows(self, rows, *, keep_graph: bool = False) -> Seeding:
        """Fit on a row source (:mod:`kernelsketch.utils.row_source`): the recipe of :meth:`fit` in memory, of
        :func:`kernelsketch.fit_source` on a file and of :func:`kernelsketch.cluster_file` on any engine.

        The embedding (:meth:`LandmarkSpectralEmbedding.fit_rows`: landmarks, one pass of graph statistics), k
        chosen for ``n_clusters="auto"``, k-means seeded on the embedding of a uniform sample of rows
        (:func:`~kernelsketch.cluster.seeding.seed_on_rows`), and the labeling chosen on that sample.  No row is
        labelled here: returns the :class:`~kernelsketch.cluster.seeding.Seeding` (the sample, its embedding as
        the assignment sees it, and with ``keep_graph`` the source of each row's kept graph, which the caller
        releases), for the caller's assignment of every row (:meth:`assigner`).
        """
        from ..utils.row_source import count_rows
        from .seeding import seed_on_rows

        self._validate_params()
        self.__dict__.pop("labels_", None)  # (a sample's labels would mislead: the caller labels every row)
        embedding, km, rng = self._plan_embedding(count_rows(rows))
        with graph_warnings_deferred(self.n_clusters == "auto"):
            graphs = embedding.fit_rows(rows, keep_graph=keep_graph)
        try:
            self.embedding_ = embedding
            self._choose_k(lambda: _stability_sample(rows, self.random_state), km)  # (n_clusters="auto")
            graph = self.embedding_.landmark_graph()
            seeding = seed_on_rows(rows, km, rng, sample_embedding, graph, rowwise=True)  # (each row on its own)
            self._adopt_clusters(km)
            (indices, weights), X_sample = seeding.kept
            seeding.kept = None
            self._choose_labeling(indices, weights, km.predict(seeding.embedded), X_sample)
            if self.labeling_ != "kmeans":  # the sample as the assignment sees it: each row's vote
                votes, _ = self.assigner()
                seeding.embedded = votes.embed_graph(indices, weights)
        except BaseException:
            if graphs is not None:
                graphs.release()
            raise
        seeding.graphs = graphs
        return seeding

    def count_clusters(self, sizes):
        """Set ``n_clusters_`` to the number of non-empty clusters among ``sizes`` (the rows each label got),
        warning (:class:`~kernelsketch.utils.warnings.EmptyClusterWarning`) when it is below the ``k`` fitted:
        which labeling left clusters empty and what to try.  ``fit`` calls it with its labels;
        :func:`kernelsketch.cluster_file` with the sizes of its assignment pass."""
        from ..utils.warnings import EmptyClusterWarning, warn
        from .landmark_labels import empty_cluster_message

        check_is_fitted(self)
        k = int(self.kmeans_.n_clusters)
        message = empty_cluster_message(sizes, k, self.labeling_, self.assign_labels)
        self.n_clusters_ = k - int(np.count_nonzero(np.asarray(sizes)[:k] == 0)) if message else k
        if message:
            warn(message, EmptyClusterWarning)

    @property
    def eigenvalues_(self):
        check_is_fitted(self)
        return self.embedding_.eigenvalues_

    def predict(self, X: ArrayLike) -> NDArray[np.intp]:
        """The cluster of each row (new rows too): the nearest k-means centre of its spectral coordinates, or
        (``labeling_ == "genie"``) the landmarks' label of largest weight in its graph."""
        from ..utils.threads import thread_limit

        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)  # (columns checked by name too)
        embedding, km = self.assigner()
        with thread_limit(getattr(self, "n_jobs", None)):
            return km.predict(embedding.transform(X))

    def score(self, X: ArrayLike, y: object = None) -> float:
        """Stability of this clustering on ``X`` (label-free; higher is better, at most 1).

        The mean adjusted Rand index, over 3 seeded random halvings of ``X``, between this
        estimator's clustering of one half and its clustering of the other carried over by
        ``predict`` (Lange et al. 2004; :func:`~kernelsketch.cluster.stability.estimator_stability`):
        a ``k`` that matches structure in the data gives the same partition from either half.
        In the choose-k benchmark (``benchmarks/results/choose-k.md``) stability found the true
        ``k`` within 1 far more often than the relative eigengap (:meth:`eigengap_score`), so a
        ``GridSearchCV`` over ``n_clusters`` uses it.  Each call fits 6 clones on halves of ``X``.
        Samples too small to halve (fewer than ``2 (n_clusters + 1)`` rows) are refused.
        """
        from .stability import estimator_stability

        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        k = int(self.kmeans_.n_clusters)
        if X.shape[0] // 2 <= k:
            raise ValueError(
                f"score needs two halves of more than n_clusters={k} rows, got {X.shape[0]} rows; "
                "eigengap_score(X) scores a small sample by its spectrum"
            )
        return estimator_stability(self, X, n_pairs=3, random_state=derive_seed(self.random_state))

    def eigengap_score(self, X: ArrayLike, y: object = None) -> float:
        """Relative eigengap of X's normalized affinity to the fitted landmarks (label-free; higher is better)."""
        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        lam = landmark_spectrum(self.embedding_.statistics(X))
        return relative_eigengap(lam, int(self.kmeans_.n_clusters))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _stability_sample(rows, random_state):
    """A seeded sample of at most ``STABILITY_SAMPLE`` rows of a row source, dense (for ``n_clusters="auto"``'s
    criterion when it needs rows)."""
    import scipy.sparse as sp

    from .choose_k import STABILITY_SAMPLE

    N = rows.n_rows
    rng = np.random.default_rng(derive_seed(random_state))
    idx = np.arange(N) if N <= STABILITY_SAMPLE else np.sort(rng.choice(N, STABILITY_SAMPLE, replace=False))
    X = rows.gather(idx)[0]
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def _rows_labels(X, state):
    """The labels of a block of rows searched again (:meth:`LandmarkSpectralEmbedding.assign_rows`)."""
    embedding, centers, dtype, settled = state
    return embedding.assign_rows(X, centers, dtype, settled)[0]


def _graph_labels(graph, state):
    """The labels of a block of rows given by their kept graph: ``predict`` of their embedding (``fit``'s)."""
    embedding, km, cast = state
    U = embedding.embed_graph(graph[0], graph[1])
    return km.predict(U.astype(np.float32) if cast else U)
