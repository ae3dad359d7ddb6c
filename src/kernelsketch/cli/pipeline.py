"""Fit an estimator on a data file and transform the file block by block.

Fitting never loads the whole file: batch methods fit on a seeded uniform
sample of ``fit_rows`` rows drawn in one pass (:class:`RowReservoir`; all
rows when the file has fewer), streaming methods (``rf-kpca``, ``rnca``, ``skpca``) call
``partial_fit`` on every block.  Transforming reads the file again block by
block and hands each embedded block to a writer, so memory is bounded by
the sample, one block and the model, whatever the file size.
"""

from __future__ import annotations

import importlib
import time

import numpy as np
import scipy.sparse as sp

from ..io import RowReservoir
from ..io.source import default_block_rows
from .ui import UsageError

#: CLI method name -> estimator class exported by kernelsketch
METHODS = {
    "kjl": "KernelJL",
    "nystroem": "Nystroem",
    "kpca": "KernelPCA",
    "subsample-kpca": "SubsampleKPCA",
    "rff": "RandomFourierFeatures",
    "rf-kpca": "RFKPCA",
    "rnca": "RNCA",
    "skpca": "StreamingKPCA",
}
STREAMING = ("rf-kpca", "rnca", "skpca")
#: -d sets the first of these parameters the estimator has; -n the first remaining one
_DIM_PARAMS = ("n_components", "n_random_features")
_SIZE_PARAMS = ("n_landmarks", "n_random_features", "sketch_size")
#: rows of the plot sample kept while transforming
PLOT_ROWS = 20000


def estimator_class(name):
    import kernelsketch

    try:
        return getattr(kernelsketch, name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"{name} is not available in this installation ({exc})") from exc


def build_estimator(method, *, kernel=None, bandwidth=None, dim=None, landmarks=None, seed=0, **extra):
    """Instantiate the estimator of ``method`` with the options the user gave."""
    cls = estimator_class(METHODS[method]) if method in METHODS else estimator_class(method)
    names = set(cls().get_params(deep=False))
    params = {}
    if kernel is not None:
        params["kernel"] = kernel
    if bandwidth is not None:
        params["bandwidth"] = bandwidth
    if "random_state" in names:
        params["random_state"] = seed
    used = None
    if dim is not None:
        used = next((p for p in _DIM_PARAMS if p in names), None)
        if used is None:
            raise UsageError(f"-d/--dim does not apply to --method {method}")
        params[used] = dim
    if landmarks is not None:
        size = next((p for p in _SIZE_PARAMS if p in names and p != used), None)
        if size is None:
            raise UsageError(f"-n/--landmarks does not apply to --method {method}")
        params[size] = landmarks
    for k, v in extra.items():
        if v is not None and k in names:
            params[k] = v
    bad = sorted(set(params) - names)
    if bad:
        raise UsageError(f"options {bad} do not apply to --method {method}")
    return cls(**params)


def accepts_sparse(est) -> bool:
    try:
        return bool(est.__sklearn_tags__().input_tags.sparse)
    except AttributeError:
        return False


def _prepare(est, X):
    """Densify CSR blocks for estimators that take dense input only."""
    if sp.issparse(X) and not accepts_sparse(est):
        return X.toarray()
    return X


