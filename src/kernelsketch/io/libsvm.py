"""libsvm / svmlight text (``label idx:value ...``, 1-based indices) as CSR row blocks.

The number of features is the largest index in the file, so opening a file
makes one validating pass; blocks are then parsed on demand.  Memory is one
block of lines plus its CSR arrays.
"""

from __future__ import annotations

import gzip
import itertools
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .source import MatrixSource

__all__ = ["LibsvmSource"]


def _open(path):
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path)


def parse_libsvm_lines(path, lines, start, dtype=np.float64):
    """Parse libsvm lines into ``(labels, data, indices, indptr, max_index)``.

    Comments (``# ...``) and blank lines are skipped; ``qid:`` tokens are ignored.
    """
    labels, data, indices, indptr = [], [], [], [0]
    max_index = 0
    for k, line in enumerate(lines):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        lineno = start + k
        tokens = body.split()
        try:
            labels.append(float(tokens[0]))
        except ValueError:
            raise ValueError(
                f"{path}: line {lineno}: label {tokens[0]!r} is not a number (libsvm lines start with a numeric label)"
            ) from None
        prev = 0
        for tok in tokens[1:]:
            idx_s, sep, val_s = tok.partition(":")
            if idx_s == "qid":
                continue
            if not sep:
                raise ValueError(f"{path}: line {lineno}: token {tok!r} is not index:value")
            try:
                idx = int(idx_s)
                val = float(val_s)
            except ValueError:
                raise ValueError(
                    f"{path}: line {lineno}: token {tok!r} is not index:value with an integer index and a numeric value"
                ) from None
            if idx < 1:
                raise ValueError(f"{path}: line {lineno}: feature index {idx} < 1 (libsvm indices start at 1)")
            if idx <= prev:
                raise ValueError(f"{path}: line {lineno}: feature indices must increase ({prev} then {idx})")
            if not np.isfinite(val):
                raise ValueError(f"{path}: line {lineno}, feature {idx}: value {val!r} is not finite")
            prev = idx
            indices.append(idx - 1)
            data.append(val)
        max_index = max(max_index, prev)
        indptr.append(len(data))
    return (
        np.asarray(labels),
        np.asarray(data, dtype=dtype),
        np.asarray(indices, dtype=np.int32),
        np.asarray(indptr, dtype=np.int64),
        max_index,
    )


class LibsvmSource(MatrixSource):
    """A libsvm file as CSR blocks with float labels (``has_labels`` is True).

    Parameters
    ----------
    path : path-like
    n_features : int, optional
        Number of features (default: the largest index in the file).
    dtype : numpy dtype, default float64
    """

    format = "libsvm"
    sparse = True
    has_labels = True

    def __init__(self, path, *, n_features=None, dtype=np.float64, block_rows=8192):
        self.path = Path(os.fspath(path))
        self.dtype = np.dtype(dtype)
        n_rows, max_index = 0, 0
        for labels, _, _, _, m in self._blocks(block_rows):
            n_rows += len(labels)
            max_index = max(max_index, m)
        if n_rows == 0:
            raise ValueError(f"{self.path}: the file is empty (no data rows)")
        if n_features is not None and (
            isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1
        ):
            raise ValueError(f"n_features must be a positive int, got {n_features!r}")
        if n_features is not None and n_features < max_index:
            raise ValueError(
                f"{self.path}: has feature index {max_index}, more than the {n_features} features expected "
                "(n_features / --n-features, or the model's feature count)"
            )
        self.n_features = int(n_features or max_index)
        self.n_rows = n_rows

    def _blocks(self, block_rows):
        try:
            with _open(self.path) as f:
                lines = enumerate(f, start=1)
                while True:
                    chunk = list(itertools.islice(lines, block_rows))
                    if not chunk:
                        return
                    yield parse_libsvm_lines(self.path, [ln for _, ln in chunk], chunk[0][0], self.dtype)
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise ValueError(f"{self.path}: truncated or corrupt libsvm file ({exc})") from exc

    def iter_blocks(self, block_rows=None):
        block_rows = block_rows or 8192
        for labels, data, indices, indptr, _ in self._blocks(block_rows):
            if len(labels):
                X = sp.csr_matrix((data, indices, indptr), shape=(len(labels), self.n_features))
                yield X, labels
