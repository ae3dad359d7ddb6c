"""Searcher objects: ``build(points)``, then ``search(X, r) -> (squared distances, indices)``.

One interface for every nearest-point search of the package, as faiss's ``Index.add`` /
``Index.search``: the landmark spectral embedding's graph (each row's ``r`` nearest landmarks) and
the k-means landmark selection's assignments take a searcher, and ``search=`` of
:class:`~kernelsketch.maps.LandmarkSpectralEmbedding` accepts ``"auto"``, ``"exact"``,
``"approximate"`` or **any object with these two methods** (a GPU library, faiss, an index of your own):

* ``build(points)`` takes the ``(m, d)`` points searched (landmarks, centres) and returns the searcher
  (``self``, or a new object); it is called on a copy of the object the user passed, once per fitted set of
  points.
* ``search(X, r)`` takes ``(n, d)`` rows (float32 or float64 ndarray; CSR only for a searcher whose
  ``accepts_sparse`` attribute is true) and returns ``(sq_distances, indices)``, each ``(n, r)``: squared
  Euclidean distances and integer indices into the points.  Rows need not be sorted (:func:`checked_search`
  sorts them); an index outside ``[0, m)``, a wrong shape or a negative or non-finite distance is refused.

A searcher that finds other neighbours than the exact search (an approximate one) is held to a stated
tolerance, not to bit identity: the tests ask the same labels (ARI >= .99) as the exact search on well-separated
data, and report the neighbour recall.

Classes: :class:`ExactSearch` (all ``m`` distances by BLAS tiles, numba or numpy selection),
:class:`ApproximateSearch` (U-SPEC's coarse-to-fine search) and :class:`FaissSearch` (faiss's exact
``IndexFlatL2``; the ``bench`` extra's ``faiss-cpu``); the PyTorch one, for a GPU, is
:class:`~kernelsketch.kernels.torch_search.TorchSearch` (``device=`` of the drivers).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from .neighbors import (
    SearchIndex,
    approximate_nearest,
    approximate_nearest_settled,
    build_search_index,
    nearest,
    search_origin,
)

__all__ = [
    "ApproximateSearch",
    "ExactSearch",
    "FaissSearch",
    "Searcher",
    "built_searcher",
    "checked_search",
    "make_searcher",
]


@runtime_checkable
class Searcher(Protocol):
    """What ``search=`` accepts besides a name: ``build(points) -> searcher``, ``search(X, r) -> (d2, idx)``."""

    def build(self, points: np.ndarray) -> Any: ...

    def search(self, X: Any, r: int) -> tuple[np.ndarray, np.ndarray]: ...


def _points(points):
    P = points.toarray() if sp.issparse(points) else np.asarray(points)
    if P.ndim != 2 or P.shape[0] < 1:
        raise ValueError(f"a searcher needs a non-empty (m, d) array of points, got shape {P.shape}")
    return np.ascontiguousarray(P, dtype=np.float64)


class ExactSearch:
    """All ``m`` distances of every row (:func:`~kernelsketch.kernels.neighbors.nearest`): the exact answer.

    ``backend``: ``"numba"``, ``"numpy"`` or None (chosen by the search's size; the same neighbours either way).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels.search import ExactSearch
    >>> s = ExactSearch().build(np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]]))
    >>> d2, idx = s.search(np.array([[0.9, 0.1]]), 2)
    >>> idx.tolist(), np.round(d2, 2).tolist()
    ([[1, 0]], [[0.02, 0.82]])
    """

    accepts_sparse = True
    exact = True

    def __init__(self, backend: str | None = None) -> None:
        self.backend = backend

    def build(self, points):
        self.points_ = _points(points)
        return self

    def search(self, X, r):
        return nearest(X, self.points_, r, backend=self.backend)


class ApproximateSearch:
    """U-SPEC's coarse-to-fine search (:func:`~kernelsketch.kernels.neighbors.approximate_nearest`).

    Each row's nearest group centre, that group's nearest point ``p``, then the ``r`` nearest among
    ``p``'s ``5 r + 1`` nearest points: about ``2 sqrt(m) + 5 r`` distances a row.  The grouping is built
    once per ``r`` (deterministic: every process builds the same one) and never saved.  Dense rows only.
    ``search(X, r, also=...)`` runs independent calls on the search's threads (the fit pass's ``Z^T Z``).
    """

    accepts_sparse = False
    exact = False

    def __init__(self, backend: str | None = None) -> None:
        self.backend = backend

    def build(self, points):
        self.points_ = _points(points)
        self._indexes: dict[int, SearchIndex] = {}
        return self

    def index(self, r: int) -> SearchIndex:
        """The points grouped for ``r`` neighbours (built on first use)."""
        if r not in self._indexes:
            self._indexes.clear()  # one r at a time: the index holds m x (5 r + 1) candidates
            self._indexes[r] = build_search_index(self.points_, r)
        return self._indexes[r]

    def search(self, X, r, also=()):
        return approximate_nearest(X, self.points_, r, self.index(r), backend=self.backend, also=also)

    def search_settled(self, X, r, settled):
        """:func:`~kernelsketch.kernels.neighbors.approximate_nearest_settled`: ``(sq_distances, indices, p)``, the
        second sweep skipped for rows whose ``p`` is settled; None where that search cannot run (no numba, or
        the numpy backend asked for)."""
        if self.backend == "numpy":
            return None
        return approximate_nearest_settled(X, self.points_, r, self.index(r), settled)


#: the largest centred coordinate whose squared distances float32 holds apart (below: they underflow; above,
#: divided by sqrt(d): they overflow float32's 3.4e38, with room for sums of d squares)
FLOAT32_SCALE = (1e-15, 1e18)


class FaissSearch:
    """faiss's exact search (``IndexFlatL2``, float32), the ``bench`` extra's ``faiss-cpu`` (or a GPU build).

    The rows and points are moved to :func:`~kernelsketch.kernels.neighbors.search_origin` of the points
    first, as every search here is, so a common offset costs no digits.  faiss computes in float32 whatever
    the input: neighbours at near-equal distances may differ from :class:`ExactSearch`'s in float64.
    """

    accepts_sparse = False
    exact = True
    #: a model file keeps the class (no parameters); the index is rebuilt where the model is used
    _init_params: tuple[str, ...] = ()
    _persistent_state: tuple[str, ...] = ()
    _transient_state = ("points_", "origin_", "index_")

    def __init__(self) -> None:
        pass

    def build(self, points):
        try:
            import faiss
        except ImportError as exc:
            raise ImportError("FaissSearch needs faiss (pip install faiss-cpu, or kernelsketch[faiss])") from exc
        del faiss
        self.points_ = _points(points)
        self.origin_ = search_origin(self.points_)
        self._check_float32_range(self.points_, "the points")
        self._add(self.points_)
        return self

    def _check_float32_range(self, A, what, small=True):
        """A ValueError when ``A`` (moved to the origin) holds coordinates whose squared distances float32 cannot
        hold: beyond ~1e18 they overflow, below ~1e-15 (the largest) they underflow to 0."""
        moved = A if self.origin_ is None else A - self.origin_
        if moved.size == 0:
            return
        scale = float(np.max(np.abs(moved)))
        if scale > FLOAT32_SCALE[1] / np.sqrt(max(moved.shape[1], 1)) or (small and 0.0 < scale < FLOAT32_SCALE[0]):
            raise ValueError(
                f"FaissSearch computes in float32, and {what} span {scale:.3g} (after centring): their squared "
                f"distances {'overflow' if scale > 1 else 'underflow'} float32's range; use the exact search "
                "(search='exact', --search exact), which computes in the data's float64, or rescale the data"
            )

    def search(self, X, r):
        X = np.asarray(X)
        self._check_float32_range(X, "the rows searched", small=False)  # (their spread: the points' matters)
        moved = X if self.origin_ is None else X - self.origin_
        d2, idx = self.index_.search(np.ascontiguousarray(moved, dtype=np.float32), int(r))
        return np.maximum(d2, 0.0), idx.astype(np.int32)

    def __getstate__(self):  # a faiss index does not pickle: rebuilt from the points where needed
        state = dict(vars(self))
        state.pop("index_", None)
        return state

    def __setstate__(self, state):
        vars(self).update(state)
        if "points_" in state:
            self._add(self.points_)

    def _add(self, P):
        import faiss

        moved = P if self.origin_ is None else P - self.origin_
        self.index_ = faiss.IndexFlatL2(P.shape[1])
        self.index_.add(np.ascontiguousarray(moved, dtype=np.float32))


#: the searchers ``search=`` names
SEARCHERS = {"exact": ExactSearch, "approximate": ApproximateSearch, "faiss": FaissSearch}


def make_searcher(search) -> Any:
    """A new, unbuilt searcher for ``search``: a name of :data:`SEARCHERS`, or a copy of a user's object.

    A user's object is copied (``copy.deepcopy``), so that ``build`` never changes the estimator parameter
    it came from (scikit-learn's rule: ``fit`` does not modify parameters).
    """
    if isinstance(search, str):
        if search not in SEARCHERS:
            raise ValueError(f"search must be one of {sorted(SEARCHERS)} or a searcher object, got {search!r}")
        return SEARCHERS[search]()
    if not isinstance(search, Searcher):
        raise TypeError(
            f"search must be a name or an object with build(points) and search(X, r) methods, got {type(search)}"
        )
    from copy import deepcopy

    return deepcopy(search)


def built_searcher(search, points) -> Any:
    """:func:`make_searcher` of ``search``, built on ``points``: what ``build`` returned, which must be the
    searcher (``return self``, as scikit-learn's ``fit`` does)."""
    searcher = make_searcher(search)
    built = searcher.build(points)
    if built is None or not callable(getattr(built, "search", None)):
        raise TypeError(
            f"{type(searcher).__name__}.build(points) returned {type(built).__name__}: build must return the "
            "searcher itself (end it with `return self`)"
        )
    return built


def checked_search(searcher, X, r: int, n_points: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``searcher.search(X, r)`` checked and normalized: ``(d2 in dtype, indices int32)``, rows ascending.

    The package's own searchers return that already (and are passed through); another object's answer is
    checked (shapes ``(n, r)``, indices in ``[0, n_points)`` and distinct within a row, distances finite and
    >= 0, to rounding) and each row sorted by (distance, index), so a user's searcher is held to the same
    contract as ours.
    """
    d2, idx = searcher.search(X, r)
    if type(searcher) in SEARCHERS.values() and type(searcher) is not FaissSearch:
        return d2, idx
    if getattr(type(searcher), "_sorted_rows", False):  # (TorchSearch: checked and ascending where it computed them)
        return d2.astype(dtype, copy=False), idx
    name = type(searcher).__name__
    d2, idx = np.asarray(d2), np.asarray(idx)
    n = X.shape[0]
    if d2.shape != (n, r) or idx.shape != (n, r):
        raise ValueError(
            f"{name}.search(X, r={r}) must return two ({n}, {r}) arrays, got shapes {d2.shape} and {idx.shape}"
        )
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name}.search returned indices of dtype {idx.dtype}; integers are needed")
    if n and (idx.min() < 0 or idx.max() >= n_points):
        raise ValueError(f"{name}.search returned indices outside [0, {n_points}) (e.g. faiss's -1 for 'not found')")
    d2 = d2.astype(dtype, copy=False)
    if not np.all(np.isfinite(d2)):
        raise ValueError(f"{name}.search returned non-finite distances")
    if n and d2.min() < -1e-6 * max(1.0, float(np.abs(d2).max())):
        raise ValueError(f"{name}.search returned negative squared distances")
    if r > 1 and n:
        ordered = np.sort(idx, axis=1)
        repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if repeated.size:
            raise ValueError(
                f"{name}.search returned the same point more than once in a row (row {int(repeated[0])}: "
                f"{idx[repeated[0]].tolist()}; {repeated.size} such rows): each row's r neighbours must be distinct"
            )
    d2 = np.maximum(d2, 0.0)
    order = np.lexsort((idx, d2), axis=1)
    return np.take_along_axis(d2, order, axis=1), np.take_along_axis(idx, order, axis=1).astype(np.int32)
