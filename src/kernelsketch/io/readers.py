"""Open any supported data file as a :class:`~kernelsketch.io.source.MatrixSource`."""

from __future__ import annotations

import os
from pathlib import Path

from .binary import NpySource, ParquetSource
from .delimited import DelimitedSource
from .libsvm import LibsvmSource

__all__ = ["INPUT_FORMATS", "guess_format", "open_matrix", "read_matrix"]

#: format name -> file suffixes (before an optional ``.gz``)
INPUT_FORMATS = {
    "csv": ("csv", "tsv", "tab", "txt", "dat", "data"),
    "npy": ("npy",),
    "parquet": ("parquet", "pq"),
    "libsvm": ("libsvm", "svm", "svmlight"),
}


def _looks_like_libsvm(path: Path) -> bool:
    import gzip

    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            for line in f:
                body = line.split("#", 1)[0].split()
                if body:
                    return len(body) > 1 and all(":" in t for t in body[1:])
    except (OSError, UnicodeDecodeError, EOFError):
        return False
    return False


def guess_format(path) -> str:
    """Format of ``path`` from its suffix (``.txt`` files are sniffed for libsvm).

    Examples
    --------
    >>> guess_format("data.csv.gz"), guess_format("X.npy"), guess_format("a.svm")
    ('csv', 'npy', 'libsvm')
    """
    path = Path(os.fspath(path))
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = name.rsplit(".", 1)[-1] if "." in name else ""
    for fmt, suffixes in INPUT_FORMATS.items():
        if suffix in suffixes:
            if fmt == "csv" and suffix in ("txt", "dat", "data") and path.is_file() and _looks_like_libsvm(path):
                return "libsvm"
            return fmt
    raise ValueError(
        f"cannot tell the format of {str(path)!r} from its suffix; use one of "
        f"{sorted(s for v in INPUT_FORMATS.values() for s in v)}, or name the format: --format csv|npy|parquet|libsvm "
        "(format= in Python)"
    )


def open_matrix(
    path,
    *,
    format=None,
    delimiter=None,
    header=None,
    columns=None,
    label_column=None,
    dtype=None,
    n_features=None,
    na_values=(),
):
    """Open a data file for reading in row blocks.

    Parameters
    ----------
    path : path-like
        ``.csv``/``.tsv``/``.txt`` (optionally ``.gz``), ``.npy``, ``.parquet``
        or libsvm (``.libsvm``, ``.svm``, or a ``.txt`` of ``label i:v`` lines).
    format : {"csv", "npy", "parquet", "libsvm"}, optional
        Overrides the suffix.
    delimiter, header, na_values : text files only (see :class:`DelimitedSource`; ``na_values``: the cells read
        as missing values, NaN; none by default).
    columns, label_column : feature columns and label column, by name or 0-based index.
    dtype : numpy dtype, optional
        float64 by default (float32 ``.npy`` / Parquet stay float32).
    n_features : int, optional
        libsvm only: the number of features (default: the largest index in the
        file, which is too few when the last features are zero in every row;
        pass the model's ``n_features_in_`` to read new data for it).

    Returns
    -------
    MatrixSource
        With ``n_features``, ``iter_blocks(block_rows)`` and ``read()``.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Empty, truncated or corrupt file, wrong delimiter, non-numeric or
        non-finite cells, ragged rows: the message names the file and, where
        possible, the line (text) or row index (binary) and the column.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> _ = open(path, "w").write("a,b,label\\n1,2,x\\n3,4,y\\n")
    >>> X, y = open_matrix(path, label_column="label").read()
    >>> X.tolist(), y.tolist()
    ([[1.0, 2.0], [3.0, 4.0]], ['x', 'y'])
    """
    path = Path(os.fspath(path)).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"input file {str(path)!r} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"input {str(path)!r} is a directory, not a data file")
    if not path.is_file():  # a pipe (/dev/stdin, <(cmd)), a device: readable once, and every run reads twice
        raise ValueError(
            f"input {str(path)!r} is not a regular file (a pipe or a device?): it is read in several passes "
            "(a sample, then every row), so save the data to a file first (e.g. `cat ... > data.csv`)"
        )
    fmt = format or guess_format(path)
    if n_features is not None and fmt != "libsvm":
        raise ValueError(f"n_features applies to libsvm files (their width is not in the file), not {fmt}")
    if fmt == "csv":
        import numpy as np

        return DelimitedSource(
            path,
            delimiter=delimiter,
            header=header,
            columns=columns,
            label_column=label_column,
            dtype=dtype or np.float64,
            na_values=na_values,
        )
    if fmt in ("npy", "parquet", "libsvm") and (delimiter is not None or header is not None):
        raise ValueError(f"delimiter/header options apply to text files, not {fmt}")
    if fmt == "npy":
        return NpySource(path, columns=columns, label_column=label_column, dtype=dtype)
    if fmt == "parquet":
        return ParquetSource(path, columns=columns, label_column=label_column, dtype=dtype)
    if fmt == "libsvm":
        if columns is not None or label_column is not None:
            raise ValueError("libsvm files have their label first on every line; --columns/--label-column do not apply")
        import numpy as np

        return LibsvmSource(path, n_features=n_features, dtype=dtype or np.float64)
    raise ValueError(f"unknown input format {fmt!r}; choose one of {sorted(INPUT_FORMATS)}")


def read_matrix(path, **options):
    """Read a whole data file: ``(X, y)``; see :func:`open_matrix` for the options."""
    return open_matrix(path, **options).read()
