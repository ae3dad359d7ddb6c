"""Binary matrix files read in row blocks: ``.npy`` (memory-mapped) and Parquet."""

from __future__ import annotations

import itertools
import mmap
import os
from pathlib import Path

import numpy as np

from .source import MatrixSource, check_finite_block, default_block_rows, resolve_columns

__all__ = ["NpySource", "ParquetSource"]


def _float_dtype(dtype, requested):
    return np.dtype(np.float32) if dtype == np.float32 and requested is None else np.dtype(requested or np.float64)


#: a gather reads the mapped file this many bytes at a time, dropping the pages after each region
GATHER_REGION_BYTES = 64 * 2**20


class NpySource(MatrixSource):
    """A 2-D numeric ``.npy`` file, memory-mapped (never unpickled).

    float32 stays float32 unless ``dtype`` says otherwise; integers and
    booleans become float64.
    """

    format = "npy"
    random_access = True

    def __init__(self, path, *, columns=None, label_column=None, dtype=None):
        self.path = Path(os.fspath(path))
        if self.path.stat().st_size == 0:
            raise ValueError(f"{self.path}: the file is empty")
        try:
            arr = np.load(self.path, mmap_mode="r", allow_pickle=False)
        except ValueError as exc:
            msg = str(exc)
            if "pickle" in msg or "Python objects" in msg:
                msg = "not a .npy file, or an object array (pickled data is never loaded)"
            elif "mmap length" in msg or "buffer is smaller" in msg:
                msg = "truncated (the file is shorter than its header says)"
            raise ValueError(f"{self.path}: corrupt .npy file: {msg}") from exc
        except (OSError, EOFError) as exc:
            raise ValueError(f"{self.path}: corrupt .npy file ({exc})") from exc
        except Exception as exc:
            raise ValueError(f"{self.path}: corrupt .npy header ({type(exc).__name__}: {exc})") from exc
        if not isinstance(arr, np.ndarray):
            raise ValueError(f"{self.path}: expected a single array (.npy), got an archive")
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{self.path}: dtype {arr.dtype} is not numeric")
        if arr.ndim != 2:
            raise ValueError(f"{self.path}: expected a 2-D array (n_samples, n_features), got shape {arr.shape}")
        if arr.shape[0] == 0 or arr.shape[1] == 0:
            raise ValueError(f"{self.path}: the array is empty (shape {arr.shape})")
        self._arr = arr
        self.dtype = _float_dtype(arr.dtype, dtype)
        self.features, self.label = resolve_columns(self.path, None, arr.shape[1], columns, label_column)
        self.n_features = len(self.features)
        self.n_rows = arr.shape[0]
        self.has_labels = self.label is not None
        self._contiguous = self.features == list(range(self.features[0], self.features[0] + self.n_features))

    def _select(self, raw, row_of, owned=False):
        """``(X, y)`` of the rows ``raw`` (every column of the file); ``owned``: ``raw`` is a fresh buffer of
        this call's, which ``X`` may be when it is all of it in the wanted dtype (no copy)."""
        whole = self._contiguous and self.features[0] == 0 and self.n_features == raw.shape[1]
        if owned and whole and raw.dtype == self.dtype and raw.flags.c_contiguous:
            X = raw
        elif self._contiguous:
            f0 = self.features[0]
            X = np.array(raw[:, f0 : f0 + self.n_features], dtype=self.dtype)
        else:
            X = np.asarray(raw[:, self.features], dtype=self.dtype)
        check_finite_block(self.path, X, row_of, None, self.features, row_label="row index")
        y = None if self.label is None else np.array(raw[:, self.label])
        return X, y

    def _check_size(self, last_row):
        """Refuse a mapped read of rows up to ``last_row`` that the file no longer holds.

        Touching a page of a map beyond the end of a file truncated after it was opened
        kills the process (SIGBUS); the size is checked before every mapped read instead.
        """
        offset = getattr(self._arr, "offset", None)
        if offset is None:  # pragma: no cover - np.load always gives a memmap with an offset
            return
        row_bytes = self._arr.shape[1] * self._arr.dtype.itemsize
        try:
            size = os.stat(self.path).st_size
        except OSError as exc:
            raise ValueError(f"{self.path}: can no longer be read ({exc})") from exc
        if size < offset + (last_row + 1) * row_bytes:
            held = max(size - offset, 0) // row_bytes
            raise ValueError(
                f"{self.path}: truncated at row index {held} (the file now holds {held} of the "
                f"{self.n_rows} rows its header says; was it overwritten while being read?)"
            )

    def take(self, indices):
        """Rows at ``indices`` (sorted, distinct): random access into the memory map."""
        indices = np.asarray(indices, dtype=np.int64)
        if indices.size and (indices[0] < 0 or indices[-1] >= self.n_rows):
            raise ValueError(f"{self.path}: row indices out of range for {self.n_rows} rows")
        if indices.size:
            self._check_size(int(indices[-1]))
        # region by region of the file, the map's pages dropped after each: scattered rows (the
        # bandwidth's ~200,000 sampled rows) touch most pages of a large file, and a single fancy
        # index held them all at once (peak RSS grew with the file: 1.4 GB at 16M x 10)
        row_bytes = self._arr.shape[1] * self._arr.dtype.itemsize
        step = max(1, GATHER_REGION_BYTES // max(row_bytes, 1))
        cuts = np.searchsorted(indices, np.arange(0, self.n_rows + step, step))
        Xs, ys = [], []
        for a, b in itertools.pairwise(cuts):
            if b > a:
                part = indices[a:b]
                X, y = self._select(self._arr[part], lambda i, part=part: int(part[i]))
                self._release_pages()
                Xs.append(X)
                ys.append(y)
        if not Xs:
            return self._select(self._arr[indices], lambda i: int(indices[i]))
        X = Xs[0] if len(Xs) == 1 else np.concatenate(Xs)
        y = None if ys[0] is None else (ys[0] if len(ys) == 1 else np.concatenate(ys))
        return X, y

    def _release_pages(self):
        """Drop the map's pages from this process's resident set (they stay in the page cache).

        A scattered gather (landmarks, the bandwidth's sampled pairs, a k-means
        sample) touches pages all over the file; without this the peak RSS grew
        with the file's size.
        """
        mm = getattr(self._arr, "_mmap", None)
        if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
            try:
                mm.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError):  # pragma: no cover - advisory only
                pass

    def read_range(self, start, stop):
        """Rows ``start:stop`` as ``(X, y)`` (what a Dask chunk of this file reads): one plain file read into a
        buffer of its own, as :meth:`iter_blocks` reads (no page faults of a mapped copy)."""
        stop = min(stop, self.n_rows)
        arr = self._arr
        offset = getattr(arr, "offset", None)
        if stop <= start or offset is None or not arr.flags.c_contiguous:
            if stop > start:
                self._check_size(stop - 1)
            out = self._select(arr[start:stop], lambda i, s=start: s + i)
            self._release_pages()
            return out
        with open(self.path, "rb") as f:
            return self._read_plain(f, start, stop)

    def _read_plain(self, f, start, stop):
        """``(X, y)`` of rows ``start:stop`` read from the open file ``f`` with one plain read into a buffer of this
        call's (which ``X`` may be)."""
        arr = self._arr
        row_items = arr.shape[1]
        f.seek(arr.offset + start * row_items * arr.dtype.itemsize)
        raw = np.fromfile(f, dtype=arr.dtype, count=(stop - start) * row_items)
        if raw.size != (stop - start) * row_items:
            raise ValueError(
                f"{self.path}: truncated at row index {start + raw.size // row_items} (the file holds fewer than the "
                f"{self.n_rows} rows its header says; was it overwritten while being read?)"
            )
        return self._select(raw.reshape(stop - start, row_items), lambda i, s=start: s + i, owned=True)

    def iter_blocks(self, block_rows=None):
        """Row blocks read with plain file reads (not through the memory map).

        Pages touched through a memory map stay in the process's resident set
        until the map is dropped: streaming a 1.6 GB file that way grew the peak
        RSS by the file's size.  Reading each block into a fresh buffer keeps
        memory at one block (the data still come from the page cache).
        """
        block_rows = block_rows or default_block_rows(self._arr.shape[1], 16)
        arr = self._arr
        offset = getattr(arr, "offset", None)
        if offset is None or not arr.flags.c_contiguous:  # pragma: no cover - np.load always gives a C memmap here
            for start in range(0, self.n_rows, block_rows):
                yield self.read_range(start, min(start + block_rows, self.n_rows))
            return
        with open(self.path, "rb") as f:
            for start in range(0, self.n_rows, block_rows):
                yield self._read_plain(f, start, min(start + block_rows, self.n_rows))


