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

import numbers
from contextlib import nullcontext
from typing import ClassVar, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, FloatArray, RandomStateLike
from ..kernels.selection import make_kernel
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.dispatch import maybe_dask_transform
from ..utils.estimator_checks import Interval, StrOptions
from ..utils.threads import blas_num_threads, run_claim_loops, single_threaded_blas
from ..utils.validation import check_input, check_random_state, derive_seed
from ..utils.warnings import warn as _warn
from .landmarks import resolve_n_landmarks, sample_row_indices, take_rows

#: bandwidth heuristics resolved on the data, as for the other estimators (``"local"`` is per row)
_HEURISTICS = ("median", "percentile", "mean_sq")
#: an eigenvalue of the normalized affinity this close to 1 marks a connected component
_COMPONENT_TOL = 1e-9
#: rows of one chunk of the affinity search (one thread's piece), whatever the number of threads
CHUNK_ROWS = 2048
#: eigenvalues kept in ``eigenvalues_`` beyond ``n_components`` (for the eigengap)
_EXTRA_EIGENVALUES = 10


class GraphWarning(UserWarning):
    """The landmark affinity graph cannot carry the clusters asked for (disconnected, or uninformative)."""


def _sq_distances(X, L, l_sq):
    """Squared Euclidean distances between the rows of ``X`` (dense or CSR) and ``L`` (dense), >= 0."""
    if sp.issparse(X):
        x_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        cross = np.asarray(X @ L.T)
    else:
        x_sq = np.einsum("ij,ij->i", X, X)
        cross = X @ L.T
    D2 = cross
    D2 *= -2.0
    D2 += x_sq[:, None]
    D2 += l_sq[None, :]
    np.maximum(D2, 0.0, out=D2)
    return D2


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
    bandwidth : "local", float or {"median", "percentile", "mean_sq"}, default="local"
        Affinity ``exp(-||x - u||^2 / h^2)`` between a row and a landmark.  ``"local"``: each
        row's own scale ``h(x)`` = its distance to its ``r``-th nearest landmark (the
        self-tuning scale of Zelnik-Manor & Perona, per row), which needs no global choice and
        never makes every affinity of a row vanish; a number or a heuristic of
        :func:`~kernelsketch.kernels.estimate_bandwidth`: one ``h`` for all rows.
    random_state : int, Generator or None
        Seeds the landmarks and the bandwidth heuristic.

    Attributes
    ----------
    landmarks_ : ndarray (m, n_features)
    landmark_indices_ : ndarray of int64 (m,)
    bandwidth_ : float or None
        The global ``h`` (None for ``"local"``).
    projection_ : ndarray (m, n_components)
        ``P = sqrt(N) D^{-1/2} V_k Lambda_k^{-1/2}``: ``transform(x) = z(x) @ P``.
    eigenvalues_ : ndarray
        The largest eigenvalues of ``Zh^T Zh`` (of the normalized row affinity
        ``W = Zh Zh^T``), in decreasing order: ``n_components`` and up to 10 more (the eigengap).
    landmark_degrees_ : ndarray (m,)
        Column sums ``D`` of ``Z`` over all fitted rows.
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
        "landmark_degrees_",
        "landmark_indices_",
        "landmarks_",
        "n_connected_components_",
        "n_samples_seen_",
        "projection_",
    )
    #: how the out-of-core driver fits it: landmark rows by index, then one pass of block statistics
    _fit_strategy: ClassVar[str] = "landmarks_then_pass"
    _dim_param: ClassVar[str | None] = "n_components"
    _size_param: ClassVar[str | None] = "n_landmarks"

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "bandwidth": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"local", *_HEURISTICS})],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        *,
        n_components: int | None = None,
        n_landmarks: int | str = 1000,
        n_neighbors: int = 10,
        bandwidth: float | str = "local",
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.n_neighbors = n_neighbors
        self.bandwidth = bandwidth
        self.random_state = random_state

    # -- the seams the out-of-core driver calls ------------------------------------
    def _plan(self, n_rows):
        """``(landmark indices, bandwidth seed)`` for ``n_rows`` rows, in fit's order of draws."""
        self._validate_params()
        if self.n_components is None:
            raise ValueError(f"{type(self).__name__} needs n_components (k eigenvectors for k clusters)")
        if n_rows < 2:
            raise ValueError(f"{type(self).__name__} needs n_samples >= 2, got n_samples = {n_rows}")
        rng = check_random_state(self.random_state)
        bandwidth_seed, landmark_seed = derive_seed(rng), derive_seed(rng)
        m = resolve_n_landmarks(self.n_landmarks, n_rows) if isinstance(self.n_landmarks, str) else self.n_landmarks
        m = min(int(m), n_rows)
        if self.n_components > n_rows:
            raise ValueError(f"{self.n_components} clusters (eigenvectors) must be <= the number of rows ({n_rows})")
        if self.n_components > m:
            raise ValueError(f"{self.n_components} clusters (eigenvectors) must be <= the number of landmarks ({m})")
        return sample_row_indices(n_rows, m, [landmark_seed, 0x5350]), bandwidth_seed

    def _set_landmarks(self, L, idx, bandwidth):
        """Seam 2: the landmark rows ``L`` (indices ``idx``) and the global bandwidth (None: local)."""
        L = np.ascontiguousarray(L.toarray() if sp.issparse(L) else L, dtype=np.float64)
        self.landmarks_ = L
        self.landmark_indices_ = None if idx is None else np.asarray(idx, dtype=np.int64)
        self.bandwidth_ = None if bandwidth is None else float(bandwidth)

    def _affinity(self, X):
        """``Z`` of the rows of ``X``: CSR ``(n, m)``, ``r`` Gaussian weights per row summing to 1."""
        L = self.landmarks_
        l_sq = np.einsum("ij,ij->i", L, L)  # O(m D): recomputed, so the fitted state stays what is saved
        m = L.shape[0]
        r = min(self.n_neighbors, m)
        n = X.shape[0]
        indices = np.empty((n, r), dtype=np.int64)
        weights = np.empty((n, r), dtype=np.float64)
        # row chunks on every core (the nearest-landmark search is numpy's single-threaded argpartition;
        # BLAS is pinned to one thread meanwhile); each row's result depends on that row alone
        # chunk boundaries never depend on the thread count: BLAS may round a row differently in
        # another chunk shape, and the graph must not change with the machine's cores
        chunk = min(get_chunk_n_rows(3 * 8 * m, n), CHUNK_ROWS)
        slices = list(gen_row_slices(n, chunk))
        workers = max(1, min(blas_num_threads(), len(slices)))

        def piece(t, _state):
            s = slices[t]
            Xc = X[s]
            if not sp.issparse(Xc):
                Xc = np.asarray(Xc, dtype=np.float64)
            D2 = _sq_distances(Xc, L, l_sq)
            idx = np.argpartition(D2, r - 1, axis=1)[:, :r] if r < m else np.broadcast_to(np.arange(m), D2.shape)
            d2 = np.take_along_axis(D2, idx, axis=1)
            if self.bandwidth_ is None:
                scale = d2.max(axis=1, keepdims=True)  # the r-th nearest landmark's squared distance
                w = np.exp(-np.divide(d2, scale, out=np.zeros_like(d2), where=scale > 0))
            else:
                w = np.exp(-d2 / self.bandwidth_**2)
            indices[s], weights[s] = idx, w

        with single_threaded_blas() if workers > 1 else nullcontext():
            run_claim_loops(piece, len(slices), workers)
        sums = weights.sum(axis=1)
        empty = ~(sums > 0)
        if empty.any():
            raise ValueError(
                f"bandwidth h={self.bandwidth_:.4g} makes every affinity of {int(empty.sum())} of {n} rows 0 "
                f"(their {r} nearest landmarks are further than ~27 h); use a larger bandwidth or "
                "bandwidth='local'"
            )
        weights /= sums[:, None]
        return sp.csr_matrix(
            (weights.ravel(), indices.ravel(), np.arange(0, n * r + 1, r, dtype=np.int64)), shape=(n, m)
        )

    def _statistics(self, X):
        """One block's ``(Z^T Z, Z^T 1, rows)``: what the fit sums over all rows.

        ``Z^T Z`` stays sparse (at most ``r^2`` entries a row): a Dask worker sends that, not
        an ``m x m`` dense block, and the sum is densified once in :meth:`_finish`.
        """
        Z = self._affinity(X)
        return (Z.T @ Z).tocsr(), np.asarray(Z.sum(axis=0)).ravel(), X.shape[0]

    @staticmethod
    def _merge(parts):
        parts = [p for p in parts if p is not None]
        G, s, n = parts[0]
        G = G.copy()
        s = s.copy()
        for G2, s2, n2 in parts[1:]:
            G = G + G2
            s += s2
            n += n2
        return G, s, n

    def _finish(self, stats):
        """Seam 3: the eigenproblem of ``D^{-1/2} Z^T Z D^{-1/2}`` from the summed statistics."""
        G, degrees, n_rows = stats
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        m, k = G.shape[0], self.n_components
        inv_sqrt = np.zeros(m)
        used = degrees > 0
        inv_sqrt[used] = 1.0 / np.sqrt(degrees[used])
        S = G * inv_sqrt[:, None] * inv_sqrt[None, :]
        lam, V = np.linalg.eigh(S)
        lam, V = lam[::-1], V[:, ::-1]
        lam = np.clip(lam, 0.0, None)
        if not lam[k - 1] > 1e-12 * max(lam[0], 1e-300):
            raise ValueError(
                f"the landmark graph has rank {int(np.sum(lam > 1e-12 * lam[0]))}, fewer than the {k} clusters "
                "(eigenvectors) asked for: too few distinct rows or landmarks for this many clusters"
            )
        self.n_connected_components_ = int(np.sum(lam > 1.0 - _COMPONENT_TOL))
        if self.n_connected_components_ > k:
            _warn(
                f"the landmark affinity graph has {self.n_connected_components_} disconnected parts, more than "
                f"n_components={k}: the eigenvectors kept are an arbitrary choice among them and the clusters "
                "follow it; raise n_neighbors (or the bandwidth) to connect the graph",
                GraphWarning,
            )
        self.projection_ = np.sqrt(n_rows) * inv_sqrt[:, None] * V[:, :k] / np.sqrt(lam[:k])[None, :]
        self.eigenvalues_ = lam[: min(m, k + _EXTRA_EIGENVALUES)].copy()
        self.landmark_degrees_ = degrees
        self.n_samples_seen_ = int(n_rows)
        self._n_features_out = k
        return self

    def _resolve_bandwidth(self, X, seed):
        if self.bandwidth == "local":
            return None
        if isinstance(self.bandwidth, str):
            return make_kernel("gaussian", self.bandwidth, None, X, random_state=seed).bandwidth
        return float(self.bandwidth)

    # -- scikit-learn API ------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Draw the landmarks, sum the block statistics, solve the ``m x m`` eigenproblem. Returns self."""
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)
        idx, seed = self._plan(X.shape[0])
        self._set_landmarks(take_rows(X, idx), idx, self._resolve_bandwidth(X, seed))
        chunk = get_chunk_n_rows(8 * (X.shape[1] + 4 * self.landmarks_.shape[0]), X.shape[0])
        stats = self._merge([self._statistics(X[s]) for s in gen_row_slices(X.shape[0], max(chunk, 1))])
        return self._finish(stats)

    def transform(self, X: ArrayLike) -> FloatArray:
        """The spectral coordinates ``sqrt(N) Zh(x) V_k Lambda_k^{-1/2}`` of each row."""
        if (Z := maybe_dask_transform(self, X)) is not None:
            return Z
        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        U = np.asarray(self._affinity(X) @ self.projection_)
        return U.astype(X.dtype, copy=False) if X.dtype == np.float32 else U

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
