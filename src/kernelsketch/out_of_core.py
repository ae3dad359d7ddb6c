"""The out-of-core driver: fit on a data source, map it block by block into a sink, cluster it.

Everything the ``kernelsketch`` command line does to a data file is a call
here, and so is its Dask path: the same driver runs on two *engines*,

* :class:`LocalEngine` -- a file (CSV/TSV, ``.npy``, Parquet, libsvm) or an
  in-memory array, read in row blocks in this process;
* :class:`kernelsketch.distributed.engine.DaskEngine` -- a dask array, its
  blocks computed on a Dask cluster (``client=`` or a dask array given as data).

Both answer the same few questions -- how many rows, these rows by index,
a value reduced over every block, every block mapped in order -- so an
estimator fitted, an embedding written or a clustering computed by either
is the same, to rounding, for the same seed.

Public entry points (re-exported as ``kernelsketch.fit_source`` etc.):

* :func:`fit_source` -- fit any kernelsketch estimator (or any scikit-learn
  estimator, on a sample) without loading the data;
* :func:`transform_source` -- map a source through a fitted estimator into
  a sink: an in-memory array, a ``.npy`` / CSV / TSV / Parquet file written
  atomically, or any callable;
* :func:`embed_file` -- both, in one call;
* :func:`cluster_file` -- the main job: kernel embedding + k-means
  (:class:`~kernelsketch.cluster.StreamingKMeans`) with the labels streamed to
  a sink, never holding the ``N x d`` embedding.

How each estimator is fitted without the whole data in memory:

========================  ==================================================================
landmark maps             ``Nystroem``, ``KernelJL``, ``SubsampleKPCA``: the landmark indices are
                          drawn from ``N`` with the estimator's own order of random draws
                          (:meth:`~kernelsketch.maps.landmark_estimator.LandmarkMapMixin.draw_seeds`)
                          and only those rows are read: the fit equals ``est.fit(X)`` on
                          the whole matrix.  ``n_landmarks="auto"`` resolves from ``N``.
streams                   ``RNCA``, ``RFKPCA``, ``StreamingKPCA``, ``FrequentDirections``: every
                          block is added with ``partial_fit`` (merged up a tree on Dask).
random features           ``RandomFourierFeatures``: no data beyond the bandwidth.
kernel k-means            ``NystroemKernelKMeans``: landmarks as above, k-means on a
                          ``fit_rows`` sample.
anything else             ``KernelPCA``, scikit-learn estimators, pipelines: ``fit`` on a
                          seeded uniform sample of ``fit_rows`` rows.
========================  ==================================================================

A heuristic bandwidth is resolved exactly as the in-memory ``fit`` resolves
it on the whole data (the same sampled pairs, gathered by index; for
``"mean_sq"`` one pass of sums), never on the first block.  Sources whose
row count is unknown until read (text files) are sampled in one pass
instead (:class:`~kernelsketch.io.RowReservoir`): a seeded uniform sample, the
whole file when it has at most ``fit_rows`` rows.
"""

from __future__ import annotations

import copy
import numbers
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._lazy import backend
from ._typing import DataLike, RandomStateLike
from .io import RowReservoir, open_matrix, open_writer
from .io.readers import guess_format as _guess_format
from .io.source import ArraySource, MatrixSource
from .kernels.bandwidth import bandwidth_from_moments, bandwidth_from_rows, bandwidth_plan
from .kernels.kernel_functions import KERNELS, Kernel, ShiftInvariantKernel
from .kernels.selection import make_kernel
from .utils.dispatch import is_dask_array
from .utils.missing_codes import MissingValueCodeWarning, describe_codes, missing_value_codes
from .utils.progress import progress
from .utils.validation import check_input, check_random_state, derive_seed
from .utils.warnings import warn as _warn

__all__ = [
    "ClusterResult",
    "EmbedResult",
    "EmptyClusterWarning",
    "FitResult",
    "LocalEngine",
    "TransformResult",
    "choose_landmarks",
    "cluster_file",
    "embed_file",
    "fit_source",
    "magnitude_spread",
    "open_engine",
    "standardize_source",
    "transform_source",
]

#: rows an estimator without a streaming or landmark fit is fitted on (all rows when fewer)
FIT_ROWS = 20_000


# -- engines ----------------------------------------------------------------------
class LocalEngine:
    """Row blocks of a file or an in-memory matrix, read in this process.

    Parameters
    ----------
    source : MatrixSource
        From :func:`kernelsketch.io.open_matrix` or :class:`kernelsketch.io.source.ArraySource`.
    block_rows : int, optional
        Rows per block (default: from the working-memory budget).
    """

    name = "local"

    def __init__(self, source: MatrixSource, block_rows=None):
        self.source = source
        self.block_rows = block_rows
        self.n_rows = source.n_rows
        self.n_features = source.n_features
        self.has_labels = source.has_labels
        self.sparse = bool(source.sparse)
        self.dtype = np.dtype(getattr(source, "dtype", np.float64))
        self.feature_names = source.feature_names
        self.stats = {"passes": 0}
        #: a function applied to every block read (``standardize``), or None
        self.preprocess = None
        #: the files this engine reads (an output may never be one of them)
        self.input_paths = [] if isinstance(source, ArraySource) else [source.path]

    def set_preprocess(self, fn):
        """Apply ``fn`` to every block this engine reads from now on (e.g. a fitted scaler's ``transform``)."""
        self.preprocess = fn

    def describe(self):
        rows = f"{self.n_rows} rows" if self.n_rows is not None else "rows not counted yet"
        return f"{self.source.path} ({self.source.format}, {self.n_features} features, {rows})"

    def _blocks(self, desc):
        self.stats["passes"] += 1
        bar = progress(total=self.n_rows, desc=desc, unit="rows")
        n = 0
        try:
            for X, y in self.source.iter_blocks(self.block_rows):
                yield (X if self.preprocess is None else self.preprocess(X)), y
                n += X.shape[0]
                bar.update(X.shape[0])
        finally:
            bar.close()
        if n == 0:
            raise ValueError(f"{self.source.path}: no data rows")
        self.n_rows = n

    def gather(self, indices):
        """Rows at sorted distinct ``indices``: ``(X, y)``."""
        X, y = self.source.take(np.asarray(indices, dtype=np.int64))
        return (X if self.preprocess is None else self.preprocess(X)), y

    def reservoir(self, m, seed, desc="sample"):
        """A seeded uniform sample of ``m`` rows in one pass: ``(X, y)``; counts the rows."""
        res = RowReservoir(m, seed=seed)
        for X, y in self._blocks(desc):
            res.add(X, y)
        X, y, _ = res.result()
        return X, y

    def reduce(self, fn, merge, state=None, desc="pass"):
        """``merge([fn(X_block, state) for every block])``."""
        return merge([fn(X, state) for X, _ in self._blocks(desc)])

    def stream_fit(self, template, desc="partial_fit"):
        """``partial_fit`` of (a copy of) ``template`` on every block in order."""
        est = copy.deepcopy(template)
        for X, _ in self._blocks(desc):
            est.partial_fit(_dense_if_needed(est, X))
        return est

    def foreach(self, fn, consume, state=None, desc="transform"):
        """``consume(fn(X_block, state), y_block)`` for every block, in row order."""
        for X, y in self._blocks(desc):
            consume(fn(X, state), y)


def open_engine(data, *, client=None, block_rows=None, **read_options):
    """The engine that reads ``data``.

    Parameters
    ----------
    data : path-like, MatrixSource, ndarray, CSR matrix, dask array or an engine
        A path is opened with :func:`kernelsketch.io.open_matrix` (``read_options``:
        ``format``, ``delimiter``, ``header``, ``columns``, ``label_column``,
        ``dtype``); a dask array, or any data with ``client=``, runs on Dask.
    client : distributed.Client, optional
        Run on this Dask cluster (a path is then opened with
        :func:`kernelsketch.distributed.read_shards`: ``.npy`` / Parquet files or
        directories of them).
    block_rows : int, optional
        Rows per block for local sources.
    """
    if hasattr(data, "foreach") and hasattr(data, "gather"):
        return data
    if is_dask_array(data) or client is not None:
        # the Dask engine sits above this driver; the package root registered it
        return backend("dask").Engine.open(data, client=client, **read_options)
    if isinstance(data, MatrixSource):
        source = data
    elif isinstance(data, (str, os.PathLike)):
        source = open_matrix(data, **read_options)
    else:
        if read_options.get("label_column") is not None or read_options.get("columns") is not None:
            raise TypeError("columns / label_column select columns of a file; for arrays, pass X[:, cols] and y")
        source = ArraySource(data, read_options.get("y"))
    return LocalEngine(source, block_rows=block_rows)


