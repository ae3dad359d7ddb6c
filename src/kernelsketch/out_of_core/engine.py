"""Engines: where the driver's row blocks come from (this process, or Dask), and the file's column names.

An engine answers the driver's few questions -- how many rows, these rows by index, a value
reduced over every block, every block mapped in order, a stream of ``partial_fit`` -- so that
the same driver runs on :class:`LocalEngine` and on
:class:`kernelsketch.distributed.engine.DaskEngine` with the same answers.  :class:`Engine`
is that contract, typed.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from .._lazy import backend
from ..io import RowReservoir, open_matrix
from ..io.source import ArraySource, MatrixSource
from ..utils.dispatch import is_dask_array
from ..utils.progress import progress
from ..utils.row_source import BlockFolds
from ..utils.threads import iter_prefetched
from ..utils.validation import dense_if_needed, label_like_names
from ..utils.warnings import warn as _warn


@runtime_checkable
class Engine(Protocol):
    """What the driver asks of an engine; :class:`LocalEngine` and ``DaskEngine`` both answer it.

    Every pass of the driver is one of the methods below, so an engine that
    implements them (and the attributes) runs every call of :mod:`kernelsketch.out_of_core`
    -- fit, transform, embed, cluster -- with the same answers for the same seed.
    ``tests/test_out_of_core.py`` checks that both engines satisfy this Protocol.
    """

    #: ``"local"`` or ``"dask"``
    name: str
    #: rows of the source, None until a pass has counted them (a text file)
    n_rows: int | None
    n_features: int
    has_labels: bool
    sparse: bool
    dtype: np.dtype
    feature_names: Any
    #: the files this engine reads (an output may never be one of them)
    input_paths: list
    stats: dict
    #: the :class:`~kernelsketch.io.source.MatrixSource` read in this process, or None (Dask's chunks): a text
    #: file's missing cells are its business (``na_values``, ``missing_counts``, its raw blocks for ``"drop"``)
    source: Any

    def describe(self) -> str:
        """One line: what is read, and where."""
        ...

    def set_preprocess(self, fn: Callable) -> None:
        """Apply ``fn`` to every block read from now on, after any function set before (codes, scaling, order)."""
        ...

    def gather(self, indices) -> tuple[Any, Any]:
        """Rows at sorted distinct ``indices`` (landmarks, samples): ``(X, y)``."""
        ...

    def reservoir(self, m: int, seed: Any, desc: str = "sample") -> tuple[Any, Any]:
        """A seeded uniform sample of ``m`` rows, ``(X, y)``, in one pass; the pass counts the rows.

        The driver asks for it only while ``n_rows`` is None (a text file); an engine that always
        knows its rows may answer it by :meth:`gather` of a seeded draw.
        """
        ...

    def reduce(self, fn: Callable, merge: Callable, state: Any = None, desc: str = "pass") -> Any:
        """``merge([fn(X_block, state) for every block])``: a left fold in block order (associative merges)."""
        ...

    def stream_fit(self, template: Any, desc: str = "partial_fit") -> Any:
        """A copy of ``template`` after ``partial_fit`` on every block (merged sketches on Dask)."""
        ...

    def foreach(self, fn: Callable, consume: Callable, state: Any = None, desc: str = "transform") -> None:
        """``consume(fn(X_block, state), y_block)`` for every block, in row order."""
        ...

    def map(self, fn: Callable, state: Any = None, desc: str = "map", keep: bool = False) -> Any:
        """A source over the same rows whose blocks are ``fn(X_block, state)`` (labels unchanged), for
        :meth:`reduce` and :meth:`foreach`; ``keep``: each computed once, by the first pass over it (Dask: at once,
        kept on the workers; locally: written to a :class:`~kernelsketch.out_of_core.spilled_blocks.SpilledBlocks`
        as that pass goes), and read back by later passes until its ``release()``
        (:mod:`kernelsketch.utils.row_source`)."""
        ...

    def release(self) -> None:
        """Drop what this source kept (nothing, for an engine that keeps nothing)."""
        ...

    def can_keep(self, nbytes: int) -> bool:
        """Whether ``nbytes`` of kept per-block results fit where this engine keeps them (:meth:`map`)."""
        ...

    def worker_peak_mib(self) -> float | None:
        """The largest peak resident set of the engine's worker processes so far, in MiB; None when it has none."""
        ...


