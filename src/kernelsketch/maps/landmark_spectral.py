"""Landmark spectral embedding: the bipartite rows-to-landmarks graph of Chen & Cai (2011), streamed.

Spectral clustering needs the top eigenvectors of a normalized ``N x N``
affinity.  Landmark-based spectral clustering never forms it: every row is
joined to its ``r`` nearest of ``m`` landmarks, and the graph ``W = Zh Zh^T``
with ``Zh = Z D^{-1/2}`` has the same top eigenvectors as the small ``m x m``
matrix ``Zh^T Zh``.  Everything the fit needs from the rows is one sum over
row blocks (``Z^T Z`` and the column sums of ``Z``), so the fit is one streamed
pass after the landmarks are drawn -- on a file, in memory or on Dask alike.
"""

from __future__ import annotations

import contextlib
import numbers
import warnings
from typing import Any, ClassVar, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, FloatArray, RandomStateLike
from ..kernels.bandwidth import bandwidth_of_rows, check_distance_scale
from ..kernels.neighbors import nearest
from ..utils.chunking import get_chunk_n_rows
from ..utils.dispatch import maybe_dask_transform
from ..utils.estimator_checks import HasMethods, Interval, StrOptions
from ..utils.row_source import ArrayRows
from ..utils.threads import thread_limit
from ..utils.validation import check_input, check_random_state, derive_seed
from ..utils.warnings import warn as _warn
from .landmark_eigen import GraphStatistics, landmark_embedding
from .landmark_graph import (  # noqa: F401  (AUTO_APPROXIMATE_MAX_FEATURES, user_searcher: named here too)
    AUTO_APPROXIMATE_MAX_FEATURES,
    LandmarkGraph,
    block_graph,
    block_rows_statistics,
    block_statistics,
    rows_statistics,
    searches_on_device,
    user_searcher,
)
from .landmark_selection import KMeansLandmarks, LandmarkData, UniformLandmarks, select_landmarks
from .landmarks import resolve_n_landmarks, uniform_sorted_indices

#: bandwidth heuristics resolved on the data, as for the other estimators (``"local"`` is per row)
_HEURISTICS = ("median", "percentile", "mean_sq")
#: Chen & Cai's global bandwidth: sqrt(2) x the mean distance of a row to its r nearest landmarks
_KNN_MEAN = "knn_mean"
#: landmark selections: a uniform sample of rows, or k-means centres of a larger one (LSC-K / U-SPEC)
LANDMARK_SELECTIONS = ("uniform", "kmeans")
#: how each row's nearest landmarks are found
SEARCHES = ("auto", "exact", "approximate")
#: the k-means selection clusters a uniform sample of this many rows per landmark (U-SPEC's hybrid: ~10 m)
KMEANS_SAMPLE_FACTOR = 10


#: ``n_landmarks``'s default
DEFAULT_N_LANDMARKS = 1000
#: the default ``statistics_rows``: the graph statistics of more rows than this are summed over a uniform sample
#: of this many (fixed before any timing or score of it: above every clustering-quality pool set's size, and
#: about 10,000 weights in each of 1,000 landmarks' degree with 10 neighbours a row)
STATISTICS_ROWS = 1_000_000
#: rows of one piece of the statistics' sample at most (pieces run side by side on Dask's workers)
_SAMPLE_PIECE_ROWS = 1 << 17
#: bytes of the pieces' ``m x m`` statistics held at once (the pieces run together in batches within it)
_SAMPLE_STATISTICS_BYTES = 1 << 28
#: peak bytes per squared landmark of a fit (the ``m x m`` graph statistics, their normalization and eigenvectors,
#: Genie's merges), measured: 3.5 GB at m = 8,000 on 8,000 rows of 16 columns
BYTES_PER_LANDMARK_PAIR = 50