def _dense_if_needed(est, X):
    if not sp.issparse(X):
        return X
    try:
        sparse_ok = bool(est.__sklearn_tags__().input_tags.sparse)
    except AttributeError:
        sparse_ok = False
    return X if sparse_ok else X.toarray()


def _sum_tuples(parts):
    """Element-wise sum of equal-length tuples (the merge of additive statistics)."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return tuple(sum(vals[1:], vals[0]) for vals in zip(*parts, strict=True))


# -- bandwidths -------------------------------------------------------------------
def _needs_data(kernel, bandwidth) -> bool:
    if not isinstance(bandwidth, str) or isinstance(kernel, Kernel) or not isinstance(kernel, str):
        return False
    cls = KERNELS.get(kernel.lower())
    return cls is not None and issubclass(cls, ShiftInvariantKernel)


def _moments(X, _):
    if sp.issparse(X):
        sq = float(X.multiply(X).sum())
        s = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
    else:
        X64 = np.asarray(X, dtype=np.float64)
        sq = float(np.einsum("ij,ij->", X64, X64))
        s = X64.sum(axis=0)
    return (X.shape[0], sq, s)


def _kernel_override(est, kernel):
    """Temporary parameters that make ``est`` use the resolved ``kernel`` (its ``gamma`` then says nothing more)."""
    params = {"kernel": kernel}
    if "gamma" in est.get_params(deep=False):
        params["gamma"] = None
    return params


def resolve_kernel(kernel, bandwidth, kernel_params, engine, seed, gamma=None):
    """The Kernel an estimator's in-memory ``fit`` would build on all rows of ``engine``.

    A heuristic bandwidth is computed from the very pairs
    :func:`~kernelsketch.kernels.estimate_bandwidth` samples with ``seed``
    (gathered by index), or from one pass of sums for ``"mean_sq"``.
    """
    if gamma is not None or not _needs_data(kernel, bandwidth):
        return make_kernel(kernel, bandwidth, kernel_params, None, random_state=seed, gamma=gamma)
    if engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    plan = bandwidth_plan(bandwidth, engine.n_rows, random_state=seed)
    if plan[0] == "moments":
        n, sq, s = engine.reduce(_moments, _sum_tuples, desc="bandwidth (mean_sq)")
        h = bandwidth_from_moments(n, sq, s)
    elif plan[0] == "all":
        X, _ = engine.gather(np.arange(engine.n_rows))
        h = bandwidth_from_rows(bandwidth, X, None)
    else:
        _, i, j = plan
        union = np.unique(np.concatenate([i, j]))
        X, _ = engine.gather(union)
        h = bandwidth_from_rows(bandwidth, X, union, i, j)
    return make_kernel(kernel, h, kernel_params, None, random_state=seed)


# -- standardizing ----------------------------------------------------------------
def _units(absmax):
    """Each column's unit for the scaled moments: its largest ``|value|`` (1 for an all-zero column)."""
    return np.where(absmax > 0, absmax, 1.0)


def _column_moments(X, _):
    """(n, column means, scaled sums of squared deviations, column max |value|) of one block.

    The deviations are summed in units of the column's largest ``|value|`` ``c``:
    ``sum(((x - mean) / c)^2)``, so a column of values near 1e160 (whose squares overflow)
    gets a finite, exact-to-rounding scale.
    """
    X = np.asarray(X, dtype=np.float64)
    absmax = np.abs(X).max(axis=0, initial=0.0)
    c = _units(absmax)
    Xc = X / c
    mean_c = Xc.mean(axis=0)
    return X.shape[0], mean_c * c, ((Xc - mean_c) ** 2).sum(axis=0), absmax


def _merge_moments(parts):
    """Chan et al.'s pairwise update (exact to rounding, no cancellation of raw sums), in scaled units.

    Each part's scaled sum of squares is in units of its own column maxima; the merged one
    is in units of the merged maxima (never smaller, so rescaling cannot overflow).
    """
    n, mean, m2, absmax = 0, None, None, None
    for nb, mb, m2b, ab in parts:
        if nb == 0:
            continue
        if mean is None:
            n, mean, m2, absmax = nb, mb.copy(), m2b.copy(), ab.copy()
            continue
        new_max = np.maximum(absmax, ab)
        c = _units(new_max)
        ca, cb = _units(absmax) / c, _units(ab) / c
        delta = mb / c - mean / c
        total = n + nb
        mean = mean + (mb - mean) * (nb / total)
        m2 = m2 * ca**2 + m2b * cb**2 + delta**2 * (n * nb / total)
        absmax = new_max
        n = total
    return n, mean, m2, absmax


#: ``standardize="auto"`` z-scores when the columns' magnitudes spread over more than this factor
UNIT_SPREAD = 10.0


def magnitude_spread(column_absmax) -> float:
    """How far the columns' magnitudes differ: 90th over 10th percentile of their largest ``|value|``.

    About 1 when every column is in one unit (pixels, counts, already scaled data), large
    when the columns are measured in different units (millimetres beside thousands of
    dollars).  All-zero columns are left out.  ``standardize="auto"`` z-scores the data
    when this exceeds :data:`UNIT_SPREAD`.

    Examples
    --------
    >>> round(magnitude_spread([255, 255, 250, 0]), 3), magnitude_spread([0.1, 3.0, 1500.0, 40.0]) > UNIT_SPREAD
    (1.016, True)
    """
    a = np.asarray(column_absmax, dtype=np.float64)
    a = a[a > 0]
    if a.size < 2:
        return 1.0
    return float(np.percentile(a, 90) / np.percentile(a, 10))


def standardize_source(
    data: DataLike, *, when: bool | str = True, client: Any = None, **read_options: Any
) -> tuple[Any, Any]:
    """Z-score every column of ``data`` from one pass; the engine then reads standardized rows.

    Parameters
    ----------
    data : path, array, MatrixSource, dask array or an engine (as :func:`fit_source`)
    when : True or "auto", default=True
        ``"auto"``: only when the columns are in different units
        (:func:`magnitude_spread` above :data:`UNIT_SPREAD`); otherwise the engine is
        returned unchanged with ``scaler=None``.

    Returns
    -------
    engine, scaler : the engine (pass it to :func:`fit_source`, :func:`transform_source`,
        :func:`cluster_file`; every block it reads is standardized) and the fitted
        :class:`sklearn.preprocessing.StandardScaler` (put it before the estimator
        in a Pipeline to apply the same scaling to new data; ``kernelsketch fit
        --standardize`` saves exactly that Pipeline).

    Means and variances come from one pass of per-block moments merged exactly
    (Chan et al.), equal to ``StandardScaler().fit(X)`` to rounding; a constant
    column is centred and left unscaled, as scikit-learn does.

    Examples
    --------
    >>> import numpy as np, kernelsketch as ks
    >>> X = np.random.default_rng(0).normal(5.0, 3.0, size=(1000, 4))
    >>> engine, scaler = ks.standardize_source(X)
    >>> res = ks.fit_source(ks.KernelJL(n_components=5, random_state=0), engine)
    >>> bool(np.allclose(scaler.mean_, X.mean(axis=0)))
    True
    """
    from sklearn.preprocessing import StandardScaler

    engine = open_engine(data, client=client, **read_options)
    if getattr(engine, "sparse", False):
        raise TypeError(
            "standardizing centres the columns, which would make sparse data dense; "
            "scale sparse data without centring (e.g. MaxAbsScaler) before fitting"
        )
    if when not in (True, "auto"):
        raise ValueError(f"when must be True or 'auto', got {when!r}")
    n, mean, m2, absmax = engine.reduce(_column_moments, _merge_moments, desc="standardize (one pass)")
    if not n:
        raise ValueError("the data has no rows")
    if when == "auto" and magnitude_spread(absmax) <= UNIT_SPREAD:
        return engine, None
    scale = _units(absmax) * np.sqrt(m2 / n)  # the standard deviation, computed without squaring the values
    with np.errstate(over="ignore"):
        var = scale**2  # (inf for a column whose variance exceeds float64's range; scale_ is what is used)
    scaler = StandardScaler()
    scaler.mean_, scaler.var_ = mean, var
    scale[scale < 10 * np.finfo(np.float64).eps * np.maximum(np.abs(mean), 1.0)] = 1.0  # constant columns
    scaler.scale_ = scale
    scaler.n_samples_seen_ = np.int64(n)
    scaler.n_features_in_ = int(mean.shape[0])
    names = _file_feature_names(engine)
    if names is not None:  # a saved Pipeline(scaler, estimator) knows the file's columns
        scaler.feature_names_in_ = names
    dtype = engine.dtype

    def apply(X, mean=mean, scale=scale, dtype=dtype):
        return ((np.asarray(X, dtype=np.float64) - mean) / scale).astype(dtype, copy=False)

    engine.set_preprocess(apply)
    return engine, scaler