# -- engines ----------------------------------------------------------------------
class LocalEngine(BlockFolds):
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
        """Apply ``fn`` to every block this engine reads from now on, after any function set before.

        (E.g. a fitted scaler's ``transform`` after missing-value codes were replaced.)
        """
        before = self.preprocess
        self.preprocess = fn if before is None else (lambda X, before=before, fn=fn: fn(before(X)))

    def describe(self):
        rows = f"{self.n_rows} rows" if self.n_rows is not None else "rows not counted yet"
        return f"{self.source.path} ({self.source.format}, {self.n_features} features, {rows})"

    def _blocks(self, desc):
        self.stats["passes"] += 1
        bar = progress(total=self.n_rows, desc=desc, unit="rows")
        n = 0
        blocks = iter_prefetched(self._read_blocks())  # (each block read, checked and preprocessed on a thread
        try:  # while the one before is worked on)
            for X, y in blocks:
                yield X, y
                n += X.shape[0]
                bar.update(X.shape[0])
        except BaseException:  # (an error, Ctrl-C, or a caller that stopped early: no "done" line)
            getattr(bar, "abort", bar.close)()
            raise
        finally:
            blocks.close()  # (the block being read waited for, the source's reader closed)
        bar.close()
        if n == 0:
            raise ValueError(f"{self.source.path}: no data rows")
        self.n_rows = n

    def _read_blocks(self):
        for X, y in self.source.iter_blocks(self.block_rows):
            yield (X if self.preprocess is None else self.preprocess(X)), y

    def gather(self, indices):
        """Rows at sorted distinct ``indices``: ``(X, y)``."""
        X, y = self.source.take(np.asarray(indices, dtype=np.int64))
        return (X if self.preprocess is None else self.preprocess(X)), y

    def gather_mapped_pieces(self, pieces, fn, state=None):
        """``[fn(X, state) for X of each piece]`` of consecutive pieces of sorted distinct indices
        (:func:`~kernelsketch.utils.row_source.gather_mapped_pieces`): each piece by :meth:`gather` where the source
        reads rows at random (a memory map, an array), else one pass that collects each piece's rows as it reads
        them (a text file's ``take`` is a pass: one per piece would read the file again and again)."""
        if getattr(self.source, "random_access", False):  # (the next piece read while this one's fn runs)
            return [fn(X, state) for X, _ in iter_prefetched(map(self.gather, pieces))]
        out, held, k, start = [], [], 0, 0
        pieces = [np.asarray(piece, dtype=np.int64) for piece in pieces]
        if any(piece.size == 0 for piece in pieces):
            raise ValueError("gather_mapped_pieces: every piece needs at least one row")
        for X, _ in self._blocks("rows by index"):
            stop = start + X.shape[0]
            while k < len(pieces):
                piece = pieces[k]
                lo, hi = np.searchsorted(piece, [start, stop])
                if hi > lo:
                    held.append(X[piece[lo:hi] - start])
                if hi < piece.size:  # (the piece goes on in the next block)
                    break
                out.append(fn(sp.vstack(held, format="csr") if sp.issparse(held[0]) else np.concatenate(held), state))
                held, k = [], k + 1
            start = stop
            if k == len(pieces):
                break
        if k != len(pieces):
            raise ValueError(f"{self.source.path}: row index {int(pieces[k][-1])} is out of range ({start} rows)")
        return out

    def reservoir(self, m, seed, desc="sample"):
        """A seeded uniform sample of ``m`` rows in one pass: ``(X, y)``; counts the rows."""
        res = RowReservoir(m, seed=seed)
        for X, y in self._blocks(desc):
            res.add(X, y)
        X, y, _ = res.result()
        return X, y

    def stream_fit(self, template, desc="partial_fit"):
        """``partial_fit`` of (a copy of) ``template`` on every block in order."""
        est = copy.deepcopy(template)
        for X, _ in self._blocks(desc):
            est.partial_fit(dense_if_needed(est, X))
        return est

    def _store(self):
        """Kept blocks go to a temporary folder (pages in the page cache, not in this process's memory)."""
        from .spilled_blocks import SpilledBlocks

        return SpilledBlocks()

    def can_keep(self, nbytes):
        """Whether the temporary directory has room for ``nbytes`` of kept blocks, twice over."""
        import shutil
        import tempfile

        return shutil.disk_usage(tempfile.gettempdir()).free >= 2 * nbytes

    def worker_peak_mib(self):
        """None: the blocks are read and worked on in this process (its own peak is the operating system's to tell)."""
        return None


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
    elif unknown := sorted(set(read_options) - {"columns", "label_column", "y"}):
        raise TypeError(
            f"unexpected keyword argument(s) {', '.join(unknown)} for in-memory data (a file's read options, and "
            "columns, label_column and y for a DataFrame or an array, are the only other keywords taken)"
        )
    elif _is_data_frame(data):
        source = _frame_source(
            data, read_options.get("columns"), read_options.get("label_column"), read_options.get("y")
        )
    else:
        if read_options.get("label_column") is not None or read_options.get("columns") is not None:
            raise TypeError(
                "columns / label_column select columns of a file or a DataFrame; for arrays, pass X[:, cols] and y"
            )
        source = ArraySource(data, read_options.get("y"))
    return LocalEngine(source, block_rows=block_rows)


