"""The row-block protocol every reader implements, and what they share."""

from __future__ import annotations

import numbers
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..utils.chunking import get_chunk_n_rows

__all__ = ["ArraySource", "MatrixSource", "default_block_rows", "resolve_columns"]

# Largest block a reader yields by default, whatever the budget.
_MAX_BLOCK_ROWS = 65536


def default_block_rows(n_features: int, bytes_per_value: int = 64) -> int:
    """Rows per block under the working-memory budget.

    ``bytes_per_value`` covers the text of a cell, its parsed float64 and the
    caller's temporaries (a text cell of ~20 bytes read as a Python ``str``
    costs ~70 bytes before parsing); 64 bytes per value is a safe default.
    """
    return get_chunk_n_rows(max(int(n_features), 1) * bytes_per_value, _MAX_BLOCK_ROWS)


def resolve_columns(path, names, n_cols, columns, label_column):
    """Turn ``columns`` / ``label_column`` (names or 0-based indices) into indices.

    Returns ``(feature_indices, label_index)``; by default every column but the
    label is a feature.
    """

    def one(spec, what):
        if isinstance(spec, str) and names is not None and spec in names:
            return names.index(spec)
        if isinstance(spec, str):
            try:
                spec = int(spec)
            except ValueError:
                known = (
                    f"; columns are {names}" if names is not None else " (the file has no header: use 0-based indices)"
                )
                raise ValueError(f"{path}: no {what} named {spec!r}{known}") from None
        if not isinstance(spec, (numbers.Integral, np.integer)) or isinstance(spec, bool):
            raise TypeError(f"{what} must be a column name or a 0-based index, got {spec!r}")
        idx = int(spec)
        if not -n_cols <= idx < n_cols:
            raise ValueError(f"{path}: {what} index {idx} is out of range for {n_cols} columns")
        return idx % n_cols

    label = None if label_column is None else one(label_column, "label column")
    if columns is None:
        features = [j for j in range(n_cols) if j != label]
    else:
        features = [one(c, "column") for c in columns]
        if len(set(features)) != len(features):
            raise ValueError(f"{path}: a column is selected twice in {list(columns)}")
        if label is not None and label in features:
            raise ValueError(f"{path}: the label column {label_column!r} is also selected as a feature")
    if not features:
        raise ValueError(f"{path}: no feature column left (the file has {n_cols} column(s))")
    return features, label


class MatrixSource:
    """A data file read as row blocks of ``X`` (and optional labels ``y``).

    Subclasses set ``path``, ``n_features``, ``feature_names`` (or None),
    ``n_rows`` (None until known), ``sparse`` and ``has_labels`` and implement
    :meth:`iter_blocks`.
    """

    path: Path
    n_features: int
    feature_names = None
    n_rows = None
    sparse = False
    has_labels = False
    format = "?"
    #: whether :meth:`take` reads only the rows asked for (a memory map, an array); False: it is a pass over the
    #: file up to the last row asked for, so a caller with several sets of rows collects them in one pass instead
    random_access = False

    def iter_blocks(self, block_rows=None):  # pragma: no cover - abstract
        """Yield ``(X_block, y_block or None)`` in file order."""
        raise NotImplementedError

    def take(self, indices):
        """Rows at ``indices`` (sorted, distinct) as ``(X, y)``.

        One pass here; random access where the format has it.
        """
        indices = np.asarray(indices, dtype=np.int64)
        Xs, ys, start, pos = [], [], 0, 0
        for X, y in self.iter_blocks():
            stop = start + X.shape[0]
            end = int(np.searchsorted(indices, stop, side="left"))
            if end > pos:
                local = indices[pos:end] - start
                Xs.append(X[local])
                if y is not None:
                    ys.append(np.asarray(y)[local])
                pos = end
            start = stop
            if pos == indices.size:
                break
        if pos != indices.size:
            raise ValueError(f"{self.path}: row index {int(indices[pos])} is out of range ({start} rows)")
        if not Xs:
            return self._empty(), None
        X = sp.vstack(Xs, format="csr") if self.sparse else np.concatenate(Xs, axis=0)
        return X, (np.concatenate(ys) if ys else None)

    def _empty(self):
        dtype = getattr(self, "dtype", np.float64)
        return (
            sp.csr_matrix((0, self.n_features), dtype=dtype) if self.sparse else np.empty((0, self.n_features), dtype)
        )

    def read(self):
        """The whole file as ``(X, y)`` (``y`` is None without a label column)."""
        Xs, ys = [], []
        for X, y in self.iter_blocks():
            Xs.append(X)
            if y is not None:
                ys.append(y)
        if not Xs:
            raise ValueError(f"{self.path}: no data rows")
        X = sp.vstack(Xs, format="csr") if self.sparse else np.concatenate(Xs, axis=0)
        y = coerce_labels(np.concatenate(ys)) if ys else None
        return X, y

    def __repr__(self):
        return f"{type(self).__name__}({os.fspath(self.path)!r}, n_features={self.n_features})"