# -- fitting ----------------------------------------------------------------------
@dataclass
class FitResult:
    """What :func:`fit_source` did.

    Attributes
    ----------
    estimator : the fitted estimator (the one passed in)
    strategy : {"landmarks", "stream", "random_features", "kernel_kmeans", "sample"}
    n_rows : int
        Rows in the source.
    fit_rows : int
        Rows the estimator's fit read (landmarks, sample, or all rows for streams).
    n_landmarks : int or None
        The resolved landmark count of a landmark estimator.
    bandwidth : float or None
        The resolved bandwidth of a shift-invariant kernel.
    seconds : float
    landmark_choice : LandmarkChoice or None
        With ``landmark_target``: the count :func:`choose_landmarks` chose and why (``.reason``).
    """

    estimator: object
    strategy: str
    n_rows: int
    fit_rows: int
    n_landmarks: int | None = None
    bandwidth: float | None = None
    seconds: float = 0.0
    landmark_choice: Any = None

    def to_dict(self):
        out = {
            "estimator": type(self.estimator).__name__,
            "strategy": self.strategy,
            "n_rows": self.n_rows,
            "fit_rows": self.fit_rows,
            "n_landmarks": self.n_landmarks,
            "bandwidth": self.bandwidth,
            "fit_seconds": round(self.seconds, 4),
        }
        if self.landmark_choice is not None:
            out["landmark_choice"] = self.landmark_choice.to_dict()
        return out


#: how :func:`fit_source` fits an estimator, declared by its class as ``_fit_strategy``:
#:
#: - ``"landmarks"``: the landmark rows gathered by index, then the estimator's own
#:   ``_draw_landmarks`` / ``_fit_from_landmarks`` seams (equal to the in-memory fit);
#: - ``"landmarks_then_sample"``: a landmark embedding (as above), then a fit on a uniform
#:   sample of embedded rows (NystroemKernelKMeans' k-means);
#: - ``"sketch"``: ``partial_fit`` per block and ``merge`` of the sketches (a mergeable summary);
#: - ``"random_features"``: nothing but the bandwidth depends on the data;
#: - ``"sample"`` (any other estimator): ``fit`` on a uniform sample of ``fit_rows`` rows.
#: - ``"landmarks_then_pass"``: landmark rows by index, then one pass summing block statistics
#:   (``_plan`` / ``_set_landmarks`` / ``_statistics`` / ``_merge`` / ``_finish``: the landmark
#:   spectral embedding);
#: - ``"embedding_then_sample"``: such an embedding, then k-means on a uniform sample of embedded
#:   rows (:class:`~kernelsketch.cluster.LandmarkSpectralClustering`).
FIT_STRATEGIES = (
    "landmarks",
    "landmarks_then_sample",
    "landmarks_then_pass",
    "embedding_then_sample",
    "sketch",
    "random_features",
    "sample",
)


def fit_strategy(estimator) -> str:
    """The strategy ``estimator``'s class declares (``_fit_strategy``), ``"sample"`` when none.

    Examples
    --------
    >>> import kernelsketch as ks
    >>> fit_strategy(ks.KernelJL()), fit_strategy(ks.RNCA()), fit_strategy(ks.KernelPCA())
    ('landmarks', 'sketch', 'sample')
    """
    strategy = getattr(type(estimator), "_fit_strategy", "sample")
    if strategy not in FIT_STRATEGIES:
        raise ValueError(f"{type(estimator).__name__}._fit_strategy = {strategy!r}; expected one of {FIT_STRATEGIES}")
    return strategy


def _fresh(est, **params):
    """An unfitted copy of ``est`` with ``params`` changed (not sklearn.clone: Kernel objects take no deep=)."""
    return type(est)(**{**est.get_params(deep=False), **params})


def _fit_with_params(est, X, temporary):
    """``est.fit(X)`` with ``temporary`` parameters, restored afterwards (also on error)."""
    original = {k: v for k, v in est.get_params(deep=False).items() if k in temporary}
    est.set_params(**temporary)
    try:
        est.fit(X)
    finally:
        est.set_params(**original)
    return est


def _adopt(est, fitted, restore):
    """Make ``est`` the fitted estimator ``fitted`` with ``est``'s own parameters."""
    fitted.set_params(**restore)
    vars(est).clear()
    vars(est).update(vars(fitted))
    return est


def _bandwidth_of(est):
    kernel = getattr(est, "kernel_", None)
    h = getattr(kernel, "bandwidth", None)
    return float(h) if isinstance(h, numbers.Real) else None


def _take(engine, idx):
    """The rows at ``idx`` (any order, repeats allowed) in that order: one gather of the distinct rows."""
    uniq, inverse = np.unique(np.asarray(idx), return_inverse=True)
    rows, _ = engine.gather(uniq)
    return rows[inverse.ravel()], uniq.size


def _fit_landmarks(est, engine, fit_rows, also=None):
    """Fit a landmark estimator through its two seams, the landmark rows gathered by index.

    The same steps as its in-memory ``fit`` (:mod:`kernelsketch.maps.landmark_estimator`):
    the order of draws from ``random_state`` (:meth:`draw_seeds`), the kernel resolved on
    all rows, ``_draw_landmarks`` with the estimator's own selector, ``_fit_from_landmarks``.
    ``also``: more row indices to bring back in the same gather (returned second).
    """
    from .maps.landmarks import given_landmarks, resolve_n_landmarks

    est._validate_params()
    est._check_fit_params()
    rng = check_random_state(est.random_state)
    kernel_seed, seeds = est.draw_seeds(rng)
    replace = bool(getattr(est, "replace", False))
    if engine.n_rows is None:
        # one pass: a sample of the rows (and their count); the estimator is fitted on the sample
        m_cap = fit_rows if est.n_landmarks == "auto" or est.landmarks is not None else max(fit_rows, est.n_landmarks)
        Xs, _ = engine.reservoir(m_cap, [derive_seed(kernel_seed), 0x6C6D], desc="sample rows")
        N = engine.n_rows
        m = resolve_n_landmarks(est.n_landmarks, N, replace=replace) if est.landmarks is None else None
        temporary = {"n_landmarks": min(m, Xs.shape[0]) if m is not None and not replace else m}
        if temporary["n_landmarks"] is None:
            temporary = {}
        _fit_with_params(est, Xs, temporary)
        if hasattr(est, "n_samples_seen_"):
            est.n_samples_seen_ = N  # the sample stands for all N rows
        res = FitResult(est, "landmarks", N, Xs.shape[0], int(est.landmarks_.shape[0]), _bandwidth_of(est))
        return res, (None if also is None else _take(engine, also)[0])
    N = engine.n_rows
    kernel = resolve_kernel(est.kernel, est.bandwidth, est.kernel_params, engine, kernel_seed, gamma=est.gamma)
    gathered = {"n_read": 0, "also": None}

    def rows(idx):
        idx = np.asarray(idx)
        want = idx if also is None else np.concatenate([idx, np.asarray(also)])
        R, n_read = _take(engine, want)
        gathered["n_read"] += n_read
        if also is not None:
            gathered["also"] = R[idx.size :]
        return R[: idx.size]

    if est.landmarks is None:
        L, idx = est._draw_landmarks(N, rng, kernel, rows)
        L = check_input(L, accept_sparse=("csr",), estimator=est, reset=True)  # n_features_in_ from the rows
    else:
        given = check_input(est.landmarks, accept_sparse=("csr",), estimator=est, reset=True)
        L, idx = given_landmarks(est.landmarks, given), None
    est.kernel_ = kernel
    est._fit_from_landmarks(L, idx, seeds, N)
    if also is not None and gathered["also"] is None:
        gathered["also"], n_read = _take(engine, also)
        gathered["n_read"] += n_read
    res = FitResult(est, "landmarks", N, gathered["n_read"], int(est.landmarks_.shape[0]), _bandwidth_of(est))
    return res, gathered["also"]


