"""A directory of ``.npy`` or Parquet shards opened as one dask array (one chunk per shard)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._dask import import_dask

SHARD_SUFFIXES = {".npy": "npy", ".parquet": "parquet", ".pq": "parquet"}


#: input bytes of one chunk of a large ``.npy`` shard (one Dask task each a pass): 64 MiB, where each task's
#: scheduling, sending and first touch of its rows cost little beside its work (the 5M x 20 float32 file with
#: ``--workers 2`` on the 2-core host: 6.8-7.1 s at 64 MiB, 7.0-7.3 s at 32, 8.0-8.5 s at 16 in one series)
CHUNK_BYTES = 64 * 2**20


def _read_shard(path, fmt, columns, label_column, dtype, start=None, stop=None):
    """``(X, y)`` of one shard: rows ``start:stop`` of a ``.npy`` shard (memory-mapped), or row groups
    ``start:stop`` of a Parquet shard (only those read), or the whole shard."""
    from ..io import open_matrix

    src = open_matrix(path, format=fmt, columns=columns, label_column=label_column, dtype=dtype)
    if start is None:
        return src.read()
    if fmt == "parquet":
        return src.read_row_groups(start, stop)
    return src.read_range(start, stop)


def _row_group_ranges(sizes, row_bytes, chunk_rows=None):
    """Consecutive row groups joined into chunks of about ``CHUNK_BYTES`` (or ``chunk_rows``):
    ``[(first, stop, rows)]``; a row group is never split, so no file is read twice."""
    target = chunk_rows or max(1, CHUNK_BYTES // max(1, row_bytes))
    out, first, rows = [], 0, 0
    for g, n in enumerate(sizes):
        if rows and rows + n > target:
            out.append((first, g, rows))
            first, rows = g, 0
        rows += n
    if rows or not out:
        out.append((first, len(sizes), rows))
    return out


def _part(pair, i):
    return pair[i]


def read_shards(directory, *, columns=None, label_column=None, dtype=None, chunk_rows=None, return_labels=False):
    """Open every ``*.npy`` or every ``*.parquet`` file of a directory (or one such file) as a dask array.

    Shards are taken in file-name order.  A ``.npy`` shard is cut into chunks of
    ``chunk_rows`` rows (default: about 64 MiB of input each), each read by its
    worker through a memory map; a Parquet shard into chunks of whole row groups
    (about as many rows), each worker reading only its row groups.  So a single
    large file spreads over every worker and no file is read twice.  Only their
    headers (``.npy``) or footers (Parquet) are read here, for the shapes;
    each worker reads its shards with :func:`kernelsketch.io.open_matrix`
    (same validation: finite numeric cells, column selection).

    Parameters
    ----------
    directory : path-like
    columns, label_column : feature columns and a column to leave out, by name or 0-based index.
    dtype : numpy dtype, optional
        float64 by default (float32 shards stay float32).
    chunk_rows : int, optional
        Rows per chunk of ``.npy`` shards (for Parquet: at most, unless one row group holds more).
    return_labels : bool, default=False
        Also return the label column as a dask array (None without ``label_column``).

    Returns
    -------
    dask.array.Array of shape (n_rows, n_features), or ``(X, y)`` with ``return_labels``

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
    X, y, _ = _open_shards(directory, columns, label_column, dtype, chunk_rows)
    return (X, y) if return_labels else X


@dataclass(frozen=True)
class ShardChunks:
    """Where each row chunk of :func:`read_shards`' array comes from (``(path, format, start, stop)`` a chunk, the
    rows ``start:stop`` of a ``.npy`` shard or row groups of a Parquet one) and how it is read: so that a few rows
    (:func:`gather_shard_rows`) are read from the files alone, not with every chunk that holds one."""

    chunks: tuple
    offsets: np.ndarray  # first row of each chunk, then the row count
    read_options: tuple  # (columns, label_column, dtype)


