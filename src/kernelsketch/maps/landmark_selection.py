"""How a landmark estimator chooses its landmarks: the selector seam.

Every landmark estimator (:class:`~kernelsketch.maps.Nystroem`,
:class:`~kernelsketch.maps.KernelJL`, :class:`~kernelsketch.decomposition.SubsampleKPCA`,
the embedding of :class:`~kernelsketch.cluster.NystroemKernelKMeans` and
:class:`~kernelsketch.maps.LandmarkSpectralEmbedding`) asks a *selector* for its landmarks, in
memory and on every engine of the out-of-core driver alike.  A selector is any object with::

    select(data, n_landmarks, rng, *, kernel=None, replace=False) -> (landmarks, indices)

- ``data``: a :class:`LandmarkData`, the rows as the fitting path has them: ``data.n_rows``
  (all of them: a file, a dask array) and ``data.gather(indices)``, the rows at sorted
  ``indices`` (a gather: cheap in memory and for ``.npy`` files, one pass over a text file);
- ``rng``: the estimator's generator, positioned where the landmarks are drawn (after the
  seeds drawn before them, :meth:`~kernelsketch.maps.landmark_estimator.LandmarkMapMixin.draw_seeds`);
- ``kernel``: the resolved :class:`~kernelsketch.kernels.Kernel` (its bandwidth fixed), so a
  data-dependent selector (ridge leverage scores, pivoted Cholesky) can evaluate it;
- ``replace``: whether rows may repeat (``Nystroem(replace=True)``).

It returns ``n_landmarks`` landmark **points** (an array ``(n_landmarks, n_features)``) and
their row indices (int64, in the points' order), or ``None`` when the points are not rows
(k-means centres: :class:`KMeansLandmarks`).  Uniform sampling (the papers') is
:class:`UniformLandmarks`.  A new strategy is one class here (or in user code) and a subclass of
the estimator that sets ``landmark_selector``.

Selectors written for the first version of the seam, ``select(n_rows, n_landmarks, rng, *,
kernel, replace, rows) -> indices``, still work (with a ``DeprecationWarning``): their indices
are gathered as before.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..kernels.lloyd import kmeans_on_sample
from .landmarks import sample_landmarks, sample_row_indices

__all__ = ["KMeansLandmarks", "LandmarkData", "LandmarkSelector", "UniformLandmarks", "select_landmarks"]


class LandmarkData:
    """The rows a selector chooses from: their number and a gather by index.

    Parameters
    ----------
    n_rows : int
        Rows of the data (all of it).
    gather : callable
        ``gather(indices)`` returns the rows at ``indices`` (sorted, distinct int64), in that
        order, as an array or CSR matrix.

    Attributes
    ----------
    gathered : array or None
        The rows of the latest :meth:`gather` (what the selector looked at: k-means' sample),
        for an estimator that measures more on them (the spectral embedding's ``knn_mean``
        bandwidth).
    """

    def __init__(self, n_rows: int, gather: Callable[[NDArray[np.int64]], Any]) -> None:
        self.n_rows = int(n_rows)
        self._gather = gather
        self.gathered: Any = None

    def gather(self, indices) -> Any:
        """The rows at ``indices`` (sorted, distinct), in that order."""
        self.gathered = self._gather(np.asarray(indices, dtype=np.int64))
        return self.gathered

    def __repr__(self) -> str:
        return f"LandmarkData(n_rows={self.n_rows})"


@runtime_checkable
class LandmarkSelector(Protocol):
    """What a landmark estimator needs from a selector (see the module docstring)."""

    def select(
        self,
        data: LandmarkData,
        n_landmarks: int,
        rng: np.random.Generator,
        *,
        kernel: Any = None,
        replace: bool = False,
    ) -> tuple[Any, NDArray[np.int64] | None]: ...


class UniformLandmarks:
    """Uniform sampling of the rows, with or without replacement (the papers' choice).

    Uses neither the kernel nor the rows beyond those drawn: the indices are
    :func:`~kernelsketch.maps.sample_landmarks`'s, so every engine draws the same ones.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> L, idx = UniformLandmarks().select(LandmarkData(10, lambda i: X[i]), 3, np.random.default_rng(0))
    >>> idx
    array([5, 6, 9])
    >>> L.tolist()
    [[10.0, 11.0], [12.0, 13.0], [18.0, 19.0]]
    """

    def select(self, data, n_landmarks, rng, *, kernel=None, replace=False):
        idx = sample_landmarks(data.n_rows, n_landmarks, rng, replace=replace)
        return _rows_in_order(data, idx), idx

    def __repr__(self):
        return "UniformLandmarks()"


class KMeansLandmarks:
    """Landmarks that are k-means centres of a uniform sample of rows (Chen & Cai's LSC-K, U-SPEC's hybrid).

    A uniform sample of ``sample_factor x n_landmarks`` rows (all rows when there are fewer),
    then k-means++ and Lloyd on it (:func:`~kernelsketch.kernels.lloyd.kmeans_on_sample`, the
    seeding step of :class:`~kernelsketch.cluster.StreamingKMeans`; its assignments are the
    nearest-point search of :mod:`kernelsketch.kernels.neighbors`).  Every draw comes from the
    estimator's generator, and the sample is gathered by index, so the centres are the same in
    memory, on a file and on Dask for a seed.  The centres are not rows: the indices returned are
    None.  When the sample holds no more distinct rows than ``n_landmarks``, those rows are the
    landmarks (fewer of them: :class:`~kernelsketch.maps.LandmarkSpectralEmbedding` accepts that).

    Parameters
    ----------
    sample_factor : int, default=10
        Rows sampled per landmark (U-SPEC: about 10).
    search : searcher object, optional
        Every nearest-centre step of the k-means (:mod:`kernelsketch.kernels.search`); default: the package's own.

    References
    ----------
    X. Chen, D. Cai. Large scale spectral clustering with landmark-based representation. AAAI 2011.
    D. Huang, C.-D. Wang, J.-S. Wu, J.-H. Lai, C.-K. Kwoh. Ultra-scalable spectral clustering and
    ensemble clustering. IEEE TKDE 32(6), 2020.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.vstack([np.zeros((50, 2)), np.full((50, 2), 5.0)]) + np.random.default_rng(0).normal(size=(100, 2))
    >>> L, idx = KMeansLandmarks().select(LandmarkData(100, lambda i: X[i]), 2, np.random.default_rng(0))
    >>> idx is None, sorted(int(round(v)) for v in L.mean(axis=1))
    (True, [0, 5])
    """

    def __init__(self, sample_factor: int = 10, search=None) -> None:
        self.sample_factor = sample_factor
        self.search = search

    def sample_size(self, n_rows: int, n_landmarks: int) -> int:
        """Rows of the sample the centres are computed from."""
        return min(int(n_rows), self.sample_factor * int(n_landmarks))

    def select(self, data, n_landmarks, rng, *, kernel=None, replace=False):
        S = data.gather(sample_row_indices(data.n_rows, self.sample_size(data.n_rows, n_landmarks), rng))
        S = np.ascontiguousarray(S.toarray() if sp.issparse(S) else S, dtype=np.float64)
        distinct = np.unique(S, axis=0)
        if distinct.shape[0] <= n_landmarks:
            return distinct, None
        centres, _, _ = kmeans_on_sample(S, n_landmarks, rng, search=self.search)
        return np.ascontiguousarray(centres, dtype=np.float64), None

    def __repr__(self):
        return f"KMeansLandmarks(sample_factor={self.sample_factor})"


def _is_legacy(selector) -> bool:
    """Whether ``selector.select`` is the first version of the seam (``rows=``, returns indices)."""
    try:
        params = inspect.signature(selector.select).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return False
    return "rows" in params


def select_landmarks(selector, data: LandmarkData, n_landmarks: int, rng, *, kernel=None, replace=False, at_most=False):
    """``(landmarks, indices or None)`` from ``selector``, checked against the contract.

    Every fitting path calls this (in memory, on a file, on Dask), so a selector that breaks the
    contract is refused with the same ``ValueError`` everywhere.  ``at_most``: fewer landmarks
    than ``n_landmarks`` are accepted (k-means centres of data with fewer distinct rows).
    """
    name = type(selector).__name__
    if _is_legacy(selector):
        warnings.warn(
            f"{name}.select(n_rows, n_landmarks, rng, *, kernel, replace, rows) -> indices is the first version of "
            "the selector seam; write select(data, n_landmarks, rng, *, kernel=None, replace=False) -> (landmarks, "
            "indices) (kernelsketch.maps.landmark_selection)",
            DeprecationWarning,
            stacklevel=3,
        )
        idx = np.asarray(
            selector.select(data.n_rows, n_landmarks, rng, kernel=kernel, replace=replace, rows=data.gather)
        )
        _check_indices(name, idx, n_landmarks, data.n_rows, replace)
        return _rows_in_order(data, idx), idx
    got = selector.select(data, n_landmarks, rng, kernel=kernel, replace=replace)
    if not (isinstance(got, tuple) and len(got) == 2):
        raise ValueError(f"{name}.select must return (landmarks, indices or None), got {type(got).__name__}")
    L, idx = got
    if idx is not None:
        idx = np.asarray(idx)
        _check_indices(name, idx, n_landmarks, data.n_rows, replace)
    shape = getattr(L, "shape", None)
    if shape is None or len(shape) != 2 or not (1 <= shape[0] <= n_landmarks if at_most else shape[0] == n_landmarks):
        raise ValueError(
            f"{name}.select must return {n_landmarks} landmarks (an array with that many rows), got {shape}"
        )
    return L, idx


def _check_indices(name, idx, m, n_rows, replace):
    if idx.shape != (m,) or idx.dtype.kind not in "iu" or (m and (idx.min() < 0 or idx.max() >= n_rows)):
        raise ValueError(
            f"{name}.select must return {m} row indices in [0, {n_rows}), "
            f"got an array of shape {idx.shape} and dtype {idx.dtype}"
        )
    if not replace and np.unique(idx).size != m:
        raise ValueError(f"{name}.select returned repeated rows (replace=False)")


def rows_in_order(gather, idx):
    """``(rows at idx, distinct rows read)``: any order, repeats allowed, through one ``gather`` of the sorted
    distinct indices (the form a file, an engine and :class:`LandmarkData` answer)."""
    idx = np.asarray(idx)
    uniq, inverse = np.unique(idx, return_inverse=True)
    R = gather(uniq)
    return (R if np.array_equal(uniq, idx) else R[inverse.ravel()]), uniq.size


def _rows_in_order(data, idx):
    return rows_in_order(data.gather, idx)[0]