class ArraySource(MatrixSource):
    """An in-memory matrix (ndarray or CSR, and optional labels) read like a file, in row blocks.

    Lets every out-of-core routine take data already in memory; blocks are
    views (dense) or row slices (CSR), never copies of the whole matrix.

    Examples
    --------
    >>> import numpy as np
    >>> src = ArraySource(np.arange(10.0).reshape(5, 2))
    >>> [X.shape[0] for X, _ in src.iter_blocks(2)], src.take([1, 4])[0].tolist()
    ([2, 2, 1], [[2.0, 3.0], [8.0, 9.0]])
    """

    random_access = True

    format = "array"

    def __init__(self, X, y=None, *, name="<array>", feature_names=None):
        from ..utils.validation import check_input

        self.feature_names = None if feature_names is None else [str(n) for n in feature_names]
        self.X = check_input(X, accept_sparse=("csr",), name="X")
        self.y = None if y is None else np.asarray(y)
        if self.y is not None and self.y.shape[0] != self.X.shape[0]:
            raise ValueError(f"y has {self.y.shape[0]} rows but X has {self.X.shape[0]}")
        self.path = Path(name)
        self.n_rows, self.n_features = self.X.shape
        self.sparse = sp.issparse(self.X)
        self.has_labels = self.y is not None
        self.dtype = self.X.dtype

    def iter_blocks(self, block_rows=None):
        block_rows = block_rows or default_block_rows(self.n_features, 16)
        for start in range(0, self.n_rows, block_rows):
            stop = min(start + block_rows, self.n_rows)
            yield self.X[start:stop], (None if self.y is None else self.y[start:stop])

    def take(self, indices):
        indices = np.asarray(indices, dtype=np.int64)
        return self.X[indices], (None if self.y is None else self.y[indices])


def coerce_labels(y):
    """Labels read as text become int64 (or float64) when every value is numeric."""
    y = np.asarray(y)
    if y.dtype.kind in "iub":
        return y.astype(np.int64)
    try:
        f = y.astype(np.float64)
    except (ValueError, TypeError):
        return y.astype(str)
    # integral labels become int64 only where that is exact (|y| < 2^53)
    if np.all(np.isfinite(f)) and np.all(f == np.round(f)) and np.all(np.abs(f) < 2.0**53):
        return f.astype(np.int64)
    return f


def check_finite_block(path, X, row_of, names=None, columns=None, row_label="row", allow_nan=False):
    """Raise a ValueError naming the first NaN/inf cell of a dense block (``allow_nan``: inf only, NaN being
    a missing value the caller handles).

    ``row_of(i)`` gives the row (or line) number, in the file, of block row ``i``.
    """
    if X.dtype.kind != "f":
        return
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(X, axis=None)
    if np.isfinite(total):  # a NaN or inf cell makes the sum NaN or inf: all finite
        return
    ok = ~np.isinf(X) if allow_nan else np.isfinite(X)  # (or the sum overflowed: look cell by cell)
    if ok.all():
        return
    i, j = np.argwhere(~ok)[0]
    col = columns[j] if columns is not None else j
    name = f" ({names[col]!r})" if names is not None else ""
    raise ValueError(
        f"{path}: {row_label} {row_of(int(i))}, column {col + 1}{name}: value {float(X[i, j])} is not finite "
        "(NaN and inf are not allowed; drop or impute those rows first)"
    )