def _fit_kernel_kmeans(est, engine, fit_rows):
    from .maps.landmarks import sample_row_indices

    est._validate_params()
    if engine.n_rows is None:
        from .maps.landmarks import resolve_n_landmarks

        # the same draws as fit: (embedding seed, k-means seed), the sample from the k-means seed
        rng = check_random_state(est.random_state)
        _, seed_km = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        Xs, _ = engine.reservoir(fit_rows, [seed_km, 0x6B6D], desc="sample rows")
        _fit_with_params(
            est,
            Xs,
            {
                "n_landmarks": resolve_n_landmarks(est.n_landmarks, engine.n_rows)
                if est.landmarks is None
                else est.n_landmarks
            },
        )
        del est.labels_  # the sample's labels would mislead: predict() labels any rows
        est.nystroem_.n_samples_seen_ = engine.n_rows
        return FitResult(
            est,
            "kernel_kmeans",
            engine.n_rows,
            Xs.shape[0],
            est.nystroem_.landmarks_.shape[0],
            _bandwidth_of(est.nystroem_),
        )
    N = engine.n_rows
    # fit's own steps: the embedding planned from all N rows and fitted through the landmark
    # seams, then k-means on a sample of rows -- gathered with the landmarks, in one pass
    nystroem, seed_km = est._plan_embedding(N)
    fit_idx = sample_row_indices(N, fit_rows, [seed_km, 0x6B6D])
    with est._embedding_warnings():
        res, fit_X = _fit_landmarks(nystroem, engine, fit_rows, also=fit_idx)
    est.nystroem_ = nystroem
    est.n_features_in_ = nystroem.n_features_in_
    est._fit_clusters(nystroem.transform(fit_X), seed_km)
    del est.labels_  # the sample's labels would mislead: predict() labels any rows
    return FitResult(est, "kernel_kmeans", N, res.fit_rows, nystroem.landmarks_.shape[0], _bandwidth_of(nystroem))


def _pass_statistics(X, est):
    return est._statistics(X)


def _fit_landmarks_then_pass(est, engine):
    """Landmark rows by index, the bandwidth as the in-memory fit resolves it, one pass of statistics."""
    if engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    N = engine.n_rows
    idx, seed = est._plan(N)
    h = None
    if est.bandwidth != "local":
        h = resolve_kernel("gaussian", est.bandwidth, None, engine, seed).bandwidth
    L, n_read = _take(engine, idx)
    check_input(L, accept_sparse=("csr",), estimator=est, reset=True)  # n_features_in_ from the rows
    est._set_landmarks(L, idx, h)
    stats = engine.reduce(_pass_statistics, est._merge, state=est, desc=f"{type(est).__name__} statistics")
    est._finish(stats)
    return FitResult(est, "landmarks_then_pass", N, n_read, int(L.shape[0]), est.bandwidth_)


def _fit_embedding_then_sample(est, engine):
    """The clusterer's embedding as above, then its k-means on a sample of embedded rows (no labels_)."""
    est._validate_params()
    if engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    embedding, km, rng = est._plan_embedding(engine.n_rows)
    res = _fit_landmarks_then_pass(embedding, engine)
    est.embedding_ = embedding
    rows, _ = engine.gather(km.sample_indices(engine.n_rows, rng))
    est._fit_clusters(embedding.transform(rows), km, rng)
    vars(est).pop("labels_", None)  # labels of a sample would mislead: predict() labels any rows
    return FitResult(est, "embedding_then_sample", res.n_rows, res.fit_rows, res.n_landmarks, res.bandwidth)


def _fit_stream(est, engine):
    if "kernel" not in est.get_params(deep=False):  # a sketch of the rows themselves (FrequentDirections)
        template, restore = _fresh(est), {}
    else:
        # One integer seed and one kernel resolved on all rows: the random features are
        # drawn once and (on Dask) every chunk's sketch merges with every other.
        seed = derive_seed(est.random_state)
        kernel = resolve_kernel(est.kernel, est.bandwidth, None, engine, seed, gamma=est.gamma)
        template = _fresh(est, **_kernel_override(est, kernel), random_state=seed)
        restore = {"kernel": est.kernel, "gamma": est.gamma, "random_state": est.random_state}
    fitted = engine.stream_fit(template, desc=f"partial_fit {type(est).__name__}")
    if fitted is None:
        raise ValueError("the data has no rows")
    if hasattr(fitted, "_finish_fit"):
        fitted._finish_fit()
    _adopt(est, fitted, restore)
    return FitResult(est, "stream", engine.n_rows, engine.n_rows, None, _bandwidth_of(est))


def _fit_random_features(est, engine):
    seed = derive_seed(est.random_state)
    kernel = resolve_kernel(est.kernel, est.bandwidth, None, engine, seed, gamma=est.gamma)
    if engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    X, _ = engine.gather(np.arange(min(engine.n_rows, 2)))
    _fit_with_params(est, X, {**_kernel_override(est, kernel), "random_state": seed})
    return FitResult(est, "random_features", engine.n_rows, 0, None, _bandwidth_of(est))


def _fit_sample(est, engine, fit_rows, seed):
    from .maps.landmarks import sample_row_indices

    if engine.n_rows is None:
        X, _ = engine.reservoir(fit_rows, seed, desc="sample rows")
    else:
        X, _ = engine.gather(sample_row_indices(engine.n_rows, fit_rows, seed))
    est.fit(_dense_if_needed(est, X))
    return FitResult(est, "sample", engine.n_rows, X.shape[0], None, _bandwidth_of(est))


#: strategies whose estimators approximate their kernel's Gram from uniform landmarks (Nystroem's error applies)
_NYSTROEM_STRATEGIES = ("landmarks", "landmarks_then_sample")


def _landmark_kernel(est, engine):
    """The kernel ``est``'s fit on ``engine`` would use, its bandwidth heuristic resolved from the same pairs."""
    if hasattr(est, "_plan_embedding"):  # NystroemKernelKMeans: its Nystroem embedding's kernel
        est = est._plan_embedding(engine.n_rows)[0]
    kernel_seed, _ = est.draw_seeds(check_random_state(est.random_state))
    return resolve_kernel(est.kernel, est.bandwidth, est.kernel_params, engine, kernel_seed, gamma=est.gamma)


def choose_landmarks(
    estimator: Any,
    data: DataLike,
    *,
    target: float = 0.05,
    max_landmarks: int | None = None,
    memory_mib: float = 512.0,
    n_eval: int = 1000,
    random_state: RandomStateLike = 0,
    client: Any = None,
    block_rows: int | None = None,
    **read_options: Any,
):
    """The landmark count ``estimator`` needs on ``data`` for a Gram error of at most ``target``.

    Reads a uniform sample of ``n_eval + max_landmarks`` rows (by index: no pass for
    ``.npy`` and Parquet), resolves the estimator's kernel and bandwidth as its fit
    would, and runs :func:`kernelsketch.maps.landmark_count.choose_n_landmarks` on it:
    the fewest uniform landmarks (doubling from 50) whose Nystroem approximation of the
    held-out rows' Gram has a relative Frobenius error of at most ``target``, within
    ``max_landmarks`` (default: the ``"auto"`` cap, 4,096) and ``memory_mib`` for the fit.

    ``fit_source(..., landmark_target=0.05)`` (and ``embed_file``, ``cluster_file``, the
    CLI's ``--landmark-target``) calls this and fits with the chosen count.

    Returns
    -------
    LandmarkChoice
        ``.n_landmarks``, the error it reaches, the grid measured, and ``.reason``.

    Examples
    --------
    >>> import kernelsketch as ks
    >>> X, _ = ks.load_dataset("banknote")
    >>> choice = ks.choose_landmarks(ks.Nystroem(n_components=20), X, target=0.01)
    >>> choice.reached, choice.n_landmarks <= 200
    (True, True)
    """
    from .maps.landmark_count import choose_n_landmarks
    from .maps.landmarks import AUTO_MAX_LANDMARKS, sample_row_indices

    if fit_strategy(estimator) not in _NYSTROEM_STRATEGIES or "n_landmarks" not in estimator.get_params(deep=False):
        raise TypeError(
            f"{type(estimator).__name__} does not approximate its kernel from landmarks; a landmark target "
            "applies to KernelJL, Nystroem, SubsampleKPCA and NystroemKernelKMeans"
        )
    if getattr(estimator, "landmarks", None) is not None:
        raise ValueError("the estimator's landmarks are given (landmarks=...): there is no count to choose")
    engine = open_engine(data, client=client, block_rows=block_rows, **read_options)
    if engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    cap = AUTO_MAX_LANDMARKS if max_landmarks is None else max_landmarks
    idx = sample_row_indices(engine.n_rows, n_eval + cap, [derive_seed(random_state), 0x4C43])
    X, _ = engine.gather(idx)
    X = X.toarray() if sp.issparse(X) else X
    kernel = _landmark_kernel(estimator, engine)
    return choose_n_landmarks(
        X,
        kernel,
        target=target,
        max_landmarks=cap,
        memory_mib=memory_mib,
        n_eval=n_eval,
        random_state=derive_seed(random_state),
    )