def fit_on_source(est, source, *, method, fit_rows, seed, ui, block_rows=None):
    """Fit ``est`` on ``source``; returns a dict of what was done.

    The dict holds ``n_rows`` (rows in the file), ``fit_rows`` (rows fitted on),
    ``seconds`` and, when the sample was the whole file, ``data``: the rows
    (and labels) already in memory, so the caller need not read the file again.
    """
    t0 = time.perf_counter()
    streaming = method in STREAMING and hasattr(est, "partial_fit")
    bar = ui.progress(total=source.n_rows, desc=f"fit {method}" + (" (partial_fit)" if streaming else " (sample)"))
    info = {"data": None}
    with bar:
        if streaming:
            n = 0
            for X, _ in source.iter_blocks(block_rows):
                est.partial_fit(_prepare(est, X))
                n += X.shape[0]
                bar.update(X.shape[0])
            info.update(n_rows=n, fit_rows=n)
        else:
            res = RowReservoir(fit_rows, seed=np.random.SeedSequence(seed).generate_state(1)[0])
            for X, y in source.iter_blocks(block_rows):
                res.add(X, y)
                bar.update(X.shape[0])
            Xs, ys, _ = res.result()
            bar.set_description(f"fit {method} on {Xs.shape[0]} rows")
            est.fit(_prepare(est, Xs))
            info.update(n_rows=res.n_seen, fit_rows=Xs.shape[0])
            if res.n_seen <= fit_rows:
                info["data"] = (Xs, ys)
    info["seconds"] = time.perf_counter() - t0
    return info


def _blocks(source, data, block_rows):
    if data is None:
        yield from source.iter_blocks(block_rows)
        return
    X, y = data
    step = block_rows or default_block_rows(X.shape[1], 16)
    for s in range(0, X.shape[0], step):
        yield X[s:s + step], (None if y is None else y[s:s + step])


def transform_source(est, source, *, make_writer=None, ui, data=None, block_rows=None, keep=False, plot=False, seed=0,
                     desc="transform"):
    """Embed every block of ``source``; write it and/or keep it.

    ``make_writer`` (a :class:`LazyWriter`) opens the output when the first
    block gives its width and dtype; the output is committed after the last
    block and dropped on any error or interrupt, leaving no partial file.

    Returns ``(n_rows, Z or None, labels or None, plot sample or None)`` where
    ``Z`` (all rows) is returned only with ``keep`` and the plot sample is
    ``(Z_sample, y_sample)`` of at most :data:`PLOT_ROWS` rows.
    """
    kept, ys = [], []
    sample = RowReservoir(PLOT_ROWS, seed=seed) if plot else None
    n = 0
    writer = None
    try:
        with ui.progress(total=source.n_rows, desc=desc) as bar:
            n = _transform_loop(est, source, data, block_rows, make_writer, kept, ys, sample, keep, bar)
    except BaseException:
        writer = getattr(make_writer, "opened", None)
        if writer is not None:
            writer.abort()
        raise
    writer = getattr(make_writer, "opened", None)
    if writer is not None:
        writer.close()
    Z_all = np.concatenate(kept) if keep and kept else None
    y_all = np.concatenate(ys) if ys else None
    plot_sample = sample.result()[:2] if sample is not None and sample.n_seen else None
    return n, Z_all, y_all, plot_sample


def _transform_loop(est, source, data, block_rows, make_writer, kept, ys, sample, keep, bar):
    n = 0
    for X, y in _blocks(source, data, block_rows):
        Z = np.asarray(est.transform(_prepare(est, X)))
        if make_writer is not None:
            if make_writer.opened is None:
                make_writer.open(Z.shape[1], Z.dtype)
            make_writer.opened.write(Z)
        if keep:
            kept.append(Z)
        if y is not None:
            ys.append(np.asarray(y))
        if sample is not None:
            sample.add(Z[:, :2], y)
        n += X.shape[0]
        bar.update(X.shape[0])
    return n


class LazyWriter:
    """Opens a :class:`~kernelsketch.io.BlockWriter` once the output width and dtype are known."""

    def __init__(self, path, *, force, protect, column_prefix="c"):
        from ..io import check_output_path

        self.path = check_output_path(path, force=force, protect=protect)  # fail before any work
        self.force, self.protect, self.prefix = force, protect, column_prefix
        self.opened = None

    def open(self, n_columns, dtype):
        from ..io import open_writer

        self.opened = open_writer(self.path, n_columns, dtype, force=self.force, protect=self.protect,
                                  column_names=[f"{self.prefix}{j}" for j in range(n_columns)])
        return self.opened


def import_optional(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
