"""Row-block writers for ``.npy``, CSV/TSV and Parquet, all atomic.

Every writer fills a temporary file beside the target (:class:`AtomicPath`)
and renames it over the target only when :meth:`BlockWriter.close` succeeds,
so an interrupted or failed run leaves the previous output untouched and no
partial file under the output's name.  The ``.npy`` writer does not need the
row count in advance: it reserves a header wide enough for any row count and
rewrites it (same length) once the last block is written.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .atomic import AtomicPath
from .delimited import write_delimited_block

__all__ = ["OUTPUT_FORMATS", "BlockWriter", "open_writer", "output_format", "write_matrix"]

OUTPUT_FORMATS = {"npy": ("npy",), "csv": ("csv", "txt"), "tsv": ("tsv",), "parquet": ("parquet", "pq")}


def output_format(path) -> str:
    """Output format from the suffix of ``path``.

    Examples
    --------
    >>> output_format("emb.npy"), output_format("labels.csv"), output_format("e.parquet")
    ('npy', 'csv', 'parquet')
    """
    suffix = Path(os.fspath(path)).suffix.lower().lstrip(".")
    for fmt, suffixes in OUTPUT_FORMATS.items():
        if suffix in suffixes:
            return fmt
    raise ValueError(
        f"cannot write {str(path)!r}: unsupported output suffix {suffix!r}; use "
        f"{', '.join('.' + s for v in OUTPUT_FORMATS.values() for s in v)}"
    )


def _npy_header(dtype, shape, total=None) -> bytes:
    """A version 1.0 ``.npy`` header, space-padded to ``total`` bytes (a multiple of 64)."""
    d = f"{{'descr': {np.lib.format.dtype_to_descr(dtype)!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    # magic (6) + version (2) + header length (2) + dict + padding + "\n"
    need = 10 + len(d) + 1
    if total is None:
        total = -(-need // 64) * 64
    if need > total:  # pragma: no cover - the reserve is sized for 20-digit row counts
        raise ValueError("npy header reserve too small")
    body = d + " " * (total - need) + "\n"
    return b"\x93NUMPY\x01\x00" + (len(body)).to_bytes(2, "little") + body.encode("latin1")


class BlockWriter:
    """Write a matrix block by block; commit with :meth:`close`, drop with :meth:`abort`.

    Use :func:`open_writer` to create one.  As a context manager it commits on
    success and aborts on any exception (``KeyboardInterrupt`` included).
    """

    def __init__(self, path, n_columns, dtype, *, format=None, column_names=None, force=False, protect=()):
        self.format = format or output_format(path)
        self.n_columns = int(n_columns)
        self.dtype = np.dtype(dtype)
        self.column_names = list(column_names) if column_names is not None else [f"c{j}" for j in range(self.n_columns)]
        if len(self.column_names) != self.n_columns:
            raise ValueError(f"{len(self.column_names)} column names for {self.n_columns} columns")
        self._atomic = AtomicPath(path, force=force, protect=protect)
        self.path = self._atomic.path
        self.n_rows = 0
        self._vector = None  # a .npy of 1-D blocks (labels) is written 1-D, as the library returns them
        self._closed = False
        try:
            self._open()
        except BaseException:
            self._atomic.abort()
            raise

    def _open(self):
        tmp = self._atomic.tmp
        if self.format == "npy":
            self._f = open(tmp, "wb")
            self._header_len = len(_npy_header(self.dtype, (10**20, self.n_columns)))
            self._f.write(b"\0" * self._header_len)
        elif self.format in ("csv", "tsv"):
            self._sep = "," if self.format == "csv" else "\t"
            self._f = open(tmp, "w", newline="")
            self._f.write(self._sep.join(self.column_names) + "\n")
        elif self.format == "parquet":
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError as exc:  # pragma: no cover - optional extra
                raise ImportError("writing Parquet needs pyarrow: pip install 'kernelsketch[parquet]'") from exc
            self._pa = pa
            self._schema = pa.schema([(name, pa.from_numpy_dtype(self.dtype)) for name in self.column_names])
            self._f = pq.ParquetWriter(tmp, self._schema)
        else:
            raise ValueError(f"unknown output format {self.format!r}; choose one of {sorted(OUTPUT_FORMATS)}")

    def write(self, block):
        """Append rows (an array of shape ``(n, n_columns)``, or ``(n,)`` for one column).

        A ``.npy`` file whose first block is 1-D (one column: labels) is written 1-D, ``(N,)``.
        """
        block = np.asarray(block)
        if self._vector is None:
            self._vector = block.ndim == 1 and self.n_columns == 1
        if block.ndim == 1:
            block = block[:, None]
        if block.ndim != 2 or block.shape[1] != self.n_columns:
            raise ValueError(f"block of shape {block.shape} does not have {self.n_columns} columns")
        block = np.ascontiguousarray(block, dtype=self.dtype)
        if self.format == "npy":
            self._f.write(block.tobytes(order="C"))
        elif self.format in ("csv", "tsv"):
            write_delimited_block(self._f, block, self._sep)
        else:
            pa = self._pa
            table = pa.Table.from_arrays([pa.array(block[:, j]) for j in range(self.n_columns)], schema=self._schema)
            self._f.write_table(table)
        self.n_rows += block.shape[0]

    def close(self) -> Path:
        """Finish the file and rename it over the target."""
        if self._closed:
            return self.path
        try:
            if self.format == "npy":
                self._f.seek(0)
                shape = (self.n_rows,) if self._vector else (self.n_rows, self.n_columns)
                self._f.write(_npy_header(self.dtype, shape, self._header_len))
            self._f.close()
            self._closed = True
            return self._atomic.commit()
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Delete the temporary file; the target keeps its previous content."""
        self._closed = True
        try:
            self._f.close()
        except Exception:
            pass
        self._atomic.abort()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


def open_writer(path, n_columns, dtype=np.float64, *, format=None, column_names=None, force=False, protect=()):
    """A :class:`BlockWriter` for ``path`` (format from the suffix unless given).

    Raises :class:`~kernelsketch.io.atomic.OutputExistsError` if ``path``
    exists and ``force`` is False, and :class:`~kernelsketch.io.atomic.SameFileError`
    if it is one of ``protect`` (the inputs).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "Z.npy")
    >>> with open_writer(path, 2, np.float32) as w:
    ...     w.write(np.ones((3, 2)))
    ...     w.write(np.zeros((1, 2)))
    >>> np.load(path).shape, np.load(path).dtype
    ((4, 2), dtype('float32'))
    """
    return BlockWriter(path, n_columns, dtype, format=format, column_names=column_names, force=force, protect=protect)


def write_matrix(path, X, *, column_names=None, force=False, protect=()):
    """Write a whole array atomically (``.npy``, ``.csv``, ``.tsv``, ``.parquet``)."""
    X = np.asarray(X)
    n_cols = 1 if X.ndim == 1 else X.shape[1]
    with open_writer(path, n_cols, X.dtype, column_names=column_names, force=force, protect=protect) as w:
        w.write(X)
    return w.path