def fit_source(
    estimator: Any,
    data: DataLike,
    *,
    fit_rows: int = FIT_ROWS,
    random_state: RandomStateLike = 0,
    client: Any = None,
    block_rows: int | None = None,
    landmark_target: float | None = None,
    **read_options: Any,
) -> FitResult:
    """Fit ``estimator`` on a data source without loading it; returns a :class:`FitResult`.

    Parameters
    ----------
    estimator : kernelsketch or scikit-learn estimator
        Fitted in place (see the module docstring for how each kind is fitted).
    data : path, ndarray, CSR, MatrixSource, dask array or engine
        See :func:`open_engine`; ``read_options`` go to the file reader.
    fit_rows : int, default=20000
        Rows of the uniform sample that estimators without a streaming or
        landmark fit (``KernelPCA``, scikit-learn estimators, pipelines) and
        ``NystroemKernelKMeans``' k-means are fitted on.
    random_state : int, default=0
        Seeds that sample (estimators keep their own ``random_state`` for the rest).
    client : distributed.Client, optional
        Fit on this Dask cluster.
    landmark_target : float in (0, 1), optional
        Choose the landmark count first (:func:`choose_landmarks`): the fewest whose
        Nystroem Gram error on held-out rows is at most this; the estimator's
        ``n_landmarks`` is set to it.  For landmark estimators only.

    Returns
    -------
    FitResult
        ``.estimator`` is the fitted estimator; ``.n_landmarks`` and
        ``.bandwidth`` are what ``"auto"`` and a heuristic resolved to;
        ``.landmark_choice`` what ``landmark_target`` chose and why.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> import kernelsketch as ks
    >>> X = np.random.default_rng(0).normal(size=(3000, 4))
    >>> path = os.path.join(tempfile.mkdtemp(), "X.npy"); np.save(path, X)
    >>> res = ks.fit_source(ks.KernelJL(n_components=8, random_state=0), path)
    >>> res.n_rows, res.n_landmarks
    (3000, 200)
    >>> bool(np.allclose(res.estimator.transform(X), ks.KernelJL(n_components=8, random_state=0).fit(X).transform(X)))
    True
    """
    if isinstance(fit_rows, bool) or not isinstance(fit_rows, numbers.Integral) or fit_rows < 2:
        raise ValueError(f"fit_rows must be an int >= 2, got {fit_rows!r}")
    engine = open_engine(data, client=client, block_rows=block_rows, **read_options)
    t0 = time.perf_counter()
    strategy = fit_strategy(estimator)
    choice = None
    if landmark_target is not None:
        choice = choose_landmarks(estimator, engine, target=landmark_target, random_state=random_state)
        estimator.set_params(n_landmarks=choice.n_landmarks)
    if strategy == "landmarks":
        res, _ = _fit_landmarks(estimator, engine, fit_rows)
    elif strategy == "landmarks_then_sample":
        res = _fit_kernel_kmeans(estimator, engine, fit_rows)
    elif strategy == "landmarks_then_pass":
        res = _fit_landmarks_then_pass(estimator, engine)
    elif strategy == "embedding_then_sample":
        res = _fit_embedding_then_sample(estimator, engine)
    elif strategy == "sketch":
        res = _fit_stream(estimator, engine)
    elif strategy == "random_features":
        res = _fit_random_features(estimator, engine)
    else:
        res = _fit_sample(estimator, engine, fit_rows, derive_seed(random_state))
    record_feature_names(estimator, engine)
    res.seconds = time.perf_counter() - t0
    res.landmark_choice = choice
    return res


# -- sinks ------------------------------------------------------------------------
class _ArraySink:
    def __init__(self):
        self.parts = []

    def write(self, Z):
        self.parts.append(np.asarray(Z))

    def close(self):
        return np.concatenate(self.parts) if self.parts else None

    def abort(self):
        self.parts = []


class _FileSink:
    """Opens an atomic :class:`~kernelsketch.io.BlockWriter` once the first block gives width and dtype."""

    def __init__(self, path, *, force, protect, column_names=None, column_prefix="c"):
        from .io import check_output_path

        self.path = check_output_path(path, force=force, protect=protect)  # fail before any work
        self.force, self.protect = force, protect
        self.column_names, self.prefix = column_names, column_prefix
        self.writer = None

    def write(self, Z):
        Z = np.asarray(Z)
        if self.writer is None:
            width = 1 if Z.ndim == 1 else Z.shape[1]
            names = self.column_names or [f"{self.prefix}{j}" for j in range(width)]
            self.writer = open_writer(
                self.path, width, Z.dtype, force=self.force, protect=self.protect, column_names=names
            )
        self.writer.write(Z)

    def close(self):
        if self.writer is None:
            raise ValueError("nothing to write: the data has no rows")
        return self.writer.close()

    def abort(self):
        if self.writer is not None:
            self.writer.abort()


class _CallableSink:
    def __init__(self, fn):
        self.fn = fn

    def write(self, Z):
        self.fn(Z)

    def close(self):
        return None

    def abort(self):
        pass


def _make_sink(output, *, force, protect, column_names=None, column_prefix="c"):
    if output is None:
        return _ArraySink()
    if isinstance(output, (str, os.PathLike)):
        return _FileSink(output, force=force, protect=protect, column_names=column_names, column_prefix=column_prefix)
    if callable(output):
        return _CallableSink(output)
    if all(hasattr(output, a) for a in ("write", "close", "abort")):
        return output
    raise TypeError(
        f"output must be None, a path, a callable or a sink with write/close/abort; got {type(output).__name__}"
    )


def _inputs_of(data):
    """The files (or shard directories) ``data`` reads: outputs may never be one of them or inside them."""
    if isinstance(data, (str, os.PathLike)):
        return [data]
    return list(getattr(data, "input_paths", []))


@dataclass
class TransformResult:
    """What :func:`transform_source` wrote.

    Attributes
    ----------
    n_rows, n_columns : int
    output : Path or None
        The file written (None for an in-memory or callable sink).
    embedding : ndarray or None
        The whole output, for ``output=None``.
    seconds : float
    sample : tuple or None
        ``(Z_sample, y_sample)``: a seeded uniform sample of at most
        ``sample_rows`` output rows (first two columns) and their labels, for plots.
    reordered : list of str or None
        The input's column order when it differed from the model's and the
        columns were matched by name (see :func:`align_columns`).
    """

    n_rows: int
    n_columns: int
    output: Path | None = None
    embedding: np.ndarray | None = None
    seconds: float = 0.0
    sample: tuple | None = None
    reordered: list | None = None

    def to_dict(self):
        return {
            "output": None if self.output is None else str(self.output),
            "shape": [self.n_rows, self.n_columns],
            "transform_seconds": round(self.seconds, 4),
        }


#: scikit-learn's warning when an estimator fitted with feature names gets a NumPy block: the
#: driver aligns a file's columns by name first (:func:`align_columns`), then hands it NumPy blocks
_NAMES_WARNING = "X does not have valid feature names"


def _transform_block(est, X):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_NAMES_WARNING, category=UserWarning)
        return np.asarray(est.transform(_dense_if_needed(est, X)))


def model_read_options(estimator, data, read_options):
    """``read_options`` completed by what a fitted model knows of its input: a libsvm file (whose
    width is only its largest index) is read as wide as the model's ``n_features_in_``."""
    options = dict(read_options)
    if (
        isinstance(data, (str, os.PathLike))
        and not Path(os.fspath(data)).expanduser().is_dir()
        and options.get("n_features") is None
        and getattr(estimator, "n_features_in_", None) is not None
        and (options.get("format") or _guess_format(data)) == "libsvm"
    ):
        options["n_features"] = int(estimator.n_features_in_)
    return options


def _apply_transform(X, est):
    return _transform_block(est, X)


def _file_feature_names(engine):
    """The engine's column names as ``feature_names_in_`` would hold them, or None (no header, unusable names)."""
    names = getattr(engine, "feature_names", None)
    if names is None:
        return None
    names = [str(n) for n in names]
    if any(n == "" for n in names) or len(set(names)) != len(names):
        return None
    return np.asarray(names, dtype=object)


