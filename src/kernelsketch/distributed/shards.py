"""A directory of ``.npy`` or Parquet shards opened as one dask array (one chunk per shard)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ._dask import import_dask

SHARD_SUFFIXES = {".npy": "npy", ".parquet": "parquet", ".pq": "parquet"}


def _read_shard(path, fmt, columns, label_column, dtype):
    from ..io import open_matrix

    X, _ = open_matrix(path, format=fmt, columns=columns, label_column=label_column, dtype=dtype).read()
    return X


def read_shards(directory, *, columns=None, label_column=None, dtype=None):
    """Open every ``*.npy`` or every ``*.parquet`` file of a directory (or one such file) as a dask array.

    Shards are taken in file-name order, one row chunk each.  Only their
    headers (``.npy``) or footers (Parquet) are read here, for the shapes;
    each worker reads its shards with :func:`kernelsketch.io.open_matrix`
    (same validation: finite numeric cells, column selection).

    Parameters
    ----------
    directory : path-like
    columns, label_column : feature columns and a column to leave out, by name or 0-based index.
    dtype : numpy dtype, optional
        float64 by default (float32 shards stay float32).

    Returns
    -------
    dask.array.Array of shape (n_rows, n_features)

    Raises
    ------
    ValueError
        No shard, shards of both formats, or shards with different feature
        counts or dtypes (the message names the first offending file).

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> for i in range(3):
    ...     np.save(os.path.join(d, f"part-{i}.npy"), np.full((4, 2), float(i)))
    >>> X = read_shards(d)
    >>> X.shape, X.numblocks, float(X.sum().compute())
    ((12, 2), (3, 1), 24.0)
    """
    from ..io import open_matrix

    da = import_dask("dask.array")
    dask = import_dask("dask")
    root = Path(os.fspath(directory)).expanduser()
    if root.is_file():
        if root.suffix.lower() not in SHARD_SUFFIXES:
            raise ValueError(f"{str(root)!r} is not a .npy or Parquet file")
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in SHARD_SUFFIXES)
    else:
        raise FileNotFoundError(f"{str(root)!r} is neither a directory of shards nor a shard file")
    if not files:
        raise ValueError(f"{str(root)!r} holds no .npy or .parquet shard")
    formats = {SHARD_SUFFIXES[p.suffix.lower()] for p in files}
    if len(formats) > 1:
        raise ValueError(f"{str(root)!r} mixes .npy and Parquet shards; keep one format per directory")
    fmt = formats.pop()
    blocks, first = [], None
    for path in files:
        src = open_matrix(path, format=fmt, columns=columns, label_column=label_column, dtype=dtype)
        if first is None:
            first = src
        elif (src.n_features, src.dtype) != (first.n_features, first.dtype):
            raise ValueError(f"{path}: {src.n_features} features of {src.dtype}, but {first.path.name} has "
                             f"{first.n_features} of {first.dtype}")
        part = dask.delayed(_read_shard, pure=True)(str(path), fmt, columns, label_column, dtype)
        blocks.append(da.from_delayed(part, shape=(src.n_rows, src.n_features), dtype=src.dtype,
                                      meta=np.empty((0, 0), dtype=src.dtype)))
    return da.concatenate(blocks, axis=0)