def _is_data_frame(data) -> bool:
    return hasattr(data, "columns") and hasattr(data, "iloc") and getattr(data, "ndim", 2) == 2


def _frame_source(frame, columns=None, label_column=None, y=None):
    """A DataFrame as a source that keeps its column names (a file with a header does too): ``columns`` and
    ``label_column`` select by name, as for a file."""
    names = list(frame.columns)
    if label_column is not None and label_column not in names:
        raise ValueError(f"label_column {label_column!r} is not a column of the DataFrame ({names[:10]}...)")
    if label_column is not None and y is not None:
        raise ValueError("give label_column= or y=, not both")
    features = [c for c in names if c != label_column] if columns is None else list(columns)
    missing = [c for c in features if c not in names]
    if missing:
        raise ValueError(f"columns {missing} are not columns of the DataFrame")
    if label_column is not None and label_column in features:
        raise ValueError(f"the label column {label_column!r} is also selected as a feature")
    labels = frame[label_column].to_numpy() if label_column is not None else y
    return ArraySource(frame[features], labels, name="<DataFrame>", feature_names=features)


def label_like_columns(engine) -> list:
    """The engine's feature columns named like the class labels (:data:`~kernelsketch.utils.validation.
    LABEL_NAMES`, :func:`~kernelsketch.utils.validation.label_like_names`)."""
    return label_like_names(getattr(engine, "feature_names", None) or [])


def refuse_label_like_columns(engine, read_options):
    """``ValueError`` when a feature column is named like the labels and neither ``label_column=`` nor
    ``columns=`` says what to do with it (the command line's rule, for the library's callers)."""
    if read_options.get("label_column") is not None or read_options.get("columns") is not None:
        return
    suspects = label_like_columns(engine)
    if suspects:
        names = [str(n) for n in engine.feature_names]
        raise ValueError(
            f"column {suspects[0]!r} looks like the class labels; pass label_column={suspects[0]!r} to leave it "
            f"out, or columns={names} to keep it as a feature (e.g. coordinates x, y)"
        )


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
    header, or the model knows no names), else the file's columns, which were rearranged (and any the
    model does not know left out: a label column, an id; the engine's ``n_features`` becomes the model's).
    When only one side has names (a model fitted on a headerless file applied to a file with a header, or the
    reverse), the columns are taken in their order with a ``UserWarning`` saying so, as scikit-learn does for
    arrays and DataFrames.

    Raises
    ------
    ValueError
        The file lacks a column the model was fitted on.
    """
    fitted = getattr(estimator, "feature_names_in_", None)
    names = _file_feature_names(engine)
    if fitted is None and names is not None and getattr(estimator, "n_features_in_", None) is not None:
        _warn(
            f"the model was fitted without column names (a file without a header, or an array): the input's columns "
            f"{list(names)[:8]} are taken in their order, which cannot be checked against the model's",
            UserWarning,
        )
    if fitted is not None and names is None:
        _warn(
            f"the model was fitted on columns named {[str(n) for n in fitted][:8]}, but the input has no column names "
            "(a file without a header, or an array): its columns are taken in their order, which cannot be checked "
            "(give it a header to have them matched by name)",
            UserWarning,
        )
    if fitted is None or names is None:
        return None
    fitted, names = [str(n) for n in fitted], list(names)
    if names == fitted:
        return None
    missing = [n for n in fitted if n not in names]
    if missing:
        raise ValueError(
            f"the input lacks columns the model was fitted on: {missing} (the input has {names[:12]}"
            f"{' ...' if len(names) > 12 else ''})"
        )
    order = np.asarray([names.index(n) for n in fitted])  # (columns the model does not know are left out)

    def reorder(X, order=order):
        return X[:, order]

    engine.set_preprocess(reorder)  # after what the engine already applies
    engine.n_features = len(fitted)
    return names