def record_feature_names(estimator, engine):
    """Give ``estimator`` the column names of the file it was fitted on (``feature_names_in_``).

    A file with a header fits a model that knows its columns, as a DataFrame does; a
    :class:`~sklearn.pipeline.Pipeline` keeps them on its first step. No header: nothing is set.
    """
    names = _file_feature_names(engine)
    if names is None or names.shape[0] != getattr(engine, "n_features", names.shape[0]):
        return
    target = estimator
    steps = getattr(estimator, "steps", None)
    if steps:
        target = steps[0][1]
    if target is None or isinstance(target, str) or not hasattr(target, "n_features_in_"):
        return
    try:
        target.feature_names_in_ = names
    except AttributeError:  # a read-only property (a meta-estimator): its parts keep their own
        return


def align_columns(estimator, engine):
    """Read a file's columns in the order the model was fitted on, matching them by name.

    Returns None when nothing was done (the names already match, the file has no
    header, or the model knows no names), else the file's order that was rearranged.

    Raises
    ------
    ValueError
        The file's column names are not the model's (names missing or unknown).
    """
    fitted = getattr(estimator, "feature_names_in_", None)
    names = _file_feature_names(engine)
    if fitted is None or names is None:
        return None
    fitted, names = [str(n) for n in fitted], list(names)
    if names == fitted:
        return None
    missing = [n for n in fitted if n not in names]
    unknown = [n for n in names if n not in fitted]
    if missing or unknown:
        raise ValueError(
            f"the input's columns are not the ones the model was fitted on: missing {missing}, "
            f"not in the model {unknown} (select columns with --columns / columns=)"
        )
    order = np.asarray([names.index(n) for n in fitted])
    # a local engine's set_preprocess replaces its function (compose with it); Dask's maps over its chunks
    before = getattr(engine, "preprocess", None)

    def reorder(X, before=before, order=order):
        return (X if before is None else before(X))[:, order]

    engine.set_preprocess(reorder)
    return names


def transform_source(
    estimator: Any,
    data: DataLike,
    output: Any = None,
    *,
    force: bool = False,
    client: Any = None,
    block_rows: int | None = None,
    column_names: Any = None,
    sample_rows: int = 0,
    random_state: RandomStateLike = 0,
    **read_options: Any,
) -> TransformResult:
    """Map every row of ``data`` through a fitted ``estimator`` into ``output``, block by block.

    Parameters
    ----------
    estimator : fitted transformer
    data : path, ndarray, CSR, MatrixSource, dask array or engine (see :func:`open_engine`)
    output : None, path, callable or sink
        None: the result as one array (``.embedding``).  A path (``.npy``,
        ``.csv``, ``.tsv``, ``.parquet``): written to a temporary file that
        replaces it only when complete (never an input; an existing file only
        with ``force=True``).  A callable: called with each output block, in row order.
    force : bool, default=False
        Overwrite an existing output file.
    client : distributed.Client, optional
        Run on Dask.
    column_names : list of str, optional
        Output columns (default ``c0, c1, ...``).
    sample_rows : int, default=0
        Keep a uniform sample of this many output rows (first two columns) and labels, e.g. for a plot.

    Returns
    -------
    TransformResult

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> import kernelsketch as ks
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> est = ks.Nystroem(n_landmarks=50, random_state=0).fit(X)
    >>> out = os.path.join(tempfile.mkdtemp(), "Z.npy")
    >>> res = ks.transform_source(est, X, out)
    >>> bool(np.allclose(np.load(out), est.transform(X))), res.n_rows
    (True, 1000)
    """
    engine = open_engine(
        data, client=client, block_rows=block_rows, **model_read_options(estimator, data, read_options)
    )
    reordered = align_columns(estimator, engine)
    sink = _make_sink(output, force=force, protect=_inputs_of(data), column_names=column_names)
    sample = RowReservoir(sample_rows, seed=derive_seed(random_state)) if sample_rows else None
    counts = {"rows": 0, "cols": 0}

    def consume(Z, y):
        if np.asarray(Z).dtype.kind in "fc" and not np.all(np.isfinite(Z)):
            bad = np.flatnonzero(~np.all(np.isfinite(np.asarray(Z).reshape(Z.shape[0], -1)), axis=1))
            raise ValueError(
                f"the embedding of row {counts['rows'] + int(bad[0])} (and {bad.size - 1} more in its block) is "
                "NaN or infinite: the model's fitted state or the input is not usable; nothing was written"
            )
        sink.write(Z)
        counts["rows"] += Z.shape[0]
        counts["cols"] = 1 if Z.ndim == 1 else Z.shape[1]
        if sample is not None:
            sample.add(Z[:, :2] if Z.ndim == 2 else Z[:, None], y)

    t0 = time.perf_counter()
    try:
        engine.foreach(_apply_transform, consume, state=estimator, desc="transform")
    except BaseException:
        sink.abort()
        raise
    result = sink.close()
    res = TransformResult(counts["rows"], counts["cols"], seconds=time.perf_counter() - t0, reordered=reordered)
    if isinstance(sink, _FileSink):
        res.output = result
    elif isinstance(sink, _ArraySink):
        res.embedding = result
    if sample is not None and sample.n_seen:
        res.sample = sample.result()[:2]
    return res


@dataclass
class EmbedResult:
    """What :func:`embed_file` did: ``.fit`` (:class:`FitResult`) and ``.transform`` (:class:`TransformResult`)."""

    fit: FitResult
    transform: TransformResult

    @property
    def estimator(self):
        return self.fit.estimator

    def to_dict(self):
        return {**self.fit.to_dict(), **self.transform.to_dict()}


def embed_file(
    data: DataLike,
    output: Any,
    estimator: Any,
    *,
    force: bool = False,
    fit_rows: int = FIT_ROWS,
    random_state: RandomStateLike = 0,
    client: Any = None,
    block_rows: int | None = None,
    sample_rows: int = 0,
    landmark_target: float | None = None,
    **read_options: Any,
) -> EmbedResult:
    """Fit ``estimator`` on ``data`` (without loading it) and write the embedding of every row to ``output``.

    ``fit_source`` then ``transform_source`` on the same engine; see both for the parameters
    (``landmark_target``: choose the landmark count first, :func:`choose_landmarks`).
    With ``output=None`` the embedding is returned in memory (``.transform.embedding``).

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> import kernelsketch as ks
    >>> folder = tempfile.mkdtemp()
    >>> np.save(os.path.join(folder, "X.npy"), np.random.default_rng(0).normal(size=(5000, 10)))
    >>> res = ks.embed_file(os.path.join(folder, "X.npy"), os.path.join(folder, "Z.npy"),
    ...                     ks.KernelJL(n_components=20, random_state=0))
    >>> np.load(os.path.join(folder, "Z.npy")).shape, res.fit.n_landmarks
    ((5000, 20), 200)
    """
    engine = open_engine(data, client=client, block_rows=block_rows, **read_options)
    if isinstance(output, (str, os.PathLike)):
        from .io import check_output_path, output_format

        output_format(output)  # a bad suffix fails before any work
        check_output_path(output, force=force, protect=_inputs_of(data))
    fit = fit_source(estimator, engine, fit_rows=fit_rows, random_state=random_state, landmark_target=landmark_target)
    tr = transform_source(
        fit.estimator, engine, output, force=force, sample_rows=sample_rows, random_state=random_state
    )
    return EmbedResult(fit, tr)


# -- clustering -------------------------------------------------------------------
class PairCounts:
    """Rand index and adjusted Rand index accumulated block by block (a contingency table).

    Examples
    --------
    >>> import numpy as np
    >>> pc = PairCounts()
    >>> pc.add(np.array([0, 0, 1]), np.array([1, 1, 0])); pc.add(np.array([1]), np.array([0]))
    >>> pc.rand_index(), pc.adjusted_rand_index()
    (1.0, 1.0)
    """

    def __init__(self):
        self.table = {}
        self._codes = {}

    def add(self, y_true, y_pred):
        """Count the (true label, cluster) pairs of one block."""
        y_true = np.asarray(y_true)
        if y_true.dtype.kind in "fc" and not np.all(np.isfinite(y_true)):
            raise ValueError("labels contain NaN or inf")
        values, local = np.unique(y_true, return_inverse=True)
        codes = np.array([self._codes.setdefault(v, len(self._codes)) for v in values.tolist()], dtype=np.int64)
        y_pred = np.asarray(y_pred, dtype=np.int64)
        width = int(y_pred.max()) + 1 if y_pred.size else 1
        keys, counts = np.unique(codes[local.ravel()] * width + y_pred, return_counts=True)
        for key, c in zip(keys.tolist(), counts.tolist(), strict=True):
            pair = divmod(key, width)
            self.table[pair] = self.table.get(pair, 0) + c

    def _sums(self):
        from math import comb

        n = sum(self.table.values())
        rows, cols = {}, {}
        for (a, b), c in self.table.items():
            rows[a] = rows.get(a, 0) + c
            cols[b] = cols.get(b, 0) + c
        sum_ij = sum(comb(c, 2) for c in self.table.values())
        sum_a = sum(comb(c, 2) for c in rows.values())
        sum_b = sum(comb(c, 2) for c in cols.values())
        return comb(n, 2), sum_ij, sum_a, sum_b

    def rand_index(self):
        total, sum_ij, sum_a, sum_b = self._sums()
        if total == 0:
            return 1.0
        return float((total + 2 * sum_ij - sum_a - sum_b) / total)

    def adjusted_rand_index(self):
        total, sum_ij, sum_a, sum_b = self._sums()
        if total == 0:
            return 1.0
        expected = sum_a * sum_b / total
        max_index = (sum_a + sum_b) / 2
        if max_index == expected:  # both partitions trivial (scikit-learn's convention)
            return 1.0
        return float((sum_ij - expected) / (max_index - expected))


