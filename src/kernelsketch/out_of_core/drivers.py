"""The drivers: map a source through a fitted estimator, embed a file, cluster it."""

from __future__ import annotations

import contextlib
import numbers
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._typing import DataLike, RandomStateLike
from ..cluster.seeding import seed_on_rows
from ..io import RowReservoir
from ..io.readers import guess_format as _guess_format
from ..utils.row_source import sum_parts
from ..utils.validation import dense_if_needed, derive_seed
from ..utils.warnings import EmptyClusterWarning
from ..utils.warnings import warn as _warn
from .assignment import (
    assign_block,
    assignment_state,
    block_names_ignored,
    embed_sample,
    stats_block,
    transform_block,
)
from .device import host_data, searches_on, spectral_on_device
from .engine import align_columns, open_engine, refuse_label_like_columns
from .fit import FIT_ROWS, FitResult, fit_source
from .missing import check_missing_codes, impute_missing_cells, inspection_sample, replace_missing_codes
from .params import driver_params
from .sinks import _ArraySink, _FileSink, _inputs_of, _make_sink
from .standardize import standardize_source


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
    ignored_columns : list of str
        The input's columns the model was not fitted on, left out (a label column, an id).
    cluster_sizes : ndarray or None
        ``method="predict"``: rows given each label.
    rand_index, adjusted_rand_index : float or None
        ``method="predict"`` on data with a label column: the labels against it.
    """

    n_rows: int
    n_columns: int
    output: Path | None = None
    embedding: np.ndarray | None = None
    seconds: float = 0.0
    sample: tuple | None = None
    reordered: list | None = None
    ignored_columns: list = field(default_factory=list)
    cluster_sizes: np.ndarray | None = None
    rand_index: float | None = None
    adjusted_rand_index: float | None = None

    def to_dict(self):
        d = {
            "output": None if self.output is None else str(self.output),
            "shape": [self.n_rows, self.n_columns],
            "transform_seconds": round(self.seconds, 4),
        }
        if self.ignored_columns:
            d["ignored_columns"] = list(self.ignored_columns)
        if self.cluster_sizes is not None:
            d["cluster_sizes"] = [int(c) for c in self.cluster_sizes]
        if self.adjusted_rand_index is not None:
            d.update(adjusted_rand_index=self.adjusted_rand_index, rand_index=self.rand_index)
        return d


def model_missing_rule(estimator):
    """What a fitted clustering does with a row's missing cells: ``"impute"``, ``"drop"`` (its label is -1), or
    None (refused): the rule of its first step, a :class:`~kernelsketch.preprocessing.MissingValueCodeImputer`
    that :func:`cluster_file` fitted with ``missing=``."""
    first = estimator.steps[0][1] if hasattr(estimator, "steps") and estimator.steps else estimator
    if getattr(first, "nan_replacements_", None) is None:
        return None
    return "drop" if getattr(first, "drop_missing_rows_", False) else "impute"


def model_read_options(estimator, data, read_options):
    """``read_options`` completed by what a fitted model knows of its input: a libsvm file (whose
    width is only its largest index) is read as wide as the model's ``n_features_in_``; a text file's empty
    and NA cells are read as missing values where the model has a rule for them (:func:`model_missing_rule`)."""
    options = dict(read_options)
    if model_missing_rule(estimator) is not None and isinstance(data, (str, os.PathLike)):
        options.setdefault("na_values", None)
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
    return transform_block(est, X)


def _apply_predict(X, est):
    with block_names_ignored():
        labels = np.asarray(est.predict(dense_if_needed(est, X)), dtype=np.int64)
    if model_missing_rule(est) == "drop" and not sp.issparse(X):  # (rows with a missing cell: -1, as fitted)
        labels[np.isnan(np.asarray(X, dtype=np.float64)).any(axis=1)] = -1
    return labels


#: what :func:`transform_source` computes of each block: ``method`` -> the block function
_METHODS = {"transform": _apply_transform, "predict": _apply_predict}


@driver_params
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
    method: str = "transform",
    device: Any = None,
    n_jobs: int | None = None,
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
    method : {"transform", "predict"}, default="transform"
        ``"predict"``: the estimator's ``predict`` of each block (a clustering's labels, one
        int64 column named ``cluster``), e.g. a :attr:`ClusterResult.model` on new rows.
    device : str or None, default=None
        Run a spectral model's searches with PyTorch on this device (``"cuda"``, ``"cpu"``), or on the exact
        NumPy search (``"numpy"``), on a copy of the model (:func:`~kernelsketch.out_of_core.device.searches_on`);
        None: where the model searches (as fitted: ``cluster_file(..., device=...)`` fits one that searches there).
    n_jobs : int or None, default=None
        Threads for BLAS, OpenMP and the compiled loops during the call (-1: every usable core, 1: one core);
        None: the process's current limits.

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
    if not callable(getattr(estimator, method, None)):
        raise TypeError(f"{type(estimator).__name__} has no {method}()")
    if device is not None:
        estimator = searches_on(estimator, device)
    engine = open_engine(
        data, client=client, block_rows=block_rows, **model_read_options(estimator, data, read_options)
    )
    reordered = align_columns(estimator, engine)
    fitted = getattr(estimator, "feature_names_in_", None)
    ignored = [] if reordered is None or fitted is None else [n for n in reordered if n not in set(map(str, fitted))]
    predict = method == "predict"
    if column_names is None and predict:
        column_names = ["cluster"]
    pairs = PairCounts() if predict and engine.has_labels else None
    sizes: np.ndarray | None = np.zeros(0, dtype=np.int64)  # (predict: rows given each cluster number so far)
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
        if predict:
            nonlocal sizes
            labels = np.asarray(Z).ravel()
            if sizes is not None and labels.dtype.kind in "iu" and (labels.size == 0 or labels.min() >= 0):
                block = np.bincount(labels, minlength=sizes.size)
                sizes = block + np.pad(sizes, (0, block.size - sizes.size))
            else:  # (a predictor whose labels are not cluster numbers: a classifier's classes, noise as -1)
                sizes = None
            if pairs is not None and y is not None:
                pairs.add(y, labels)
        counts["rows"] += Z.shape[0]
        counts["cols"] = 1 if Z.ndim == 1 else Z.shape[1]
        if sample is not None:
            sample.add(Z[:, :2] if Z.ndim == 2 else Z[:, None], y)

    t0 = time.perf_counter()
    try:
        engine.foreach(_METHODS[method], consume, state=estimator, desc=method)
    except BaseException:
        sink.abort()
        raise
    result = sink.close()
    res = TransformResult(
        counts["rows"], counts["cols"], seconds=time.perf_counter() - t0, reordered=reordered, ignored_columns=ignored
    )
    if predict and sizes is not None:
        res.cluster_sizes = np.pad(sizes, (0, max(0, _n_clusters_of(estimator) - sizes.size)))
        if pairs is not None and pairs.table:
            res.rand_index, res.adjusted_rand_index = pairs.rand_index(), pairs.adjusted_rand_index()
    if isinstance(sink, _FileSink):
        res.output = result
    elif isinstance(sink, _ArraySink):
        res.embedding = result
    if sample is not None and sample.n_seen:
        res.sample = sample.result()[:2]
    return res


def _n_clusters_of(estimator):
    """How many labels a clustering model gives (its ``n_clusters_`` / ``n_clusters``; 0 when it does not say)."""
    last = estimator[-1] if hasattr(estimator, "steps") else estimator
    k = getattr(last, "n_clusters_", None) or getattr(last, "n_clusters", None)
    return int(k) if isinstance(k, numbers.Integral) else 0


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


@driver_params
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
    n_jobs: int | None = None,
    **read_options: Any,
) -> EmbedResult:
    """Fit ``estimator`` on ``data`` (without loading it) and write the embedding of every row to ``output``.

    ``fit_source`` then ``transform_source`` on the same engine; see both for the parameters
    (``landmark_target``: choose the landmark count first, :func:`choose_landmarks`; ``n_jobs``: the threads of
    the whole call).
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
        from ..io import check_output_path, output_format

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
        Sum of squared distances of every row's embedding to its centre; when the graph statistics were summed
        over a sample (``statistics_rows``) and k-means' sample is not every row, estimated from that uniform
        sample (its mean, times ``n_rows``): the assignment pass then labels rows of settled cells without forming
        their embedding.
    cluster_sizes : ndarray (n_clusters,)
    passes : int
        Lloyd passes over all rows made after the sample (0: centres from the sample).
    sample_rows : int
        Rows of the sample k-means was seeded and refined on.
    center_shift : float or None
        Squared shift the centres would make on one more Lloyd pass, relative to
        the squared norm of the centres: how far the sample's centres are from a
        full-data fixed point.  None when ``inertia`` is estimated.
    statistics_rows : int or None
        The rows of the spectral embedding's statistics' sample when there were more rows than its
        ``statistics_rows`` (:class:`~kernelsketch.maps.LandmarkSpectralEmbedding`), else None (every row).
    rand_index, adjusted_rand_index : float or None
        Against the label column, when the source has one.
    fit : FitResult or None
    scaler : StandardScaler or None
        The column scaling applied before the embedding (``standardize``), None when none was.
    missing_codes : list of dict
        The missing-value codes found (``missing_codes``): ``column``, ``value``, ``rows`` (in
        the checked sample), ``replacement`` (the column's median) and ``replaced``.
    missing_cells : dict or None
        A text file's missing cells (``missing``): ``counts`` per column (``counted``: over every ``"rows"``,
        or in the ``"sample"``), ``medians`` (one per feature column), ``action``, and for ``"drop"``
        ``dropped``: the rows labelled -1.  None when the file has none.
    k_choice : KChoice or None
        With ``n_clusters="auto"``: the k chosen, the criterion and its scores
        (:func:`~kernelsketch.cluster.choose_k.choose_n_clusters`).
    clusterer : LandmarkSpectralClustering or None
        The fitted clustering estimator (the spectral embedding): ``embedding`` and ``kmeans`` are its
        ``embedding_`` and ``kmeans_``.  None for other embeddings (k-means seeded by the driver).
    seconds : dict
        ``fit`` (the embedding's, with the code check and the standardizing pass), ``embed_sample``
        (embedding the k-means sample), ``kmeans`` (k-means++ and Lloyd on it), ``passes``, ``assign`` and ``total``.
    sample : tuple or None
        ``(points, labels, (x label, y label))``: up to ``plot_rows`` sampled rows as a 2-D view of the data
        (their two columns, else their top two principal axes: :func:`~kernelsketch.utils.plane.two_d_view`)
        and their clusters, for a plot of the data coloured by cluster.
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
    center_shift: float | None
    rand_index: float | None = None
    adjusted_rand_index: float | None = None
    fit: FitResult | None = None
    seconds: dict = field(default_factory=dict)
    sample: tuple | None = None
    sample_rows: int = 0
    scaler: Any = None
    missing_codes: list = field(default_factory=list)
    k_choice: Any = None
    clusterer: Any = None
    missing_cells: dict | None = None
    statistics_rows: int | None = None

    @property
    def model(self):
        """The whole fitted clustering as one scikit-learn :class:`~sklearn.pipeline.Pipeline`.

        Its steps repeat what :func:`cluster_file` did to every row: the missing-value codes it
        replaced (``"codes"``, a :class:`~kernelsketch.preprocessing.MissingValueCodeImputer`, only
        with ``missing_codes="impute"``), the column scaling (``"scaler"``), then the fitted
        clustering (``"clustering"``, the :class:`~kernelsketch.cluster.LandmarkSpectralClustering`
        of the spectral embedding, whose ``score`` is its stability) or, for another embedding, the
        embedding (``"embedding"``) and k-means (``"kmeans"``); ``model.predict(X)`` gives the labels
        ``cluster_file`` wrote for the rows of ``X``, and of any new rows.  ``ks.save(res.model,
        path)`` writes it; ``ks.transform_source(model, data, output, method="predict")`` (or
        ``kernelsketch predict MODEL FILE``) labels a file of any size with it.
        """
        from sklearn.pipeline import Pipeline

        from ..preprocessing import MissingValueCodeImputer

        first = next(s for s in (self.scaler, self.clusterer, self.embedding, self.kmeans) if s is not None)
        steps = []
        replaced = [c for c in self.missing_codes if c["replaced"]]
        fills = None if self.missing_cells is None else self.missing_cells["medians"]
        if replaced or fills is not None:
            steps.append(("codes", MissingValueCodeImputer.from_codes(replaced, first.n_features_in_, fills)))
            steps[0][1].drop_missing_rows_ = fills is not None and self.missing_cells["action"] == "drop"
            if hasattr(first, "feature_names_in_"):
                steps[0][1].feature_names_in_ = first.feature_names_in_
        if self.scaler is not None:
            steps.append(("scaler", self.scaler))
        if self.clusterer is not None:
            steps.append(("clustering", self.clusterer))
            return Pipeline(steps)
        if self.embedding is not None:
            steps.append(("embedding", self.embedding))
        steps.append(("kmeans", self.kmeans))
        return Pipeline(steps)

    def to_dict(self):
        d = {
            "standardized": self.scaler is not None,
            "missing_value_codes": [
                {k: c[k] for k in ("column", "value", "rows", "replacement", "replaced")} for c in self.missing_codes
            ],
            "n_rows": self.n_rows,
            "kmeans_sample_rows": self.sample_rows,
            "k": self.n_clusters,
            "output": None if self.output is None else str(self.output),
            "inertia": self.inertia,
            "cluster_sizes": [int(c) for c in self.cluster_sizes],
            "lloyd_passes": self.passes,
            "center_shift": self.center_shift,
            "statistics_rows": self.statistics_rows,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }
        if self.rand_index is not None:
            d.update(rand_index=self.rand_index, adjusted_rand_index=self.adjusted_rand_index)
        if self.missing_cells is not None:
            cells = self.missing_cells
            d["missing_cells"] = {
                "action": cells["action"],
                "counted": cells["counted"],
                "counts": dict(cells["counts"]),
                **({"dropped_rows": int(cells["dropped"])} if "dropped" in cells else {}),
            }
        if self.clusterer is not None:
            d.update(labeling=self.clusterer.labeling_, normalized_cuts=dict(self.clusterer.normalized_cuts_))
        if self.k_choice is not None:
            d.update(
                k_choice={
                    "k": self.k_choice.k,
                    "criterion": self.k_choice.criterion,
                    "scores": {str(k): v for k, v in self.k_choice.scores.items()},
                }
            )
        if self.fit is not None:
            d.update(self.fit.to_dict())
        return d


def _assignment_source(engine, embedding, centers, graphs, settled=None):
    """``(source, state)`` of a pass that assigns every row (:func:`~kernelsketch.out_of_core.assignment.
    block_assignment`): each row's graph kept by the fit (``graphs``, read back without a second search, the labels
    with it), else the engine's rows (``settled``: the cells whose rows are labelled without the search's second
    sweep, :meth:`~kernelsketch.maps.LandmarkSpectralEmbedding.settled_cells`)."""
    if graphs is not None:
        return graphs, assignment_state(embedding, centers, kept=True)
    return engine, assignment_state(embedding, centers, settled=settled)


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


@driver_params
def cluster_file(
    data: DataLike,
    n_clusters: int | str,
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
    missing_codes: str | None = "warn",
    keep_graph: bool | str = "auto",
    device: Any = None,
    assign_labels: str = "auto",
    missing: str = "impute",
    label_column: Any = None,
    n_jobs: int | None = None,
    **read_options: Any,
) -> ClusterResult:
    """Kernel clustering of data of any size: embed, k-means on a sample, stream the labels.

    Parameters
    ----------
    data : path, ndarray, CSR, MatrixSource, dask array or engine (see :func:`open_engine`)
        ``label_column=`` (a file's column of true classes) adds the Rand
        index and adjusted Rand index to the result.
    n_clusters : int >= 2 or "auto"
        ``"auto"`` (the spectral embedding only): k chosen without labels from the fit's kept graph
        statistics (:func:`~kernelsketch.cluster.choose_k.choose_n_clusters`, k = 2 .. 20; the criterion
        ``benchmarks/results/choose-k-pool.md`` chose), no second pass; ``res.k_choice`` says which and why.
    embedding : "spectral", "kjl", None or an estimator, default="spectral"
        ``"spectral"``: landmark spectral clustering,
        ``LandmarkSpectralEmbedding(n_components=n_clusters)`` (1,000 landmarks, each row
        joined to its 10 nearest with its own local bandwidth, found by U-SPEC's approximate
        search for data of at most 40 columns; the default because it gives the best clusters
        across the clustering-quality benchmark, ``benchmarks/results/cluster-quality.md``);
        ``"kjl"``: the Kernel JL paper's pipeline, centred
        ``KernelJL(n_components=10 * n_clusters, n_landmarks="auto")``;
        an (unfitted) kernelsketch or scikit-learn transformer, fitted with
        :func:`fit_source`; None clusters the raw features (plain k-means).
    standardize : bool, "auto" or None, default=None
        Z-score the columns first (one pass, :func:`standardize_source`).  ``"auto"``: only
        when the columns are in different units (:func:`magnitude_spread`); None: ``"auto"``
        for a named embedding (``"spectral"``, ``"kjl"``) and for raw k-means (``embedding=None``): one rule for
        every method, as each measures distances; an estimator object's rows are taken as given (False).
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
        Keep a 2-D view of this many sampled rows and their clusters (``.sample``, for a plot).
    landmark_target : float in (0, 1), optional
        Choose a landmark embedding's landmark count from this Gram error target
        (:func:`choose_landmarks`; not for ``"spectral"``, whose landmarks define a graph).
    missing_codes : "impute", "warn", "off" or None, default="warn"
        Missing-value codes (a blood pressure of 0 for "not measured") are looked for in a
        uniform sample of 5,000 rows (:func:`replace_missing_codes`).  ``"warn"``: a
        ``MissingValueCodeWarning`` names them and the rows are clustered as given (a
        column of genuine zeros looks the same as a code, and no value is changed without
        being asked); ``"impute"``: each is read as its column's median; ``"off"`` or None: do not look.
    keep_graph : bool or "auto", default="auto"
        Keep each row's landmark graph from the fit pass (``r`` indices and weights a row, at most 12
        bytes each: 6 with at most 32,768 landmarks and float32 rows), so that the assignment pass (and
        any Lloyd pass) reads it instead of searching the nearest landmarks again: the same labels,
        about half the search time; that pass reads the kept graph (and the labels kept with it) alone, not
        the data.  The engine keeps it (``engine.map(..., keep=True)``): a local engine (file or array) in a
        temporary folder removed afterwards, also on error
        (:class:`~kernelsketch.out_of_core.spilled_blocks.SpilledBlocks`); Dask with a client on the workers
        until the run ends.  ``"auto"``: for the spectral embedding, when the engine has room
        (:meth:`Engine.can_keep`: twice the graph on the temporary directory's disk, or at most a quarter of the
        workers' memory).  True requires it; False searches again.
    device : str, torch.device or None, default=None
        Run the spectral embedding's searches (the landmark graph, k-means' seeding and the assignment) with
        PyTorch on this device (:class:`~kernelsketch.kernels.torch_search.TorchSearch`): ``"cuda"``,
        ``"cuda:1"``, or ``"cpu"`` (PyTorch's CPU).  The file is still read block by block (each block moved to
        the device, cut to fit its free memory).  None: the NumPy path, or the device of ``data`` when it is a
        PyTorch tensor (copied to the host, then searched there block by block).  The same labels as the NumPy
        path to the search's rounding (ARI >= .99 on well-separated data in the tests).
    missing : {"impute", "drop", "error"}, default="impute"
        A text file's missing cells (empty, ``NA``, ``NaN``, ``N/A``, ``?``, ``null``; ``na_values=`` another
        list): ``"impute"`` reads each as its column's median in a 5,000-row sample; ``"drop"`` does the same
        for the fit and labels those rows -1 (counted in ``res.missing_cells``); ``"error"`` refuses the first
        one, naming its line and column.  A :class:`~kernelsketch.utils.missing_codes.MissingCellWarning` gives
        the count per column; ``res.model`` repeats the rule on new rows.
    label_column : str or int, optional
        A file's (or a DataFrame's) column of true classes: left out of the features, and the Rand index and
        adjusted Rand index against it are computed.
    n_jobs : int or None, default=None
        Threads for BLAS, OpenMP and the compiled loops during the run (:func:`~kernelsketch.utils.threads.
        thread_limit`; -1: every usable core, 1: one core); None: the process's current limits.
    assign_labels : {"auto", "kmeans", "genie"}, default="auto"
        The spectral clustering's labeling (:class:`~kernelsketch.cluster.LandmarkSpectralClustering`):
        k-means on the embedding, Genie on the landmarks with each row following its graph's vote, or
        (``"auto"``) the one of lower normalized cut on k-means' sample (``res.clusterer.labeling_``). With
        the votes, ``lloyd_passes`` has no centres to move and is skipped, and ``inertia`` is the votes'
        distance to their cluster's corner.
    Returns
    -------
    ClusterResult

    Notes
    -----
    Passes over the data: the code check's sample (by index; one pass for a
    text file), the fit's (landmark rows only, or one pass for text files and
    streaming estimators), the sample's rows, ``lloyd_passes``, and
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
    standardize = _check_cluster_args(n_clusters, standardize, embedding, assign_labels)
    missing_codes = check_missing_codes(missing_codes)
    data, device = host_data(data, device)
    if label_column is not None:
        read_options["label_column"] = label_column
    if isinstance(data, (str, os.PathLike)) and missing != "error":  # (a text file's empty and NA cells: missing)
        read_options.setdefault("na_values", None)
    engine = open_engine(data, client=client, block_rows=block_rows, **read_options)
    if engine is not data:  # (an engine passed in is the caller's, its columns chosen)
        refuse_label_like_columns(engine, read_options)
    protect = _inputs_of(data)
    sink = _make_sink(  # (a file's path checked here, once, before any work; written atomically at the end)
        output if output is not None else (None if keep_labels else (lambda labels: None)),
        force=force,
        protect=protect,
        column_names=["cluster"],
    )
    model = _clustering_model(embedding, n_clusters, n_init, init_size, tol, random_state, device, assign_labels)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    engine, cells, sample = impute_missing_cells(engine, missing, random_state)
    if sample is None and engine.n_rows is not None and not engine.sparse and (missing_codes or standardize):
        sample = inspection_sample(engine, random_state)  # (one sample for the codes and the scaling's foresight)
    engine, codes = replace_missing_codes(engine, action=missing_codes, random_state=random_state, sample=sample)
    shown = engine  # (the rows as given, before any scaling: what a plot shows)
    with contextlib.ExitStack() as stack:
        keep = _keeps_graph(keep_graph, engine, model, init_size)
        engine, scaler, fit = _fit_embedding(
            engine, model, standardize, fit_rows, random_state, landmark_target, keep, sample
        )
        graphs = None if fit is None else fit.graphs
        if graphs is not None:
            stack.callback(graphs.release)  # dropped on leaving, also on error
        # 1. seeding: k-means++ and Lloyd on the embedding of a uniform sample (the clusterer's fit did it)
        kmeans_params = {"n_init": n_init, "init_size": init_size, "tol": tol, "random_state": random_state}
        clusterer, embedding, km, seeding = _seeded(model, fit, engine, n_clusters, **kmeans_params)
        seconds.update(seeding.seconds, fit=time.perf_counter() - t0 - sum(seeding.seconds.values()))
        N = engine.n_rows
        whole = seeding.indices.size == N  # the sample is every row: exact full-data k-means, no second pass
        if whole:  # every row is here: an empty cluster is known before anything is written
            _refuse_empty_clusters(seeding.embedded, km, km.n_clusters)

        # 2. exact Lloyd passes over every row (optional; each one embeds every block again)
        t3 = time.perf_counter()
        votes = clusterer is not None and clusterer.labeling_ != "kmeans"  # (no centres to move: Lloyd passes skipped)
        passes = 0 if whole or votes else _lloyd_passes(engine, embedding, km, lloyd_passes, graphs)
        seconds["passes"] = time.perf_counter() - t3
        plot = _plot_sample(plot_rows, seeding, km, shown, engine) if plot_rows else None

        # 3. assignment: labels streamed to the sink, scores and one more Lloyd step's statistics on the way
        t4 = time.perf_counter()
        drop = _MissingRows(getattr(shown, "source", None)) if cells is not None and cells["action"] == "drop" else None
        labels = _Assignment(sink, PairCounts() if engine.has_labels else None, drop)
        in_memory = (seeding.embedded, seeding.labels) if whole else None
        sampled = None if clusterer is None else _statistics_sample(clusterer, N)
        unkept = sampled is not None and not whole  # (no row's graph kept, and the rows are not all in memory)
        settled = embedding.settled_cells(km.cluster_centers_) if unkept else None
        inertia = _inertia_of_sample(seeding.embedded, km.cluster_centers_, N) if unkept else None
        seeding.embedded = None  # (not held through a streamed assignment pass)
        written = labels.run(engine, embedding, km.cluster_centers_, in_memory, graphs, settled)
        seconds["assign"] = time.perf_counter() - t4
        seconds["total"] = time.perf_counter() - t0
        if inertia is None:
            inertia = labels.inertia
        km.inertia_, km.n_iter_, km.counts_ = inertia, passes, labels.counts
        if drop is not None:
            cells["dropped"] = labels.dropped
        res = ClusterResult(
            labels=written.ravel() if isinstance(sink, _ArraySink) else None,
            output=written if isinstance(sink, _FileSink) else None,
            n_rows=labels.rows,
            n_clusters=int(km.n_clusters),
            embedding=embedding,
            kmeans=km,
            inertia=inertia,
            cluster_sizes=labels.counts.astype(np.int64),
            passes=passes,
            center_shift=None if unkept else labels.center_shift(km.cluster_centers_),
            statistics_rows=sampled,
            fit=fit,
            seconds=seconds,
            sample=plot,
            sample_rows=int(seeding.indices.size),
            scaler=scaler,
            missing_codes=codes,
            missing_cells=cells,
            k_choice=None if clusterer is None else clusterer.k_choice_,
            clusterer=clusterer,
        )
        if labels.pairs is not None and labels.pairs.table:
            res.rand_index, res.adjusted_rand_index = labels.pairs.rand_index(), labels.pairs.adjusted_rand_index()
        if clusterer is not None:  # (n_clusters_ the non-empty count, the warning naming the labeling)
            clusterer.count_clusters(res.cluster_sizes)
        else:
            _warn_empty_clusters(res.cluster_sizes, km.n_clusters)
        return res


def _statistics_sample(clusterer, n_rows):
    """The rows of the spectral embedding's statistics' sample when it summed a sample
    (``statistics_rows`` < ``n_rows``), else None."""
    seen = int(clusterer.embedding_.n_samples_seen_)
    return seen if seen < n_rows else None


def _inertia_of_sample(E, centers, n_rows):
    """k-means' inertia of ``n_rows`` rows estimated from the uniform sample ``E`` of their embedding: its mean
    squared distance to the nearest centre, times ``n_rows``."""
    from ..kernels.lloyd import lloyd_statistics

    return lloyd_statistics(E, centers)[2] * n_rows / max(1, E.shape[0])


def _plot_sample(plot_rows, seeding, km, given, clustered):
    """``(points, labels, axis names)``: up to ``plot_rows`` rows of k-means' sample, spread evenly over it, as a
    2-D view of the data (:func:`~kernelsketch.utils.plane.two_d_view`: two columns as given, else the PCA plane
    of the rows as clustered, scaled if they were) and their clusters."""
    from ..utils.plane import two_d_view

    n = seeding.indices.size
    pick = np.unique(np.linspace(0, n - 1, min(plot_rows, n)).astype(np.int64))
    labels = km.predict(seeding.embedded[pick])
    engine = given if given.n_features <= 2 else clustered
    rows, _ = engine.gather(seeding.indices[pick])
    names = getattr(given, "feature_names", None)
    points, axes = two_d_view(rows, names if names is not None and len(names) == rows.shape[1] else None)
    return points, labels, axes


def _clustering_model(embedding, n_clusters, n_init, init_size, tol, random_state, device=None, assign_labels="auto"):
    """What :func:`cluster_file` fits: the landmark spectral clustering (the default, or the recipe of a given
    ``LandmarkSpectralEmbedding`` of k or unset components), fitted whole by :func:`fit_source`; else the
    embedding alone (``"kjl"``, an estimator, or None for raw features), k-means seeded by :func:`_seeded`.
    ``device``: the spectral embedding's searches run there (:func:`~.device.spectral_on_device`)."""
    from ..cluster.landmark_spectral_clustering import LandmarkSpectralClustering
    from ..maps.landmark_spectral import LandmarkSpectralEmbedding

    if isinstance(embedding, str) and embedding == "spectral":
        embedding = LandmarkSpectralEmbedding(random_state=random_state)
    if device is not None:
        embedding = spectral_on_device(embedding, device)
    other_k = n_clusters != "auto" and getattr(embedding, "n_components", None) not in (None, n_clusters)
    if not isinstance(embedding, LandmarkSpectralEmbedding) or other_k:
        return _named_embedding(embedding, n_clusters, random_state)  # (k-means of k on other components too)
    recipe = {k: v for k, v in embedding.get_params(deep=False).items() if k not in ("n_components", "random_state")}
    if embedding.random_state not in (None, random_state):
        _warn(
            f"the embedding's random_state={embedding.random_state!r} is replaced by cluster_file's "
            f"random_state={random_state!r}, which seeds the whole clustering (landmarks, graph and k-means)",
            UserWarning,
        )
    return LandmarkSpectralClustering(
        n_clusters,
        n_init=n_init,
        init_size=init_size,
        tol=tol,
        assign_labels=assign_labels,
        random_state=random_state,
        **recipe,
    )


def _seeded(model, fit, engine, n_clusters, *, n_init, init_size, tol, random_state):
    """``(clusterer or None, fitted embedding or None, k-means, Seeding)`` after the fit: a clusterer's own
    (its fit seeded k-means); for an embedding (or raw features), k-means seeded here on a uniform sample."""
    from ..cluster.landmark_spectral_clustering import LandmarkSpectralClustering, kmeans_on_embedding
    from ..maps.landmark_spectral import user_searcher

    if isinstance(model, LandmarkSpectralClustering):  # (its assignment: k-means', or the landmarks' vote)
        return (model, *model.assigner(), fit.seeding)
    if n_clusters > engine.n_rows:  # (the clusterer's own fit says the same)
        raise ValueError(f"n_clusters={n_clusters} must be <= n_samples={engine.n_rows}")
    km, rng = kmeans_on_embedding(
        n_clusters,
        n_init=n_init,
        random_state=random_state,
        init_size=init_size,
        tol=tol,
        search=user_searcher(getattr(model, "search", None)),
    )
    km._validate_params()
    return None, model, km, seed_on_rows(engine, km, rng, embed_sample, model)


def _keeps_graph(keep_graph, engine, model, init_size=None) -> bool:
    """Whether this run keeps each row's graph from the fit pass (``engine.map(..., keep=True)``), when
    ``keep_graph`` asks for it and it can serve.

    ``"auto"``: for the landmark spectral clustering, when some rows are outside k-means' sample (else there is
    no pass to serve), its searches are on the host (a device searcher assigns a block where it searches it) and
    the engine has room (:meth:`Engine.can_keep`: free disk locally, a quarter of the
    workers' memory on Dask, nothing on Dask without a client).
    """
    from ..cluster.streaming_kmeans import DEFAULT_INIT_SIZE
    from ..maps.landmark_graph import searches_on_device
    from .fit import fit_strategy
    from .spilled_blocks import remove_stale_graphs

    remove_stale_graphs()  # (a killed run's folder goes whatever this run keeps, or whether it keeps one)
    if keep_graph is False:
        return False
    serves = (
        model is not None
        and not isinstance(model, str)
        and fit_strategy(model) == "embedding_then_sample"  # (the landmark spectral clustering)
        and engine.can_keep(0)
    )
    if not serves:
        if keep_graph is True:
            raise ValueError(
                "keep_graph=True keeps the spectral embedding's graph where the engine can keep it (a file, an "
                f"array, or Dask with a client); this run has {type(model).__name__} on {engine.describe()}"
            )
        return False
    if keep_graph == "auto" and searches_on_device(getattr(model, "search", None)):
        return False  # (the device searches a block again, and assigns it there, faster than the host reads its graph)
    if keep_graph == "auto" and engine.n_rows is not None:
        if engine.n_rows <= (init_size or DEFAULT_INIT_SIZE):  # every row in k-means' sample: no pass to serve
            return False
        graph_bytes = engine.n_rows * int(getattr(model, "n_neighbors", 10)) * 12  # (at most)
        return bool(engine.can_keep(graph_bytes))
    return True


def _check_cluster_args(n_clusters, standardize, embedding, assign_labels="auto"):
    """Refuse argument combinations before anything is read (each value alone: :mod:`.params`); returns
    ``standardize`` resolved."""
    from ..maps.landmark_spectral import LandmarkSpectralEmbedding

    spectral = (isinstance(embedding, str) and embedding == "spectral") or isinstance(
        embedding, LandmarkSpectralEmbedding
    )
    if assign_labels != "auto" and not spectral:
        raise ValueError(
            f"assign_labels={assign_labels!r} chooses the spectral clustering's labeling: it applies to "
            f"embedding='spectral' (the default) or a LandmarkSpectralEmbedding, not {embedding!r}"
        )
    if isinstance(n_clusters, str) and n_clusters == "auto":
        if not spectral:
            raise ValueError(
                "n_clusters='auto' chooses k from the landmark spectral embedding's graph: use embedding='spectral' "
                f"(the default) or a LandmarkSpectralEmbedding, not {embedding!r}"
            )
    if standardize is None:  # (one rule for the named methods and raw k-means: each measures distances)
        standardize = "auto" if embedding is None or isinstance(embedding, str) else False
    return standardize


def _named_embedding(embedding, n_clusters, random_state):
    """The estimator behind ``embedding="spectral"`` / ``"kjl"``; anything else as given."""
    from ..maps.kernel_jl import KernelJL
    from ..maps.landmark_spectral import LandmarkSpectralEmbedding

    if not isinstance(embedding, str):
        return embedding
    if embedding == "kjl":
        return KernelJL(n_components=10 * n_clusters, centered=True, random_state=random_state)
    if embedding == "spectral":  # ("auto": one component until k is chosen from the fit's statistics)
        k = 1 if n_clusters == "auto" else n_clusters
        return LandmarkSpectralEmbedding(n_components=k, random_state=random_state)
    raise ValueError(f"embedding must be 'spectral', 'kjl', None or an estimator, got {embedding!r}")


def _fit_embedding(
    engine, embedding, standardize, fit_rows, random_state, landmark_target, keep_graph=False, sample=None
):
    """Standardize (one pass; ``sample``: rows already read, to foresee it) and fit the embedding on the engine:
    ``(engine, scaler, fit)``."""
    scaler = fit = None
    if standardize:
        engine, scaler = standardize_source(engine, when=standardize, sample=sample)
    if embedding is not None:
        fit = fit_source(
            embedding,
            engine,
            fit_rows=fit_rows,
            random_state=random_state,
            landmark_target=landmark_target,
            keep_graph=keep_graph,
        )
    elif landmark_target is not None:
        raise ValueError("landmark_target needs a landmark embedding; embedding=None clusters the raw features")
    elif engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    return engine, scaler, fit


def _lloyd_passes(engine, embedding, km, lloyd_passes, graphs=None):
    """Up to ``lloyd_passes`` exact Lloyd passes over every row; stops when the centres settle."""
    passes = 0
    for passes in range(1, lloyd_passes + 1):
        source, state = _assignment_source(engine, embedding, km.cluster_centers_, graphs)
        sums, counts, _ = source.reduce(stats_block, sum_parts, state=state, desc=f"Lloyd pass {passes}")
        if km.converged(km.update(sums, counts)):
            break
    return passes


class _MissingRows:
    """Which rows of a text file hold a missing cell, in row order, ``take(n)`` at a time: the source read
    again beside the assignment pass (``missing="drop"``: those rows are labelled -1)."""

    def __init__(self, source):
        self.blocks = (np.isnan(X).any(axis=1) for X, _ in source.iter_blocks())
        self.held = np.zeros(0, dtype=bool)

    def take(self, n):
        while self.held.size < n:
            self.held = np.concatenate([self.held, next(self.blocks)])
        out, self.held = self.held[:n], self.held[n:]
        return out


class _Assignment:
    """Collects the assignment pass: labels to the sink, inertia, one more Lloyd step's sums, pair counts."""

    def __init__(self, sink, pairs, drop=None):
        self.sink, self.pairs, self.drop = sink, pairs, drop
        self.inertia, self.rows, self.dropped = 0.0, 0, 0
        self.sums = self.counts = None

    def consume(self, out, y):
        labels, inertia, sums, counts = out
        if self.drop is not None:  # (rows with a missing cell: -1, out of their cluster's count)
            mask = self.drop.take(labels.shape[0])
            if mask.any():
                if counts is not None:
                    counts = counts - np.bincount(labels[mask], minlength=counts.size)
                labels = np.array(labels, dtype=np.int64)
                labels[mask] = -1
                self.dropped += int(mask.sum())
        self.sink.write(labels.astype(np.int64, copy=False))
        self.inertia += inertia
        self.rows += labels.shape[0]
        if sums is not None:
            self.sums = sums if self.sums is None else self.sums + sums
            self.counts = counts if self.counts is None else self.counts + counts
        if self.pairs is not None and y is not None:
            self.pairs.add(y, labels)

    def run(self, engine, embedding, centers, in_memory=None, graphs=None, settled=None):
        """Assign every row (``in_memory``: the whole data's embedding and labels, else one streamed pass).

        ``graphs``: each row's graph kept by the fit pass (embedded without a second search); ``settled``: see
        :func:`_assignment_source`.  Returns what the sink wrote; a failure aborts the sink (no partial output
        file).
        """
        try:
            if in_memory is not None:
                self.assign_in_memory(*in_memory, centers)
            else:
                source, state = _assignment_source(engine, embedding, centers, graphs, settled)
                source.foreach(assign_block, self.consume, state=state, desc="assign clusters")
            return self.sink.close()
        except BaseException:
            self.sink.abort()
            raise

    def assign_in_memory(self, sample, y_rows, centers):
        """Every row is in the k-means sample: assign its embedding in slices, no second embedding pass."""
        N = sample.shape[0]
        step = max(1, min(N, 65536))
        for start in range(0, N, step):
            stop = min(N, start + step)
            self.consume(
                assign_block(sample[start:stop], assignment_state(None, centers)),
                None if y_rows is None else y_rows[start:stop],
            )

    def center_shift(self, centers):
        """How far one more Lloyd step would move the centres, relative to their size."""
        nxt = np.where(self.counts[:, None] > 0, self.sums / np.maximum(self.counts, 1)[:, None], centers)
        return float(((nxt - centers) ** 2).sum() / max(float((centers**2).sum()), np.finfo(float).tiny))


def _warn_empty_clusters(sizes, n_clusters):
    from ..cluster.landmark_labels import empty_cluster_message

    message = empty_cluster_message(sizes, n_clusters)
    if message:
        _warn(message, EmptyClusterWarning)