def _open_shards(directory, columns, label_column, dtype, chunk_rows):
    """``(X, y or None, ShardChunks)``: :func:`read_shards` and where its chunks come from."""
    from ..io import open_matrix

    da = import_dask("dask.array")
    dask = import_dask("dask")
    root = Path(os.fspath(directory)).expanduser()
    if root.is_file():
        if root.suffix.lower() not in SHARD_SUFFIXES:
            raise ValueError(f"{str(root)!r} is not a .npy or Parquet file")
        files = [root]
    elif root.is_dir():
        files = sorted(
            p
            for p in root.iterdir()
            if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in SHARD_SUFFIXES
        )
    else:
        raise FileNotFoundError(f"{str(root)!r} is neither a directory of shards nor a shard file")
    if not files:
        raise ValueError(f"{str(root)!r} holds no .npy or .parquet shard")
    formats = {SHARD_SUFFIXES[p.suffix.lower()] for p in files}
    if len(formats) > 1:
        raise ValueError(f"{str(root)!r} mixes .npy and Parquet shards; keep one format per directory")
    fmt = formats.pop()
    blocks, labels, first, specs, sizes = [], [], None, [], []
    for path in files:
        src = open_matrix(path, format=fmt, columns=columns, label_column=label_column, dtype=dtype)
        if first is None:
            first = src
        elif (src.n_features, src.dtype) != (first.n_features, first.dtype):
            raise ValueError(
                f"{path}: {src.n_features} features of {src.dtype}, but {first.path.name} has "
                f"{first.n_features} of {first.dtype}"
            )
        if fmt == "npy":
            step = chunk_rows or max(1, CHUNK_BYTES // max(1, src._arr.shape[1] * src._arr.dtype.itemsize))
            ranges = [(s, min(s + step, src.n_rows), min(s + step, src.n_rows) - s) for s in range(0, src.n_rows, step)]
        else:
            ranges = _row_group_ranges(src.row_group_rows, 8 * len(src._names), chunk_rows)
        for start, stop, rows in ranges:
            specs.append((str(path), fmt, start, stop))
            sizes.append(rows)
            pair = dask.delayed(_read_shard, pure=True)(str(path), fmt, columns, label_column, dtype, start, stop)
            X_part = dask.delayed(_part, pure=True)(pair, 0)
            blocks.append(
                da.from_delayed(
                    X_part, shape=(rows, src.n_features), dtype=src.dtype, meta=np.empty((0, 0), dtype=src.dtype)
                )
            )
            if src.has_labels:
                y_part = dask.delayed(_part, pure=True)(pair, 1)
                labels.append(da.from_delayed(y_part, shape=(rows,), dtype=object, meta=np.empty((0,), object)))
    X = da.concatenate(blocks, axis=0)
    y = da.concatenate(labels, axis=0) if labels else None
    offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    return X, y, ShardChunks(tuple(specs), offsets, (columns, label_column, dtype))


def _read_shard_rows(path, fmt, columns, label_column, dtype, start, stop, rows):
    """``(X, y)`` of the chunk's rows at ``rows`` (sorted, 0-based in the chunk): a ``.npy`` shard's read from its
    memory map alone (:meth:`~kernelsketch.io.binary.NpySource.take`); a Parquet chunk's from its row groups."""
    from ..io import open_matrix

    if fmt == "npy":
        src = open_matrix(path, format=fmt, columns=columns, label_column=label_column, dtype=dtype)
        return src.take(np.asarray(rows, dtype=np.int64) + (start or 0))
    X, y = _read_shard(path, fmt, columns, label_column, dtype, start, stop)
    return X[rows], (None if y is None else y[rows])


def read_chunk(spec, read_options, preprocess=()):
    """``(X, y)`` of one chunk of :func:`read_shards`' array (``spec``: one of :attr:`ShardChunks.chunks`), through
    the engine's row-wise steps (``preprocess``): the chunk the array's own tasks would give, read in one task."""
    path, fmt, start, stop = spec
    X, y = _read_shard(path, fmt, *read_options, start, stop)
    for fn in preprocess:
        X = fn(X)
    return X, y


def _stack_rows(parts, preprocess):
    """The chunks' selected rows in order, as ``(X, y)``, through the engine's row-wise steps (``preprocess``)."""
    X = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
    ys = [p[1] for p in parts]
    y = None if ys[0] is None else (np.concatenate(ys) if len(ys) > 1 else ys[0])
    for fn in preprocess:
        X = fn(X)
    return X, y


def _read_rows_of_chunks(reads, read_options, preprocess):
    """``(X, y)`` of the rows ``reads`` names (``(path, format, start, stop, rows)`` a chunk that holds any, ``rows``
    0-based in it), in order, through ``preprocess``: :func:`_read_shard_rows` of each, then :func:`_stack_rows`."""
    parts = [_read_shard_rows(path, fmt, *read_options, start, stop, rows) for path, fmt, start, stop, rows in reads]
    return _stack_rows(parts, preprocess)


def gather_shard_rows(shards, indices, preprocess=()):
    """``(a delayed (X, y), its task count)`` of the rows at sorted distinct ``indices`` (at least one) of
    :func:`read_shards`' array: one task that reads, from each chunk that holds any, only those rows (a ``.npy``
    shard's through its memory map), stacks them and applies ``preprocess`` (row-wise functions, in order).

    ``X[indices]`` of the dask array would read each such chunk whole: the file, for a uniform sample.  One task, not
    one a chunk: a uniform sample's piece touches every chunk, and each task costs the scheduler and the client more
    than reading its few rows (the 5M x 20 file's statistics sample: 8 pieces of 24 chunks each).
    """
    dask = import_dask("dask")
    idx = np.asarray(indices, dtype=np.int64)
    cuts = np.searchsorted(idx, shards.offsets)
    reads = []
    for c, (path, fmt, start, stop) in enumerate(shards.chunks):
        a, b = int(cuts[c]), int(cuts[c + 1])
        if b > a:
            reads.append((path, fmt, start, stop, idx[a:b] - shards.offsets[c]))
    return dask.delayed(_read_rows_of_chunks, pure=True)(reads, shards.read_options, tuple(preprocess)), 1