@dataclass
class ClusterResult:
    """What :func:`cluster_file` did.

    Attributes
    ----------
    labels : ndarray of int64 or None
        Cluster of every row (kept in memory only when ``output`` is None and ``keep_labels``).
    output : Path or None
        The labels file written.
    n_rows, n_clusters : int
    embedding : fitted transformer or None (raw features)
    kmeans : fitted :class:`~kernelsketch.cluster.StreamingKMeans`
    inertia : float
        Sum of squared distances of every row's embedding to its centre.
    cluster_sizes : ndarray (n_clusters,)
    passes : int
        Lloyd passes over all rows made after the sample (0: centres from the sample).
    sample_rows : int
        Rows of the sample k-means was seeded and refined on.
    center_shift : float
        Squared shift the centres would make on one more Lloyd pass, relative to
        the squared norm of the centres: how far the sample's centres are from a
        full-data fixed point.
    rand_index, adjusted_rand_index : float or None
        Against the label column, when the source has one.
    fit : FitResult or None
    scaler : StandardScaler or None
        The column scaling applied before the embedding (``standardize``), None when none was.
    seconds : dict
        ``fit`` (the embedding's, with the standardizing pass), ``embed_sample`` (embedding the k-means
        sample), ``kmeans`` (k-means++ and Lloyd on it), ``passes``, ``assign`` and ``total``.
    sample : tuple or None
        ``(Z, labels)``: the first two embedding coordinates of up to ``plot_rows``
        sampled rows and their clusters (for a plot).
    """

    labels: np.ndarray | None
    output: Path | None
    n_rows: int
    n_clusters: int
    embedding: object
    kmeans: object
    inertia: float
    cluster_sizes: np.ndarray
    passes: int
    center_shift: float
    rand_index: float | None = None
    adjusted_rand_index: float | None = None
    fit: FitResult | None = None
    seconds: dict = field(default_factory=dict)
    sample: tuple | None = None
    sample_rows: int = 0
    scaler: Any = None

    def to_dict(self):
        d = {
            "standardized": self.scaler is not None,
            "n_rows": self.n_rows,
            "kmeans_sample_rows": self.sample_rows,
            "k": self.n_clusters,
            "output": None if self.output is None else str(self.output),
            "inertia": self.inertia,
            "cluster_sizes": [int(c) for c in self.cluster_sizes],
            "lloyd_passes": self.passes,
            "center_shift": self.center_shift,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }
        if self.rand_index is not None:
            d.update(rand_index=self.rand_index, adjusted_rand_index=self.adjusted_rand_index)
        if self.fit is not None:
            d.update(self.fit.to_dict())
        return d


#: rows of the k-means sample checked for missing-value codes (a per-column sort: 0.2 s for 5,000 x 784)
CODE_CHECK_ROWS = 5000