class ParquetSource(MatrixSource):
    """A Parquet file read batch by batch with pyarrow (numeric feature columns)."""

    format = "parquet"

    def __init__(self, path, *, columns=None, label_column=None, dtype=None):
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - optional extra
            raise ImportError("reading Parquet needs pyarrow: pip install 'kernelsketch[parquet]'") from exc
        self.path = Path(os.fspath(path))
        try:
            self._file = pq.ParquetFile(self.path)
        except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for corrupt files
            raise ValueError(f"{self.path}: corrupt or not a Parquet file ({exc})") from exc
        names = list(self._file.schema_arrow.names)
        self.features, self.label = resolve_columns(self.path, names, len(names), columns, label_column)
        import pyarrow.types as pat

        for j in self.features:
            t = self._file.schema_arrow.field(j).type
            if not (pat.is_integer(t) or pat.is_floating(t) or pat.is_boolean(t) or pat.is_decimal(t)):
                raise ValueError(
                    f"{self.path}: column {names[j]!r} has type {t}, not numeric "
                    "(use --columns / --label-column to choose the feature columns)"
                )
        self.feature_names = [names[j] for j in self.features]
        self._names = names
        self.n_features = len(self.features)
        self.n_rows = self._file.metadata.num_rows
        if self.n_rows == 0:
            raise ValueError(f"{self.path}: no data rows")
        self.has_labels = self.label is not None
        types = {self._file.schema_arrow.field(j).type for j in self.features}
        self.dtype = np.dtype(dtype or (np.float32 if all(str(t) == "float" for t in types) else np.float64))

    @property
    def row_group_rows(self):
        """Rows of each row group, in file order (what a Dask chunk of this file reads)."""
        md = self._file.metadata
        return [md.row_group(i).num_rows for i in range(md.num_row_groups)]

    def read_row_groups(self, first, stop):
        """Row groups ``first:stop`` as ``(X, y)``, nothing else of the file read."""
        start = sum(self.row_group_rows[:first])
        Xs, ys = [], []
        for X, y in self._batches(None, list(range(first, stop)), start):
            Xs.append(X)
            ys.append(y)
        if not Xs:
            return self._empty(), None
        return np.concatenate(Xs), (None if ys[0] is None else np.concatenate(ys))

    def iter_blocks(self, block_rows=None):
        yield from self._batches(block_rows or default_block_rows(len(self._names), 16), None, 0)

    def _batches(self, block_rows, row_groups, start):
        cols = [self._names[j] for j in self.features]
        wanted = cols + ([self._names[self.label]] if self.label is not None else [])
        try:
            options = {} if block_rows is None else {"batch_size": block_rows}
            if row_groups is not None:
                options["row_groups"] = row_groups
            batches = self._file.iter_batches(columns=wanted, **options)
            for batch in batches:
                X = np.empty((batch.num_rows, len(cols)), dtype=self.dtype)
                for j, name in enumerate(cols):
                    col = batch.column(j)
                    if col.null_count:
                        i = int(np.flatnonzero(np.asarray(col.is_null()))[0])
                        raise ValueError(f"{self.path}: row index {start + i}, column {name!r}: missing value (null)")
                    X[:, j] = col.to_numpy(zero_copy_only=False)
                check_finite_block(
                    self.path, X, lambda i, s=start: s + i, self._names, self.features, row_label="row index"
                )
                y = None
                if self.label is not None:
                    y = np.asarray(batch.column(len(cols)).to_numpy(zero_copy_only=False))
                start += batch.num_rows
                yield X, y
        except ValueError:
            raise
        except Exception as exc:  # pyarrow errors on truncated/corrupt pages
            raise ValueError(f"{self.path}: corrupt Parquet data after row {start} ({exc})") from exc
