"""A fitted landmark graph as plain arrays: each row's work of a landmark spectral embedding.

:class:`~kernelsketch.maps.LandmarkSpectralEmbedding` (an estimator: parameters, validation, the fit's recipe)
holds its fitted state; :class:`LandmarkGraph` is what a block of rows needs of it -- the landmarks, the search,
the weights, the projection -- and the block functions here are the work the fit pass, the seeding sample and the
assignment pass send to wherever the rows are.  Nothing here imports scikit-learn, so a Dask worker that runs
them starts without it (:mod:`kernelsketch.distributed.worker_preload`), and a block's numbers are the same
whichever process computes them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.neighbors import graph_csr, graph_embed, graph_gram
from ..kernels.search import ApproximateSearch, built_searcher, checked_search
from ..utils.threads import parallel_rows, run_pieces
from ..utils.validation import check_input
from .landmark_eigen import GraphStatistics

#: search="auto" is approximate up to this many columns, where it is faster than the exact search
#: (``benchmarks/results/approximate-search.md``: 2-5x at 2-20 columns, even near 80, slower above)
AUTO_APPROXIMATE_MAX_FEATURES = 40


def user_searcher(search):
    """``search`` when it is a searcher object (a user's, faiss's), else None (a name: the package's own)."""
    return None if search is None or isinstance(search, str) else search


def searches_on_device(search) -> bool:
    """Whether ``search`` is a device searcher that assigns a block where it searches it (its
    ``fused_routes()``: :meth:`~kernelsketch.kernels.torch_search.TorchSearch.fused_routes`)."""
    routes = getattr(user_searcher(search), "fused_routes", None)
    return callable(routes) and "landmark_assign" in routes()


def _unit_rows(U):
    """Each row of ``U`` scaled to unit length in place (Ng, Jordan & Weiss); a zero row stays 0."""
    norms = np.sqrt(np.einsum("ij,ij->i", U, U))
    np.divide(U, norms[:, None], out=U, where=norms[:, None] > 0)
    return U


class LandmarkGraph:
    """Each row joined to its ``r`` nearest landmarks with Gaussian weights, and what is computed from that graph.

    Parameters
    ----------
    landmarks : ndarray (m, n_features), float64
    n_neighbors : int
        ``r`` (capped at ``m``).
    bandwidth : float or None
        The global ``h``; None: each row's own scale (its ``r``-th nearest landmark's distance).
    search : {"auto", "exact", "approximate"} or a searcher object
        As :class:`~kernelsketch.maps.LandmarkSpectralEmbedding`'s ``search``.
    projection : ndarray (m, k), optional
        ``P``: a row's embedding is ``z(x) @ P`` (None before the eigenproblem is solved).
    unit_rows : bool, default=False
        Embedded rows scaled to unit length.
    searchers : dict, optional
        The searchers built on ``landmarks`` so far, by kind (shared with the estimator that made this graph; never
        pickled: a Dask worker builds its own once from the same landmarks, the same searcher).
    name : str
        Named in messages (the estimator's class).
    """

    def __init__(
        self,
        landmarks,
        *,
        n_neighbors,
        bandwidth,
        search,
        projection=None,
        unit_rows=False,
        searchers=None,
        name="LandmarkSpectralEmbedding",
    ):
        self.landmarks = landmarks
        self.n_neighbors = int(n_neighbors)
        self.bandwidth = bandwidth
        self.search = search
        self.projection = projection
        self.unit_rows = bool(unit_rows)
        self.searchers = {} if searchers is None else searchers
        self.name = name

    def __getstate__(self):
        state = dict(vars(self))
        state["searchers"] = {}  # (rebuilt where needed from the landmarks: not shipped with every task)
        return state

    @property
    def r(self):
        """Landmarks each row is joined to: ``min(n_neighbors, m)``."""
        return min(self.n_neighbors, self.landmarks.shape[0])

    # -- rows in -----------------------------------------------------------------
    def check_rows(self, X):
        """``X`` validated as rows of this graph's columns (:func:`~kernelsketch.utils.validation.check_input`;
        a ValueError naming both counts for another width)."""
        X = check_input(X, accept_sparse=("csr",))
        d = self.landmarks.shape[1]
        if X.shape[1] != d:
            raise ValueError(f"X has {X.shape[1]} features, but {self.name} is expecting {d} features as input.")
        return X

    # -- the search --------------------------------------------------------------
    def search_kind(self, X):
        """``search`` resolved for rows like ``X``: ``"exact"``, ``"approximate"`` or the user's searcher object.

        ``"auto"`` is approximate for dense rows of at most :data:`AUTO_APPROXIMATE_MAX_FEATURES` columns.
        """
        if not isinstance(self.search, str):
            return self.search
        if sp.issparse(X) or self.search == "exact":
            return "exact"
        return "approximate" if self.search == "approximate" or X.shape[1] <= AUTO_APPROXIMATE_MAX_FEATURES else "exact"

    def searcher(self, X):
        """The searcher of :meth:`search_kind`, built on the landmarks once (every process builds the same one
        from the same landmarks)."""
        return self.searcher_of(self.search_kind(X))

    def searcher_of(self, kind):
        """:meth:`searcher` of a resolved kind."""
        key = kind if isinstance(kind, str) else id(kind)
        if key not in self.searchers:
            self.searchers[key] = built_searcher(kind, self.landmarks)
        return self.searchers[key]

    # -- the graph ---------------------------------------------------------------
    def graph(self, X, also=()):
        """Each row's ``r`` nearest landmarks and its Gaussian weights summing to 1.

        ``(indices int32 (n, r), weights (n, r))``: everything the embedding needs of a row.  The weights are
        float32 for float32 rows (their distances are float32: the search runs in the rows' dtype), else
        float64.  ``also``: independent calls run beside the search, on its threads (e.g. the previous
        block's ``Z^T Z`` in a fit pass), all done on return.  ``X``: validated rows (:meth:`check_rows`).
        """
        m, r = self.landmarks.shape[0], self.r
        searcher = self.searcher(X)
        if isinstance(searcher, ApproximateSearch):
            d2, indices = searcher.search(X, r, also=also)
        else:
            run_pieces(also)
            if sp.issparse(X) and not getattr(searcher, "accepts_sparse", False):
                X = X.toarray()
            dtype = np.float32 if X.dtype == np.float32 else np.float64
            d2, indices = checked_search(searcher, X, r, m, dtype)  # ascending: d2[:, -1] is the r-th nearest
        return indices, self.weights(d2)

    def weights(self, d2):
        """The Gaussian weights of rows at squared distances ``d2`` (:meth:`weights_into`), float32 for float32
        distances, row by row: the same weights on any number of threads."""
        weights = np.empty(d2.shape, dtype=np.float32 if d2.dtype == np.float32 else np.float64)
        parallel_rows(self.weights_into, d2, weights)
        return weights

    def weights_into(self, d2, weights):
        """The Gaussian weights of rows at squared distances ``d2`` (ascending), each row summing to 1, into
        ``weights`` (the same shape; computed in its dtype)."""
        weights[...] = d2
        if self.bandwidth is None:
            scale = weights[:, -1:].copy()  # the r-th nearest landmark's squared distance
            at_zero = scale[:, 0] <= 0  # every neighbour at distance 0: equal weights
            if at_zero.any():
                scale[at_zero] = 1.0
                weights[at_zero] = 0.0
            np.divide(weights, scale, out=weights)
            np.negative(weights, out=weights)
        else:
            # exp(-(d^2 - d_1^2) / h^2): the same weights once each row is scaled to sum 1, without the
            # underflow of exp(-d^2 / h^2) for a row far from every landmark (its nearest one weighs 1)
            weights -= weights[:, :1].copy()
            np.negative(weights, out=weights)
            weights /= self.bandwidth**2
        np.exp(weights, out=weights)
        weights /= weights.sum(axis=1, keepdims=True)  # >= 1 before: the nearest landmark's weight is > 0

    def csr(self, indices, weights):
        """``Z`` of rows given by their graph: CSR ``(n, m)``."""
        return graph_csr(indices, weights, self.landmarks.shape[0])

    def device_route(self, X, name):
        """The searcher's own route ``name`` for the dense rows ``X`` (``"landmark_statistics"``,
        ``"landmark_assign"``: one its ``fused_routes()`` names, a CUDA
        :class:`~kernelsketch.kernels.torch_search.TorchSearch`'s, that does a block's whole work where its search
        runs, only the rows sent and the answer returned), or None."""
        if sp.issparse(X):
            return None
        searcher = self.searcher(X)
        routes = getattr(searcher, "fused_routes", None)
        return getattr(searcher, name) if callable(routes) and name in routes() else None

    def rows_statistics(self, X):
        """The graph statistics ``(Z^T Z, Z^T 1, rows)`` of validated rows (:meth:`check_rows`): on the searcher's
        device where it has the route (:meth:`device_route`), else :meth:`statistics` of :meth:`graph`."""
        route = self.device_route(X, "landmark_statistics")
        if route is not None:
            return route(X, self.r, self.bandwidth)
        return self.statistics(*self.graph(X))

    def statistics(self, indices, weights):
        """The graph statistics ``(Z^T Z, Z^T 1, rows)`` of rows given by their graph."""
        m = self.landmarks.shape[0]
        degrees = np.zeros(m)  # Z^T 1, summed in the same sweep as Z^T Z
        return graph_gram(indices, weights, m, degrees), degrees, indices.shape[0]

    # -- the embedding and k-means' assignment ---------------------------------------
    def embed_graph(self, indices, weights):
        """``Z @ P`` of rows given by their graph (unit rows when asked), float64
        (:func:`~kernelsketch.kernels.neighbors.graph_embed`: the numbers of ``transform``'s CSR product)."""
        U = graph_embed(indices, weights, self.projection)
        if self.unit_rows:
            _unit_rows(U)
        return U

    def embed_rows(self, X):
        """``(the embedding of X, (indices, weights))`` of validated rows (:meth:`check_rows`), the embedding in X's
        dtype where X is float32: ``transform``'s numbers and the graph they came from."""
        graph = self.graph(X)
        U = self.embed_graph(*graph)
        return (U.astype(X.dtype, copy=False) if X.dtype == np.float32 else U), graph

    def assign_graph(self, indices, weights, centers, dtype):
        """k-means' assignment of rows given by their graph, the embedding in ``dtype`` never stored
        (:func:`~kernelsketch.kernels.lloyd.assign_graph_with_statistics`): ``(labels, squared distances, sums,
        counts)``, the numbers of :func:`~kernelsketch.kernels.lloyd.assign_with_statistics` of the embedded
        rows, so a kept graph and a second search give the same labels."""
        from ..kernels.lloyd import assign_graph_with_statistics, assign_with_statistics

        if self.unit_rows or user_searcher(self.search) is not None:  # (a user's searcher finds the centres too)
            E = self.embed_graph(indices, weights).astype(dtype, copy=False)
            return assign_with_statistics(E, centers, user_searcher(self.search))
        return assign_graph_with_statistics(indices, weights, self.projection, centers, dtype)

    def assign_searched(self, X, centers, dtype):
        """:meth:`assign_graph` of the validated rows ``X`` searched again: on the searcher's device where it has
        the route (:meth:`device_route`; the same numbers to rounding), else of :meth:`graph`."""
        route = self.device_route(X, "landmark_assign")
        if route is not None:
            return route(X, self.r, self.bandwidth, self.projection, centers, dtype, unit_rows=self.unit_rows)
        return self.assign_graph(*self.graph(X), centers, dtype)

    def settled_cells(self, centers):
        """Which rows :meth:`assign_rows` labels from the approximate search's first sweep alone: ``(m,)`` int64,
        landmark ``p``'s entry the label of every row whose nearest landmark found by the first sweep is ``p``,
        or -1; None where no row can be (unit rows, a user's searcher, no numba).

        A row's embedding ``u = sum_a w_a P[j_a]`` is a convex combination (weights >= 0 summing to 1) of the
        projection's rows of its ``r`` neighbours, which the approximate search takes from ``p``'s candidates.
        The cells of the nearest-centre assignment are convex, so when the rows of every candidate of ``p``
        have the same nearest centre ``h``, with each key ``|c|^2 - 2 c.v`` of another centre ahead of ``h``'s
        by more than the rounding of an assignment in float32 or float64 (bounded below), so has ``u``: the label is
        ``h`` whichever neighbours and weights the second sweep would find.  The votes' assigner (one-hot rows,
        the identity's centres) settles a cell whose candidates share one landmark label.
        """
        from ..utils.numba_cache import numba_installed

        if self.unit_rows or user_searcher(self.search) is not None or not numba_installed():
            return None  # (numba installed but broken: the search finds no p, and every row is searched in full)
        m = self.landmarks.shape[0]
        candidates = self.searcher_of("approximate").index(self.r).candidates
        P = np.asarray(self.projection, dtype=np.float64)
        C = np.asarray(centers, dtype=np.float64)
        c_sq = (C * C).sum(axis=1)
        keys = c_sq[None, :] - 2.0 * (P @ C.T)  # (m, n_centres): each landmark's own row's keys
        if C.shape[0] == 1:
            return np.zeros(m, dtype=np.int64)
        two = np.partition(keys, 1, axis=1)[:, :2]
        nearest = np.argmin(keys, axis=1)
        # the assignment's rounding (in float32 at worst): u and the centres rounded, a k-term dot product in
        # float32, the weights' sum 1 to rounding; |u| <= max |P_j| (a convex combination)
        eps = float(np.finfo(np.float32).eps)
        scale = float(c_sq.max()) + 2.0 * float(np.sqrt(c_sq.max())) * float(np.sqrt((P * P).sum(axis=1).max()))
        tol = 8.0 * (P.shape[1] + candidates.shape[1] + 4) * eps * scale
        clear = (two[:, 1] - two[:, 0]) > tol
        first = nearest[candidates[:, 0]]
        same = (nearest[candidates] == first[:, None]).all(axis=1) & clear[candidates].all(axis=1)
        return np.where(same, first, -1).astype(np.int64)

    def assign_rows(self, X, centers, dtype, settled=None):
        """:meth:`assign_graph` of the rows of ``X`` (validated) searched again, rows of a settled cell
        (:meth:`settled_cells`) labelled without the search's second sweep: ``(labels, squared distances, sums,
        counts)``, where ``labels`` and ``counts`` cover every row and the distances and sums only the rows
        embedded (the others' embedding is never formed).  The labels are :meth:`assign_graph`'s."""
        searcher = self.searcher(X)
        found = None
        if settled is not None and isinstance(searcher, ApproximateSearch):
            found = searcher.search_settled(X, self.r, settled)
        if found is None:
            return self.assign_searched(X, centers, dtype)
        d2, indices, p = found
        labels = settled[p]
        counts = np.bincount(labels[labels >= 0], minlength=np.asarray(centers).shape[0]).astype(np.float64)
        rest = np.flatnonzero(labels < 0)
        out, sq, sums, counts_rest = self.assign_graph(indices[rest], self.weights(d2[rest]), centers, dtype)
        labels[rest] = out
        return labels, sq, sums, counts + counts_rest


# -- the block functions: what a pass sends where the rows are (state: a LandmarkGraph) -------------------
def block_graph(X, graph, also=()):
    """A block's graph as a fit pass maps (and keeps) it: ``(indices, weights, whether X is float32)``; ``also``
    run beside the search (the previous block's statistics)."""
    indices, weights = graph.graph(X, also=also)
    return indices, weights, X.dtype == np.float32


def block_statistics(kept, graph):
    """The graph statistics of a block given by its graph (:func:`block_graph`)."""
    return graph.statistics(kept[0], kept[1])


def block_rows_statistics(X, graph):
    """The graph statistics of a block of rows as a pass reads it (:meth:`LandmarkGraph.rows_statistics`: on a
    device searcher's device, the rows' graph never formed on the host)."""
    return GraphStatistics(*graph.rows_statistics(X))


def rows_statistics(X, graph):
    """The graph statistics of gathered rows (a sample's piece): :meth:`LandmarkGraph.rows_statistics`."""
    return block_rows_statistics(check_input(X, accept_sparse=("csr",)), graph)


def sample_embedding(X, graph):
    """The seeding sample's embedding (``transform``'s numbers), and what a clusterer's labeling reads of those
    rows: their graph and the rows themselves (run where the rows are)."""
    U, kept = graph.embed_rows(graph.check_rows(X))
    return U, (kept, X)
