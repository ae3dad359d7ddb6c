"""Fitting an estimator on a source without loading it: one strategy per kind of estimator.

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

import numbers
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._typing import DataLike, RandomStateLike
from ..kernels.bandwidth import bandwidth_of_rows
from ..kernels.kernel_functions import KERNELS, Kernel, ShiftInvariantKernel
from ..kernels.selection import make_kernel
from ..maps.landmark_selection import rows_in_order
from ..utils.row_source import gather_mapped, gather_mapped_pieces
from ..utils.validation import check_input, check_random_state, dense_if_needed, derive_seed
from .engine import open_engine, record_feature_names
from .params import driver_params

#: rows an estimator without a streaming or landmark fit is fitted on (all rows when fewer)
FIT_ROWS = 20_000


# -- bandwidths -------------------------------------------------------------------
def _needs_data(kernel, bandwidth) -> bool:
    if not isinstance(bandwidth, str) or isinstance(kernel, Kernel) or not isinstance(kernel, str):
        return False
    cls = KERNELS.get(kernel.lower())
    return cls is not None and issubclass(cls, ShiftInvariantKernel)


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
    h = bandwidth_of_rows(bandwidth, engine, random_state=seed)
    return make_kernel(kernel, h, kernel_params, None, random_state=seed)


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
    seeding : Seeding or None
        A clusterer fitted by ``"embedding_then_sample"``: the rows its k-means was seeded on (their indices,
        embedding and labels) and what that cost, for the driver's assignment pass (not in :meth:`to_dict`).
    graphs : row source or None
        With ``keep_graph``: each row's landmark graph kept by the engine (``engine.map(..., keep=True)``), for
        later passes to read instead of searching again; the caller calls its ``release()``.
    """

    estimator: object
    strategy: str
    n_rows: int
    fit_rows: int
    n_landmarks: int | None = None
    bandwidth: float | None = None
    seconds: float = 0.0
    landmark_choice: Any = None
    seeding: Any = None
    graphs: Any = None

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
#: - ``"landmarks_then_pass"``: the estimator's own ``fit_rows(engine)``, the method its in-memory ``fit``
#:   runs (landmark rows by index, then one pass summing block statistics: the landmark spectral embedding);
#: - ``"embedding_then_sample"``: the same for the clusterer (such an embedding, then k-means on a uniform
#:   sample of embedded rows: :class:`~kernelsketch.cluster.LandmarkSpectralClustering`), labelled by the driver.
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
    return rows_in_order(lambda uniq: engine.gather(uniq)[0], idx)


def _fit_landmarks(est, engine, fit_rows, also=None):
    """Fit a landmark estimator through its two seams, the landmark rows gathered by index.

    The same steps as its in-memory ``fit`` (:mod:`kernelsketch.maps.landmark_estimator`):
    the order of draws from ``random_state`` (:meth:`draw_seeds`), the kernel resolved on
    all rows, ``_draw_landmarks`` with the estimator's own selector, ``_fit_from_landmarks``.
    ``also``: more row indices to bring back in the same gather (returned second).
    """
    from ..maps.landmarks import given_landmarks, resolve_n_landmarks

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
    from ..maps.landmarks import sample_row_indices

    est._validate_params()
    if engine.n_rows is None:
        from ..maps.landmarks import resolve_n_landmarks

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


class _Counted:
    """A row source whose gathered rows are counted (``FitResult.fit_rows``); everything else is the source's."""

    def __init__(self, rows):
        self.rows, self.n_read = rows, 0

    def __getattr__(self, name):
        return getattr(self.rows, name)

    def gather(self, indices):
        X, y = self.rows.gather(indices)
        self.n_read += X.shape[0]
        return X, y

    def gather_mapped(self, indices, fn, state=None, rowwise=False):
        out = gather_mapped(self.rows, indices, fn, state, rowwise=rowwise)
        self.n_read += len(indices)
        return out

    def gather_mapped_pieces(self, pieces, fn, state=None):
        out = gather_mapped_pieces(self.rows, pieces, fn, state)
        self.n_read += sum(len(piece) for piece in pieces)
        return out


def _fit_rows(est, engine, keep_graph, strategy):
    """A landmark spectral estimator's own :meth:`fit_rows` on the engine (the method its in-memory ``fit``
    runs): the embedding (``"landmarks_then_pass"``) or the clustering up to its seeding
    (``"embedding_then_sample"``, the :class:`~kernelsketch.cluster.seeding.Seeding` in ``res.seeding``)."""
    rows = _Counted(engine)
    out = est.fit_rows(rows, keep_graph=keep_graph)
    embedding = est.embedding_ if strategy == "embedding_then_sample" else est
    res = FitResult(
        est,
        strategy,
        engine.n_rows,
        rows.n_read,
        int(embedding.landmarks_.shape[0]),
        embedding.bandwidth_,
    )
    if strategy == "embedding_then_sample":
        res.seeding, res.graphs = out, out.graphs
    else:
        res.graphs = out
    return res


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
    from ..maps.landmarks import sample_row_indices

    if engine.n_rows is None:
        X, _ = engine.reservoir(fit_rows, seed, desc="sample rows")
    else:
        X, _ = engine.gather(sample_row_indices(engine.n_rows, fit_rows, seed))
    est.fit(dense_if_needed(est, X))
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
    from ..maps.landmark_count import choose_n_landmarks
    from ..maps.landmarks import AUTO_MAX_LANDMARKS, sample_row_indices

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


@driver_params
def fit_source(
    estimator: Any,
    data: DataLike,
    *,
    fit_rows: int = FIT_ROWS,
    random_state: RandomStateLike = 0,
    client: Any = None,
    block_rows: int | None = None,
    landmark_target: float | None = None,
    keep_graph: bool = False,
    n_jobs: int | None = None,
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
    keep_graph : bool, default=False
        Keep each row's landmark graph from the fit pass (``engine.map(..., keep=True)``: a temporary folder on
        a local engine, the workers' memory on Dask), returned as ``res.graphs``, so that a later pass needs no
        second nearest-landmark search; the caller calls ``res.graphs.release()``.  For the landmark spectral
        estimators; :func:`cluster_file` uses it for its assignment pass.
    n_jobs : int or None, default=None
        Threads for BLAS, OpenMP and the compiled loops during the call (-1: every usable core, 1: one core);
        None: the process's current limits.

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
    engine = open_engine(data, client=client, block_rows=block_rows, **read_options)
    t0 = time.perf_counter()
    strategy = fit_strategy(estimator)
    own_fit = strategy in ("landmarks_then_pass", "embedding_then_sample")
    if keep_graph and not own_fit:
        raise ValueError(
            "keep_graph keeps the graph of a landmark spectral embedding's fit pass; got "
            f"{type(estimator).__name__} (fitted by '{strategy}')"
        )
    choice = None
    if landmark_target is not None:
        choice = choose_landmarks(estimator, engine, target=landmark_target, random_state=random_state)
        estimator.set_params(n_landmarks=choice.n_landmarks)
    if own_fit:
        res = _fit_rows(estimator, engine, keep_graph, strategy)
    elif strategy == "landmarks":
        res, _ = _fit_landmarks(estimator, engine, fit_rows)
    elif strategy == "landmarks_then_sample":
        res = _fit_kernel_kmeans(estimator, engine, fit_rows)
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