def _available_memory():
    """Bytes of memory available to a new allocation (Linux's MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_landmark_budget(m):
    """Refuse ``m`` landmarks whose ``m x m`` work would not fit in the available memory, before anything is
    allocated; warn when it needs more than a GiB (with the estimate)."""
    need = BYTES_PER_LANDMARK_PAIR * float(m) ** 2
    free = _available_memory()
    if free is not None and need > 0.8 * free:
        raise ValueError(
            f"{m:,} landmarks need about {need / 2**30:.1f} GiB for their m x m graph and its eigenvectors, and "
            f"{free / 2**30:.1f} GiB is available: use fewer landmarks (-n / n_landmarks; the default is "
            f"{DEFAULT_N_LANDMARKS:,})"
        )
    if need > 2**30:
        from ..utils.warnings import warn

        warn(
            f"{m:,} landmarks: their m x m work needs about {need / 2**30:.1f} GiB and grows as m^2 in memory and "
            f"m^2-m^3 in time (minutes beyond ~5,000; the default {DEFAULT_N_LANDMARKS:,} takes a fraction of a second)"
        )


class GraphWarning(UserWarning):
    """The landmark affinity graph cannot carry the clusters asked for (disconnected, or uninformative)."""


@contextlib.contextmanager
def graph_warnings_deferred(active=True):
    """No :class:`GraphWarning` while a fit's number of components is a placeholder (``n_clusters="auto"``: it is
    said, if at all, when the chosen k is solved by :meth:`LandmarkSpectralEmbedding.with_components`)."""
    with warnings.catch_warnings():
        if active:
            warnings.simplefilter("ignore", GraphWarning)
        yield


class LandmarkSpectralEmbedding(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Spectral embedding through a bipartite graph of rows and landmarks (landmark spectral clustering).

    Parameters
    ----------
    n_components : int >= 1
        Eigenvectors kept (required; ``k`` for ``k`` clusters, as spectral clustering uses).
    n_landmarks : int or "auto", default=1000
        Landmarks ``m``, a uniform sample of rows (capped at ``N``); ``"auto"`` is
        :func:`~kernelsketch.maps.landmarks.auto_n_landmarks` (``max(200, N // 100)``, at most 4096).
    n_neighbors : int >= 1, default=10
        Landmarks ``r`` each row is joined to (its nearest ones); capped at ``m``.
    bandwidth : "local", "knn_mean", float or {"median", "percentile", "mean_sq"}, default="local"
        Affinity ``exp(-||x - u||^2 / h^2)`` between a row and a landmark.  ``"local"``: each
        row's own scale ``h(x)`` = its distance to its ``r``-th nearest landmark (the
        self-tuning scale of Zelnik-Manor & Perona, per row), which needs no global choice;
        ``"knn_mean"``: Chen & Cai's one scale, sqrt(2) times the mean distance of a row to its
        ``r`` nearest landmarks; a number or a heuristic of
        :func:`~kernelsketch.kernels.estimate_bandwidth`: one ``h`` for all rows.  A global ``h``
        is applied as ``exp(-(d^2 - d_1^2) / h^2)`` (``d_1`` the row's nearest landmark), the same
        weights once each row is scaled to sum 1, so no row's affinities all vanish.
    landmarks : {"uniform", "kmeans"}, default="uniform"
        The landmark selector (:mod:`kernelsketch.maps.landmark_selection`).  ``"uniform"``:
        :class:`~kernelsketch.maps.landmark_selection.UniformLandmarks`, a uniform sample of rows;
        ``"kmeans"``: :class:`~kernelsketch.maps.landmark_selection.KMeansLandmarks`, the centres
        of k-means (k-means++ and Lloyd, :class:`~kernelsketch.cluster.StreamingKMeans`' seeding)
        on a uniform sample of ``10 m`` rows (Chen & Cai's LSC-K, U-SPEC's hybrid selection), the
        same for a seed in memory, on a file and on Dask.
    unit_rows : bool, default=False
        Scale each embedded row to unit length (Ng, Jordan & Weiss) in ``transform``.
    trivial : {"keep", "drop"}, default="keep"
        The top eigenvector of the normalized affinity is trivial (``sqrt`` of the landmark
        degrees; a constant column of the embedding).  ``"keep"``: it is one of the ``k``
        kept; ``"drop"``: it is removed exactly (deflated, also when the graph has several
        parts) and the next ``k`` are kept.
    search : {"auto", "exact", "approximate"} or a searcher object, default="auto"
        How each row's ``r`` nearest landmarks are found.  ``"exact"``: all ``m`` distances
        (:func:`~kernelsketch.kernels.neighbors.nearest`); ``"approximate"``: U-SPEC's
        coarse-to-fine search (:func:`~kernelsketch.kernels.neighbors.approximate_nearest`: about
        ``2 sqrt(m) + 5 r`` distances a row, 2-5x faster with few columns, slower with many),
        which finds 94-100 % of the exact neighbours on the labelled sets of at most 40 columns
        (83-100 % on all of them) with the same ARI within noise
        (``benchmarks/results/approximate-search.md``); ``"auto"``: approximate for dense data of at
        most :data:`AUTO_APPROXIMATE_MAX_FEATURES` (40) columns, exact otherwise and for CSR input.
        The choice depends on the number of columns only, and a row's
        answer on that row only: the same on every engine, block size and thread count.
        Or a searcher object: anything with ``build(points)`` and ``search(X, r) -> (squared distances,
        indices)`` (:mod:`kernelsketch.kernels.search`: e.g. :class:`~kernelsketch.kernels.search.FaissSearch`,
        or your own), used on a copy for the fit, ``transform`` and ``cluster_file``'s assignment pass.
    statistics_rows : int or None, default=1_000_000
        Rows the graph statistics (``Z^T Z``, ``Z^T 1``) are summed over: a seeded uniform sample of this many
        rows when there are more (each of ``m`` landmarks' degrees then sums about ``statistics_rows r / m``
        weights: 10,000 with the defaults), else every row; None: every row.  Chosen above every set of the
        clustering-quality pool, so none of their results depends on it.  With a sample the fit pass
        reads only those rows (by index), keeps no row's graph, and ``n_samples_seen_`` is the sample's size.
    random_state : int, Generator or None
        Seeds the landmarks, the bandwidth heuristic and the statistics' sample.
    n_jobs : int or None, default=None
        Threads for ``fit`` and ``transform`` (BLAS, OpenMP, the compiled searches; -1 every usable core, 1 one
        core); None: the process's current limits.  The embedding does not depend on it.

    Attributes
    ----------
    landmarks_ : ndarray (m, n_features)
    landmark_indices_ : ndarray of int64 (m,) or None
        The landmarks' rows (None for ``landmarks="kmeans"``: centres, not rows).
    bandwidth_ : float or None
        The global ``h`` (None for ``"local"``).
    projection_ : ndarray (m, n_components)
        ``P = sqrt(N) D^{-1/2} V_k Lambda_k^{-1/2}``: ``transform(x) = z(x) @ P``.
    eigenvalues_ : ndarray
        The largest eigenvalues of ``Zh^T Zh`` (of the normalized row affinity
        ``W = Zh Zh^T``), in decreasing order: ``n_components`` and up to 10 more (the eigengap).
    landmark_degrees_ : ndarray (m,)
        Column sums ``D`` of ``Z`` over all fitted rows.
    graph_gram_ : scipy.sparse.csr_matrix (m, m)
        ``Z^T Z`` over all fitted rows.  With ``landmark_degrees_`` and ``n_samples_seen_`` it is
        :attr:`graph_statistics_`, from which :meth:`with_components` re-solves another number of
        components without a pass over the data.
    n_connected_components_ : int
        Eigenvalues equal to 1 (to 1e-9): the connected parts of the graph.
    n_samples_seen_ : int
        Rows ``N`` of the fit.

    Notes
    -----
    **Graph** (Chen & Cai 2011).  ``Z`` (``N x m``) joins each row to its ``r`` nearest
    landmarks with Gaussian weights, rows normalized to sum 1.  With ``D = diag(Z^T 1)``
    and ``Zh = Z D^{-1/2}``, the row affinity ``W = Zh Zh^T = Z D^{-1} Z^T`` has row sums
    ``W 1 = Z D^{-1} Z^T 1 = Z 1 = 1``: it is already degree-normalized, so its top
    eigenvectors are those of normalized-cut spectral clustering on ``W``.  They are the
    left singular vectors of ``Zh``: with ``Zh^T Zh = V Lambda V^T`` (``m x m``),
    ``U = Zh V_k Lambda_k^{-1/2}``.

    **One pass.**  ``Z^T Z`` and ``Z^T 1`` are sums over rows, accumulated block by block
    (``r^2`` products per row: ``Z`` is sparse); then one ``m x m`` eigendecomposition.
    ``transform`` embeds any rows, fitted or new, with the same formula (the Nystroem
    extension of the eigenvectors); the factor ``sqrt(N)`` gives the columns of
    ``U`` mean square 1 over the fitted rows.

    **Connectivity.**  Eigenvalue 1 has the multiplicity of the graph's connected parts.
    More parts than ``n_components`` make the kept eigenvectors an arbitrary choice among
    them: :class:`GraphWarning` says so (raise ``n_neighbors``).

    Cost: fit O(N m D) distances, O(N r^2) for ``Z^T Z``, O(m^3) once; transform O(m D + r k) per row.

    References
    ----------
    X. Chen, D. Cai. Large scale spectral clustering with landmark-based representation.
    AAAI 2011.
    C. Fowlkes, S. Belongie, F. Chung, J. Malik. Spectral grouping using the Nystrom method.
    IEEE TPAMI 26(2), 2004.
    L. Zelnik-Manor, P. Perona. Self-tuning spectral clustering. NIPS 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_circles
    >>> from kernelsketch.maps import LandmarkSpectralEmbedding
    >>> X, y = make_circles(600, noise=0.05, factor=0.5, random_state=0)
    >>> U = LandmarkSpectralEmbedding(n_components=2, n_landmarks=200, random_state=0).fit_transform(X)
    >>> U.shape
    (600, 2)
    """

    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_n_features_out",
        "bandwidth_",
        "eigenvalues_",
        "graph_gram_",
        "landmark_degrees_",
        "landmark_indices_",
        "landmarks_",
        "n_connected_components_",
        "n_samples_seen_",
        "projection_",
    )
    #: the fitted arrays' shapes against each other, checked when a model file is loaded ("d": n_features_in_)
    _state_shapes: ClassVar[dict[str, tuple[str, ...]]] = {
        "landmarks_": ("m", "d"),
        "projection_": ("m", "k"),
        "landmark_degrees_": ("m",),
        "graph_gram_": ("m", "m"),
    }
    #: caches never saved (rebuilt from the landmarks by whoever needs them)
    _transient_state: ClassVar[tuple[str, ...]] = ("_searcher_cache",)
    #: a model file written before ``search`` existed searched exactly: it loads as ``search="exact"``
    _before_parameter_added: ClassVar[dict] = {
        "search": ("exact", {}),
        "n_jobs": (None, {}),
        "statistics_rows": (None, {}),  # (fitted on every row)
    }
    #: how the out-of-core driver fits it: landmark rows by index, then one pass of block statistics
    _fit_strategy: ClassVar[str] = "landmarks_then_pass"
    _dim_param: ClassVar[str | None] = "n_components"
    _size_param: ClassVar[str | None] = "n_landmarks"

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "bandwidth": [
            Interval(numbers.Real, 0, None, closed="neither"),
            StrOptions({"local", _KNN_MEAN, *_HEURISTICS}),
        ],
        "landmarks": [StrOptions(set(LANDMARK_SELECTIONS))],
        "unit_rows": ["boolean"],
        "trivial": [StrOptions({"keep", "drop"})],
        "search": [StrOptions(set(SEARCHES)), HasMethods(["build", "search"])],
        "statistics_rows": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
        "n_jobs": [Interval(numbers.Integral, None, None, closed="neither"), None],
    }

    def __init__(
        self,
        *,
        n_components: int | None = None,
        n_landmarks: int | str = 1000,
        n_neighbors: int = 10,
        bandwidth: float | str = "local",
        landmarks: str = "uniform",
        unit_rows: bool = False,
        trivial: str = "keep",
        search: str = "auto",
        statistics_rows: int | None = STATISTICS_ROWS,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.n_neighbors = n_neighbors
        self.bandwidth = bandwidth
        self.landmarks = landmarks
        self.unit_rows = unit_rows
        self.trivial = trivial
        self.search = search
        self.statistics_rows = statistics_rows
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- the seams the out-of-core driver calls ------------------------------------
    def _selector(self):
        """The landmark selector ``landmarks`` names (:mod:`kernelsketch.maps.landmark_selection`)."""
        if self.landmarks != "kmeans":
            return UniformLandmarks()
        return KMeansLandmarks(KMEANS_SAMPLE_FACTOR, search=user_searcher(self.search))

    def _plan(self, n_rows):
        """``(m, bandwidth seed, landmark generator)`` for ``n_rows`` rows, in fit's order of draws."""
        self._validate_params()
        if self.n_components is None:
            raise ValueError(
                f"{type(self).__name__} needs 'n_components', the k eigenvectors for k clusters (got None)"
            )
        if n_rows < 2:
            raise ValueError(f"{type(self).__name__} needs n_samples >= 2, got n_samples = {n_rows}")
        rng = check_random_state(self.random_state)
        bandwidth_seed, landmark_seed = derive_seed(rng), derive_seed(rng)
        m = resolve_n_landmarks(self.n_landmarks, n_rows) if isinstance(self.n_landmarks, str) else self.n_landmarks
        if int(m) > n_rows and m != DEFAULT_N_LANDMARKS:  # (the default 1,000 on fewer rows: every row, unsaid)
            from ..utils.warnings import warn

            warn(f"n_landmarks={int(m):,} is more than the {n_rows:,} rows: every row is a landmark ({n_rows:,})")
        m = min(int(m), n_rows)
        check_landmark_budget(m)
        if self.n_components > n_rows:
            raise ValueError(f"{self.n_components} clusters (eigenvectors) must be <= the number of rows ({n_rows})")
        if self.n_components > m:
            raise ValueError(f"{self.n_components} clusters (eigenvectors) must be <= the number of landmarks ({m})")
        tag = 0x4B4D if self.landmarks == "kmeans" else 0x5350  # (one stream per selection)
        return m, bandwidth_seed, np.random.default_rng([landmark_seed, tag])

    def _choose_landmarks(self, data, m, rng, bandwidth):
        """Seam 2: the landmarks from the selector (:meth:`_selector`) on ``data``, and the global bandwidth.

        ``data``: a :class:`~kernelsketch.maps.landmark_selection.LandmarkData` (the rows as the
        fitting path has them: in memory, a file, Dask); ``rng``: :meth:`_plan`'s.  Uniform
        landmarks are rows; k-means landmarks are centres (``landmark_indices_`` None), and
        ``"knn_mean"`` is then measured on the sample they came from.  ``bandwidth`` None:
        local, or Chen & Cai's, resolved here.
        """
        L, idx = select_landmarks(self._selector(), data, m, rng, at_most=self.landmarks == "kmeans")
        check_distance_scale(L)
        self.landmarks_ = np.ascontiguousarray(L.toarray() if sp.issparse(L) else L, dtype=np.float64)
        self.landmark_indices_ = None if idx is None else np.asarray(idx, dtype=np.int64)
        if self.bandwidth == _KNN_MEAN:
            sample = None
            if idx is None:
                S = data.gathered
                sample = np.ascontiguousarray(S.toarray() if sp.issparse(S) else S, dtype=np.float64)
            bandwidth = self._knn_mean_bandwidth(self.landmarks_, sample)
        self.bandwidth_ = None if bandwidth is None else float(bandwidth)

    def _knn_mean_bandwidth(self, L, sample):
        """Chen & Cai's ``h``: the mean distance of a row to its ``r`` nearest landmarks, times sqrt(2).

        Their weights are ``exp(-d^2 / (2 sigma^2))`` with ``sigma`` that mean; ours are
        ``exp(-d^2 / h^2)``, hence the factor.  Measured on the k-means sample's rows, or, for
        uniform landmarks (themselves a uniform sample of rows), on each landmark's ``r``
        nearest other landmarks.
        """
        m = L.shape[0]
        if sample is not None:
            r = min(self.n_neighbors, m)
            d2, _ = nearest(sample, L, r)
        else:
            r = min(self.n_neighbors, m - 1)
            if r < 1:
                raise ValueError("bandwidth='knn_mean' needs at least 2 landmarks")
            d2 = nearest(L, L, r + 1)[0][:, 1:]  # each landmark's nearest is itself
        sigma = float(np.sqrt(d2).mean())
        if not sigma > 0:
            raise ValueError("bandwidth='knn_mean': every row coincides with its nearest landmarks (distance 0)")
        return np.sqrt(2.0) * sigma

    def landmark_graph(self) -> LandmarkGraph:
        """The fitted graph as plain arrays (:class:`~kernelsketch.maps.landmark_graph.LandmarkGraph`): what a block of
        rows needs (the search, the weights, the projection once solved), and what a pass sends to where the rows
        are.  It shares this estimator's searchers (built on ``landmarks_`` once, never saved)."""
        check_is_fitted(self, "landmarks_")
        cache = vars(self).get("_searcher_cache")
        if cache is None or cache[0] is not self.landmarks_:
            cache = self._searcher_cache = (self.landmarks_, dict[Any, Any]())
        return LandmarkGraph(
            self.landmarks_,
            n_neighbors=self.n_neighbors,
            bandwidth=self.bandwidth_,
            search=self.search,
            projection=vars(self).get("projection_"),
            unit_rows=self.unit_rows,
            searchers=cache[1],
            name=type(self).__name__,
        )

    def graph(self, X, also=()):
        """The graph stage: each row's ``r`` nearest landmarks and its Gaussian weights summing to 1
        (:meth:`LandmarkGraph.graph <kernelsketch.maps.landmark_graph.LandmarkGraph.graph>`: ``(indices int32 (n,
        r), weights (n, r))``, float32 weights for float32 rows).  ``X``: rows as fitted (validated by the caller)."""
        return self.landmark_graph().graph(X, also=also)

    def _searcher_of(self, kind):
        """The searcher of a resolved kind, built on ``landmarks_`` once, kept with the estimator but never saved."""
        return self.landmark_graph().searcher_of(kind)

    def __getstate__(self):
        state = super().__getstate__()
        for name in self._transient_state:  # rebuilt where needed (a Dask worker): not shipped with every task
            state.pop(name, None)
        return state

    def _affinity(self, X):
        """``Z`` of the rows of ``X``: CSR ``(n, m)``, ``r`` Gaussian weights per row summing to 1."""
        graph = self.landmark_graph()
        return graph.csr(*graph.graph(X))

    def embed_graph(self, indices, weights):
        """The embed stage: ``Z @ P`` of rows given by their graph (:meth:`graph`; unit rows when asked), float64."""
        return self.landmark_graph().embed_graph(indices, weights)

    def assign_graph(self, indices, weights, centers, dtype):
        """k-means' assignment of rows given by their graph (:meth:`LandmarkGraph.assign_graph`): ``(labels,
        squared distances, sums, counts)``, the embedding in ``dtype`` never stored."""
        return self.landmark_graph().assign_graph(indices, weights, centers, dtype)

    def settled_cells(self, centers):
        """Which rows :meth:`assign_rows` labels from the approximate search's first sweep alone
        (:meth:`LandmarkGraph.settled_cells`: ``(m,)`` int64, or None where no row can be)."""
        check_is_fitted(self)
        return self.landmark_graph().settled_cells(centers)

    def assign_rows(self, X, centers, dtype, settled=None):
        """:meth:`assign_graph` of the rows of ``X`` (validated) searched again, rows of a settled cell labelled
        without the search's second sweep (:meth:`LandmarkGraph.assign_rows`)."""
        return self.landmark_graph().assign_rows(X, centers, dtype, settled)

    def statistics(self, X) -> GraphStatistics:
        """The graph statistics ``(Z^T Z, Z^T 1, rows)`` of the rows of ``X`` to the fitted landmarks (what
        :meth:`fit_rows` sums over every row; ``Z^T Z`` sparse where it is small)."""
        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        graph = self.landmark_graph()
        return GraphStatistics(*graph.statistics(*graph.graph(X)))

    def _finish(self, stats):
        """The eigenproblem (:func:`~kernelsketch.maps.landmark_eigen.landmark_embedding`) of the
        summed statistics, which are kept (``graph_gram_``, ``landmark_degrees_``, ``n_samples_seen_``)."""
        G, degrees, n_rows = stats
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        self.graph_gram_ = sp.csr_matrix(G)  # Z^T Z: r^2 entries a row at most, sparse on any real graph
        self.landmark_degrees_ = np.asarray(degrees, dtype=np.float64)
        self.n_samples_seen_ = int(n_rows)
        return self._solve(GraphStatistics(G, self.landmark_degrees_, self.n_samples_seen_))

    def _solve(self, stats):
        """Set the projection, eigenvalues and components of ``n_components`` / ``trivial`` from ``stats``."""
        k, drop = self.n_components, self.trivial == "drop"
        eig = landmark_embedding(stats, k, trivial=self.trivial)
        self.n_connected_components_ = eig.n_connected_components
        if self.n_connected_components_ > k + drop:
            _warn(
                f"the landmark affinity graph has {self.n_connected_components_} disconnected parts, more than "
                f"the {k} eigenvectors kept (one per cluster): they are an arbitrary choice among the parts and the "
                "clusters follow it; raise 'n_neighbors' (or the bandwidth) to connect the graph",
                GraphWarning,
            )
        self.projection_ = eig.projection
        self.eigenvalues_ = eig.eigenvalues
        self._n_features_out = k
        return self

    @property
    def graph_statistics_(self) -> GraphStatistics:
        """The fit's graph statistics ``(Z^T Z, Z^T 1, N)``: what any number of components is solved from."""
        check_is_fitted(self)
        if not hasattr(self, "graph_gram_"):
            raise AttributeError(
                "this embedding was saved before kernelsketch kept its graph statistics (graph_gram_): refit it"
            )
        return GraphStatistics(self.graph_gram_, self.landmark_degrees_, self.n_samples_seen_)

    def with_components(self, n_components: int, *, trivial: str | None = None) -> Self:
        """A copy of this fitted embedding with ``n_components`` (and ``trivial``) re-solved from the kept
        statistics: no pass over the data, the same landmarks and graph.

        ``est.with_components(k)`` is ``est`` refitted with ``n_components=k`` (the same seed, the same rows),
        to rounding: only the ``m x m`` eigenproblem runs again.

        Examples
        --------
        >>> import numpy as np
        >>> from kernelsketch.maps import LandmarkSpectralEmbedding
        >>> X = np.random.default_rng(0).normal(size=(500, 2))
        >>> emb = LandmarkSpectralEmbedding(n_components=2, n_landmarks=100, random_state=0).fit(X)
        >>> emb.with_components(5).transform(X).shape
        (500, 5)
        """
        from copy import deepcopy

        check_is_fitted(self)
        new = deepcopy(self)
        new.set_params(n_components=n_components, **({} if trivial is None else {"trivial": trivial}))
        new._validate_params()
        return new._solve(self.graph_statistics_)

    # -- fitting ---------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Draw the landmarks, sum the block statistics, solve the ``m x m`` eigenproblem (:meth:`fit_rows` of
        the rows in memory). Returns self."""
        with thread_limit(self.n_jobs):
            X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)
            names = vars(self).get("feature_names_in_")
            self.fit_rows(rows_in_memory(X, self.n_landmarks))
            if names is not None:
                self.feature_names_in_ = names
        return self

    def fit_rows(self, rows, *, keep_graph: bool = False):
        """Fit on a row source (:mod:`kernelsketch.utils.row_source`): the rows in memory (:meth:`fit`), a file's
        local engine or Dask's (:func:`kernelsketch.fit_source`), with the same numbers for the same seed.

        The landmarks are drawn (gathered by index) and the bandwidth resolved as :meth:`fit` resolves it on all
        rows; one pass sums each block's graph statistics (the previous block's ``Z^T Z`` beside the next
        block's search); the ``m x m`` eigenproblem is solved.  ``keep_graph``: each row's graph is kept by the
        source (``rows.map(..., keep=True)``) and returned, a source whose blocks are ``(indices, weights,
        float32 rows?)``, for later passes to read instead of searching again (the caller releases it);
        else None is returned.
        """
        from ..utils.row_source import count_rows

        N = count_rows(rows)
        m, seed, rng = self._plan(N)
        h = None
        if isinstance(self.bandwidth, str) and self.bandwidth in _HEURISTICS:
            h = bandwidth_of_rows(self.bandwidth, rows, random_state=seed)
        elif not isinstance(self.bandwidth, str):
            h = float(self.bandwidth)

        def gather(idx):
            return check_input(rows.gather(idx)[0], accept_sparse=("csr",))

        self.__dict__.pop("feature_names_in_", None)  # (a DataFrame's names: fit sets them again)
        self._choose_landmarks(LandmarkData(N, gather), m, rng, h)
        self.n_features_in_ = int(self.landmarks_.shape[1])
        name = type(self).__name__
        if self.statistics_rows is not None and N > self.statistics_rows:
            idx = uniform_sorted_indices(np.random.default_rng([seed, 0x5354]), N, self.statistics_rows)
            self._finish(self._sample_statistics(rows, idx))
            return None
        graph = self.landmark_graph()
        if not keep_graph and searches_on_device(graph.search):  # (each block's whole work on the device)
            self._finish(
                rows.reduce(block_rows_statistics, GraphStatistics.add, state=graph, desc=f"{name} statistics")
            )
            return None
        graphs = rows.map(block_graph, graph, desc=f"{name} graph", keep=keep_graph)
        try:
            stats = graphs.reduce(block_statistics, GraphStatistics.add, state=graph, desc=f"{name} statistics")
            self._finish(stats)
        except BaseException:
            graphs.release()
            raise
        return graphs if keep_graph else None

    def _sample_statistics(self, rows, idx):
        """The graph statistics of the rows at sorted ``idx``, in pieces of consecutive sample rows (each piece's
        graph and statistics computed where its rows are, the pieces of a batch side by side on Dask:
        :func:`~kernelsketch.utils.row_source.gather_mapped_pieces`), summed piece by piece in order: the same
        pieces and numbers on every engine."""
        from ..utils.progress import progress
        from ..utils.row_source import gather_mapped_pieces

        m = self.landmarks_.shape[0]
        d, r = int(self.n_features_in_), min(self.n_neighbors, m)
        step = max(1, min(_SAMPLE_PIECE_ROWS, get_chunk_n_rows(8 * (d + 4 * r), idx.size)))
        pieces = [idx[start : start + step] for start in range(0, idx.size, step)]
        batch = max(1, _SAMPLE_STATISTICS_BYTES // (8 * m * m))
        total, graph = None, self.landmark_graph()
        with progress(total=idx.size, desc=f"{type(self).__name__} statistics (sample)", unit="rows") as bar:
            for b in range(0, len(pieces), batch):
                parts = gather_mapped_pieces(rows, pieces[b : b + batch], rows_statistics, graph)
                total = GraphStatistics.add([total, *parts])
                bar.update(sum(len(piece) for piece in pieces[b : b + batch]))
        return total

    def transform(self, X: ArrayLike) -> FloatArray:
        """The spectral coordinates ``sqrt(N) Zh(x) V_k Lambda_k^{-1/2}`` of each row."""
        if (Z := maybe_dask_transform(self, X)) is not None:
            return Z
        with thread_limit(getattr(self, "n_jobs", None)):
            return self.transform_with_graph(X)[0]

    def transform_with_graph(self, X: ArrayLike):
        """``(transform(X), (indices, weights))``: the embedding and the graph it came from (:meth:`graph`), for a
        caller that needs both (the clusterer's labeling cuts the graph of the rows k-means was seeded on)."""
        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        return self.landmark_graph().embed_rows(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def rows_in_memory(X, n_landmarks):
    """Validated rows in memory as the row source a landmark spectral fit reads
    (:class:`~kernelsketch.utils.row_source.ArrayRows`), in blocks whose work for ``n_landmarks`` landmarks fits
    the working memory."""
    m = n_landmarks if not isinstance(n_landmarks, str) else resolve_n_landmarks("auto", X.shape[0])
    m = min(int(m), X.shape[0])  # (the m of the fit's plan)
    return ArrayRows(X, block_rows=max(get_chunk_n_rows(8 * (X.shape[1] + 4 * m), X.shape[0]), 1))