def _warn_missing_value_codes(rows, scaler):
    """Warn when the k-means sample's columns hold missing-value codes (read back in the file's units)."""
    if sp.issparse(rows) or rows.shape[0] < 2:
        return
    # the sample's indices are sorted: every step-th row spans the whole file, its head would not
    raw = np.asarray(rows[:: -(-rows.shape[0] // CODE_CHECK_ROWS)], dtype=np.float64)
    if scaler is not None:  # the engine standardized the rows; codes are whole numbers in the file's units
        raw = np.round(raw * scaler.scale_ + scaler.mean_, 9)
    codes = missing_value_codes(raw)
    if codes:
        _warn(
            f"columns hold what look like missing-value codes ({describe_codes(codes)}): rows sharing a code are far "
            "from all others and tend to take a cluster of their own; replace the codes before clustering (e.g. "
            "sklearn.impute.SimpleImputer(missing_values=CODE, strategy='median') on those columns)",
            MissingValueCodeWarning,
        )


def _embed_block(X, state):
    embedding = state[0]
    return X if embedding is None else _transform_block(embedding, X)


def _stats_block(X, state):
    from .cluster.streaming_kmeans import lloyd_statistics

    _embedding, centers = state
    return lloyd_statistics(_embed_block(X, state), centers)


def _assign_block(X, state):
    from .cluster.streaming_kmeans import assign_with_statistics

    _embedding, centers = state
    # the statistics of this assignment come free: a look at one more Lloyd step
    labels, dist, sums, counts = assign_with_statistics(_embed_block(X, state), centers)
    return labels, float(dist.sum()), sums, counts


def _refuse_empty_clusters(E, km, n_clusters):
    """A ValueError when k-means of all (embedded) rows ``E`` leaves a cluster empty: too few distinct rows.

    One assignment of ``E`` (``O(N k d)``); the distinct rows are counted only on that failure
    (identical rows embed identically, so they are at least as many as the distinct rows of the data).
    """
    if np.bincount(km.predict(E), minlength=n_clusters).min() > 0:
        return
    distinct = np.unique(np.asarray(E), axis=0).shape[0]
    if distinct < n_clusters:
        raise ValueError(
            f"n_clusters={n_clusters} but the data has only {distinct} distinct rows: at most {distinct} "
            "non-empty clusters exist; use -k / n_clusters <= the number of distinct rows"
        )


def cluster_file(
    data: DataLike,
    n_clusters: int,
    *,
    embedding: Any = "spectral",
    standardize: bool | str | None = None,
    output: Any = None,
    force: bool = False,
    keep_labels: bool = True,
    init_size: int | None = None,
    n_init: int = 3,
    lloyd_passes: int = 0,
    tol: float = 1e-4,
    fit_rows: int = FIT_ROWS,
    random_state: RandomStateLike = 0,
    client: Any = None,
    block_rows: int | None = None,
    plot_rows: int = 0,
    landmark_target: float | None = None,
    **read_options: Any,
) -> ClusterResult:
    """Kernel clustering of data of any size: embed, k-means on a sample, stream the labels.

    Parameters
    ----------
    data : path, ndarray, CSR, MatrixSource, dask array or engine (see :func:`open_engine`)
        ``label_column=`` (a file's column of true classes) adds the Rand
        index and adjusted Rand index to the result.
    n_clusters : int >= 2
    embedding : "spectral", "kjl", None or an estimator, default="spectral"
        ``"spectral"``: landmark spectral clustering,
        ``LandmarkSpectralEmbedding(n_components=n_clusters)`` (1,000 landmarks, each row
        joined to its 10 nearest with its own local bandwidth; the default because it gives
        the best clusters across the clustering-quality benchmark,
        ``benchmarks/results/cluster-quality.md``);
        ``"kjl"``: the Kernel JL paper's pipeline, centred
        ``KernelJL(n_components=10 * n_clusters, n_landmarks="auto")``;
        an (unfitted) kernelsketch or scikit-learn transformer, fitted with
        :func:`fit_source`; None clusters the raw features (plain k-means).
    standardize : bool, "auto" or None, default=None
        Z-score the columns first (one pass, :func:`standardize_source`).  ``"auto"``: only
        when the columns are in different units (:func:`magnitude_spread`); None: ``"auto"``
        for ``embedding="spectral"``, False otherwise.
    output : None, path, callable or sink
        Where the labels go, block by block (a file is written atomically:
        complete or not at all).  None: returned as ``.labels`` when ``keep_labels``.
    init_size, n_init, tol : see :class:`~kernelsketch.cluster.StreamingKMeans`
        k-means++ seeding and Lloyd on a uniform sample of ``init_size`` rows
        (default 100,000; all rows when there are fewer, which is then exact
        full-data k-means).
    lloyd_passes : int, default=0
        Exact Lloyd passes over all rows after the sample (each one embeds
        every row again); stops early when the centres move less than ``tol``.
        The assignment pass reports how far one more pass would move the
        centres (``center_shift``), so the default's cost is one pass.
    fit_rows : int
        See :func:`fit_source`.
    random_state : int, default=0
        Seeds the embedding (for ``"kjl"``), the sample and k-means++.
    client : distributed.Client, optional
        Run every pass on Dask; the same seed gives the same labels.
    plot_rows : int, default=0
        Keep the embedding (two coordinates) and clusters of this many sampled rows (``.sample``).
    landmark_target : float in (0, 1), optional
        Choose a landmark embedding's landmark count from this Gram error target
        (:func:`choose_landmarks`; not for ``"spectral"``, whose landmarks define a graph).

    Returns
    -------
    ClusterResult

    Notes
    -----
    Passes over the data: the fit's (landmark rows only, or one pass for text
    files and streaming estimators), the sample's rows, ``lloyd_passes``, and
    one assignment pass that embeds each block, assigns it and hands the
    labels to ``output``.  When the sample is every row (N <= ``init_size``)
    the sample's embedding is assigned directly: one embedding of the data.
    Memory: the fitted embedding, the sample's embedding (``init_size x d``)
    and one block -- never the ``N x d`` embedding.

    Examples
    --------
    >>> import numpy as np
    >>> import kernelsketch as ks
    >>> X, y = ks.load_dataset("banknote")
    >>> res = ks.cluster_file(X, 2, random_state=0)
    >>> res.labels.shape, res.n_rows
    ((1372,), 1372)
    """
    from .cluster.streaming_kmeans import StreamingKMeans
    from .maps.kernel_jl import KernelJL
    from .maps.landmark_spectral import LandmarkSpectralEmbedding

    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral) or n_clusters < 2:
        raise ValueError(f"n_clusters must be an int >= 2, got {n_clusters!r}")
    if isinstance(lloyd_passes, bool) or not isinstance(lloyd_passes, numbers.Integral) or lloyd_passes < 0:
        raise ValueError(f"lloyd_passes must be an int >= 0, got {lloyd_passes!r}")
    engine = open_engine(data, client=client, block_rows=block_rows, **read_options)
    protect = _inputs_of(data)
    if isinstance(output, (str, os.PathLike)):
        from .io import check_output_path, output_format

        output_format(output)
        check_output_path(output, force=force, protect=protect)
    if standardize is None:
        standardize = "auto" if isinstance(embedding, str) and embedding == "spectral" else False
    if standardize not in (True, False, "auto"):
        raise ValueError(f"standardize must be True, False, 'auto' or None, got {standardize!r}")
    if isinstance(embedding, str):
        if embedding == "kjl":
            embedding = KernelJL(n_components=10 * n_clusters, centered=True, random_state=random_state)
        elif embedding == "spectral":
            embedding = LandmarkSpectralEmbedding(n_components=n_clusters, random_state=random_state)
        else:
            raise ValueError(f"embedding must be 'spectral', 'kjl', None or an estimator, got {embedding!r}")
    seconds = {}
    t0 = time.perf_counter()
    scaler = None
    if standardize:
        engine, scaler = standardize_source(engine, when=standardize)
    fit = None
    if embedding is not None:
        fit = fit_source(
            embedding, engine, fit_rows=fit_rows, random_state=random_state, landmark_target=landmark_target
        )
    elif landmark_target is not None:
        raise ValueError("landmark_target needs a landmark embedding; embedding=None clusters the raw features")
    elif engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    seconds["fit"] = time.perf_counter() - t0
    N = engine.n_rows
    if n_clusters > N:
        raise ValueError(f"n_clusters={n_clusters} must be <= the number of rows ({N})")

    # 1. seeding: k-means++ and Lloyd on the embedding of a uniform sample
    t1 = time.perf_counter()
    km = StreamingKMeans(n_clusters, init_size=init_size, n_init=n_init, tol=tol, random_state=random_state)
    km._validate_params()
    rng = check_random_state(derive_seed(random_state) + 1)
    idx = km.sample_indices(N, rng)
    whole = idx.size == N  # the sample is every row: exact full-data k-means, no second embedding pass
    rows, y_rows = engine.gather(idx)
    _warn_missing_value_codes(rows, scaler)
    sample = _embed_block(rows, (embedding,))
    del rows
    seconds["embed_sample"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    km.seed(sample, rng)
    if whole:  # every row is here: an empty cluster is known before anything is written
        _refuse_empty_clusters(sample, km, n_clusters)
    seconds["kmeans"] = time.perf_counter() - t2

    # 2. exact Lloyd passes over every row (optional; each one embeds every block again)
    t3 = time.perf_counter()
    passes = 0
    if not whole:
        for passes in range(1, lloyd_passes + 1):
            sums, counts, _ = engine.reduce(
                _stats_block, _sum_tuples, state=(embedding, km.cluster_centers_), desc=f"Lloyd pass {passes}"
            )
            if km.converged(km.update(sums, counts)):
                break
    seconds["passes"] = time.perf_counter() - t3
    plot = None
    if plot_rows:
        Zp = sample[: min(plot_rows, sample.shape[0])]
        plot = (np.asarray(Zp[:, :2]), km.predict(Zp))
    if not whole:
        del sample

    # 3. assignment: labels streamed to the sink, scores and one more Lloyd step's statistics on the way
    t4 = time.perf_counter()
    sink = _make_sink(
        output if output is not None else (None if keep_labels else (lambda labels: None)),
        force=force,
        protect=protect,
        column_names=["cluster"],
    )
    pairs = PairCounts() if engine.has_labels else None
    acc = {"inertia": 0.0, "sums": None, "counts": None, "rows": 0}

    def consume(out, y):
        labels, inertia, sums, counts = out
        sink.write(labels.astype(np.int64, copy=False))
        acc["inertia"] += inertia
        acc["rows"] += labels.shape[0]
        if sums is not None:
            acc["sums"] = sums if acc["sums"] is None else acc["sums"] + sums
            acc["counts"] = counts if acc["counts"] is None else acc["counts"] + counts
        if pairs is not None and y is not None:
            pairs.add(y, labels)

    try:
        if whole:
            step = max(1, min(N, 65536))
            for start in range(0, N, step):
                stop = min(N, start + step)
                consume(
                    _assign_block(sample[start:stop], (None, km.cluster_centers_)),
                    None if y_rows is None else y_rows[start:stop],
                )
        else:
            engine.foreach(_assign_block, consume, state=(embedding, km.cluster_centers_), desc="assign clusters")
        result = sink.close()
    except BaseException:
        sink.abort()
        raise
    seconds["assign"] = time.perf_counter() - t4
    seconds["total"] = time.perf_counter() - t0
    centers = km.cluster_centers_
    nxt = np.where(acc["counts"][:, None] > 0, acc["sums"] / np.maximum(acc["counts"], 1)[:, None], centers)
    shift = float(((nxt - centers) ** 2).sum() / max(float((centers**2).sum()), np.finfo(float).tiny))
    km.inertia_ = acc["inertia"]
    km.n_iter_ = passes
    km.counts_ = acc["counts"]
    res = ClusterResult(
        labels=result if isinstance(sink, _ArraySink) else None,
        output=result if isinstance(sink, _FileSink) else None,
        n_rows=acc["rows"],
        n_clusters=n_clusters,
        embedding=embedding,
        kmeans=km,
        inertia=acc["inertia"],
        cluster_sizes=acc["counts"].astype(np.int64),
        passes=passes,
        center_shift=shift,
        fit=fit,
        seconds=seconds,
        sample=plot,
        sample_rows=int(idx.size),
        scaler=scaler,
    )
    if pairs is not None and pairs.table:
        res.rand_index, res.adjusted_rand_index = pairs.rand_index(), pairs.adjusted_rand_index()
    if res.labels is not None:
        res.labels = res.labels.ravel()
    empty = np.flatnonzero(res.cluster_sizes == 0)
    if empty.size:
        _warn(
            f"{empty.size} of {n_clusters} clusters are empty (clusters {empty.tolist()}): the data (or its "
            "embedding) has fewer separable groups than n_clusters; use a smaller n_clusters",
            EmptyClusterWarning,
        )
    return res


class EmptyClusterWarning(UserWarning):
    """``cluster_file`` assigned no row to some clusters (more clusters than the data holds)."""
