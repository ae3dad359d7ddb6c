"""Row sources: what a fit asks of its rows, wherever they are.

An estimator whose fit looks at the rows more than once (landmarks gathered by index, sums over
every block, a sample to seed k-means on) fits on a *row source*, so that one method serves an
in-memory array, a file read block by block and a Dask array alike:

===================  ==========================================================================
``n_rows``           rows of the source (``None`` until a pass has counted a text file's)
``n_features``       columns
``gather(idx)``      ``(X, y)``: the rows at sorted distinct indices (``y`` None without labels)
``gather_mapped``    ``(fn(X, state), y)`` of those rows, ``fn`` run where the rows are (optional:
                     :func:`gather_mapped` runs it here after ``gather`` for a source without it)
``reduce(fn, merge)``  ``merge([fn(block, state) for every block])``, a left fold in block order
``foreach(fn, c)``   ``c(fn(block, state), y_block)`` for every block, in row order
``map(fn, keep=)``   a source over the same rows whose blocks are ``fn(block, state)``; with
                     ``keep=True`` each is computed once, by the first pass over it, and read back
                     by later passes until :meth:`release` (in memory here, a spilled file on the
                     local engine, the workers' memory on Dask)
===================  ==========================================================================

:class:`ArrayRows` is the in-memory source (an estimator's ``fit(X)``);
:class:`~kernelsketch.out_of_core.engine.LocalEngine` and
:class:`~kernelsketch.distributed.engine.DaskEngine` are the others.

A mapped source's first pass runs the work of a ``reduce`` on the previous block beside ``fn`` on
the next one, when ``fn`` takes an ``also`` keyword (independent calls to run on its threads, all
done when it returns; the spectral embedding's search takes its ``Z^T Z``): the numbers of the
plain fold, the time of the larger of the two.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from .threads import run_pieces

__all__ = ["ArrayRows", "BlockFolds", "KeptRows", "RowSource", "count_rows", "gather_mapped", "sum_parts"]


@runtime_checkable
class RowSource(Protocol):
    """What a fit asks of its rows (see the module docstring)."""

    n_rows: int | None
    n_features: int
    has_labels: bool

    def gather(self, indices) -> tuple[Any, Any]: ...

    def reduce(self, fn: Callable, merge: Callable, state: Any = None, desc: str = "pass") -> Any: ...

    def foreach(self, fn: Callable, consume: Callable, state: Any = None, desc: str = "pass") -> None: ...

    def map(self, fn: Callable, state: Any = None, desc: str = "map", keep: bool = False) -> RowSource: ...

    def release(self) -> None: ...


def count_rows(rows) -> int:
    """``rows.n_rows``, counted by one pass when the source does not know it yet (a text file)."""
    if rows.n_rows is None:
        rows.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    return int(rows.n_rows)


def gather_mapped(rows, indices, fn, state=None, *, rowwise=False):
    """``(fn(X, state), y)`` of the rows at sorted distinct ``indices``: ``fn`` of what ``rows.gather`` returns,
    run where the rows are when the source offers it (``rows.gather_mapped``: a Dask worker, so that this process
    neither loads ``fn``'s kernels nor waits for them; ``fn`` a module-level function), else here.  The
    same numbers either way.

    ``rowwise``: ``fn`` maps each row on its own and returns arrays with a row for each of ``X``'s (or nested tuples
    of them, or None), so that a source may split the rows among its workers and stack what each returns
    (:func:`stack_rows`): the same numbers.
    """
    own = getattr(rows, "gather_mapped", None)
    if own is not None:
        return own(indices, fn, state, rowwise=rowwise) if rowwise else own(indices, fn, state)
    X, y = rows.gather(indices)
    return fn(X, state), y


def gather_mapped_pieces(rows, pieces, fn, state=None) -> list:
    """``[fn(X, state) for X of each piece]``: :func:`gather_mapped` of each piece of sorted distinct indices, all
    pieces at once where the source offers it (``rows.gather_mapped_pieces``: one Dask computation, the pieces on
    the workers side by side), else one after another here.  The same numbers either way."""
    own = getattr(rows, "gather_mapped_pieces", None)
    if own is not None:
        return own(pieces, fn, state)
    return [gather_mapped(rows, piece, fn, state)[0] for piece in pieces]


def stack_rows(parts):
    """The row-wise outputs of consecutive pieces of rows stacked into one: arrays concatenated along their first
    axis, tuples (and lists) element by element, None kept (every piece's None).  Anything else is not a row-wise
    output: TypeError."""
    first = parts[0]
    if first is None:
        if any(p is not None for p in parts):
            raise TypeError("row-wise outputs: None in some pieces and not in others")
        return None
    if isinstance(first, (tuple, list)):
        if any(not isinstance(p, type(first)) or len(p) != len(first) for p in parts):
            raise TypeError("row-wise outputs: pieces of different structures")
        return type(first)(stack_rows([p[i] for p in parts]) for i in range(len(first)))
    if isinstance(first, np.ndarray) and first.ndim >= 1:
        return np.concatenate(parts)
    raise TypeError(f"a row-wise output is arrays, tuples of them or None, not {type(first).__name__}")


def sum_parts(parts):
    """Element-wise sum of equal-length tuples, ``None`` skipped: the ``merge`` of additive per-block statistics."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return tuple(sum(vals[1:], vals[0]) for vals in zip(*parts, strict=True))


def _takes_also(fn) -> bool:
    try:
        return "also" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # (a builtin without a signature)
        return False


class BlockFolds:
    """``reduce``, ``foreach`` and ``map`` of a source that yields ``(X, y)`` blocks from ``_blocks(desc)``
    (in row order); ``_store()`` is where :meth:`map` with ``keep=True`` keeps its blocks (in memory here)."""

    stats: dict

    def _blocks(self, desc: str) -> Iterator[tuple[Any, Any]]:
        raise NotImplementedError

    def _store(self):
        return ListStore()

    def reduce(self, fn, merge, state=None, desc="pass"):
        """``merge([fn(X_block, state) for every block])``, merged as the blocks stream (``merge([running,
        part])``: merges are associative, as Dask's tree needs too), so a pass holds one partial result."""
        running = None
        for X, _ in self._blocks(desc):
            part = fn(X, state)
            running = part if running is None else merge([running, part])
        return merge([running])

    def foreach(self, fn, consume, state=None, desc="pass"):
        """``consume(fn(X_block, state), y_block)`` for every block, in row order."""
        for X, y in self._blocks(desc):
            consume(fn(X, state), y)

    def map(self, fn, state=None, desc="map", keep=False):
        """A source over the same rows whose blocks are ``fn(X_block, state)``; ``keep``: each computed once."""
        return KeptRows(self, fn, state, self._store() if keep else None)

    def release(self):
        """Nothing kept here (a mapped source's :meth:`KeptRows.release` drops its blocks)."""


class ListStore:
    """Kept blocks in memory: a list, in row order."""

    def __init__(self):
        self.values: list = []
        self.complete = False

    def append(self, value):
        self.values.append(value)

    def finish(self):
        self.complete = True

    def blocks(self):
        return iter(self.values)

    def close(self):
        self.values = []
        self.complete = False


class KeptRows(BlockFolds):
    """The blocks ``fn(X_block, state)`` of ``base`` (:meth:`BlockFolds.map`), computed on each pass, or with a
    ``store`` once: the first pass writes them there, later passes read them back until :meth:`release`.  The
    labels (``y``) are kept beside them, as integer codes of the values seen, so that no later pass reads
    ``base`` again."""

    def __init__(self, base, fn, state, store=None):
        self.base, self.fn, self.state, self.store = base, fn, state, store
        self.n_rows = base.n_rows
        self.n_features = None  # (blocks are whatever fn returns)
        self.has_labels = base.has_labels
        self.stats = base.stats
        self._also = _takes_also(fn)
        self._tuple = False  # (whether fn returns a tuple: kept flat, the labels' codes last)
        self._codes: dict = {}  # label value -> code, in the order first seen
        self._labels: np.ndarray | None = None

    def _entry(self, value, y):
        """What the store keeps of a block: ``value`` alone, or with its labels' codes last (flat)."""
        if not self.has_labels:
            return value
        self._tuple = isinstance(value, tuple)
        codes = None if y is None else self._encode(y)
        return (*value, codes) if self._tuple else (value, codes)

    def _value_and_labels(self, entry):
        if not self.has_labels:
            return entry, None
        *parts, codes = entry
        value = tuple(parts) if self._tuple else parts[0]
        if codes is None:
            return value, None
        if self._labels is None or self._labels.shape[0] != len(self._codes):
            self._labels = np.asarray(list(self._codes))  # (code order: the values in the order first seen)
        return value, self._labels[codes]

    def _encode(self, y):
        y = np.asarray(y)
        try:
            uniq, inverse = np.unique(y, return_inverse=True)
        except TypeError:  # (values that do not sort: mixed types, None)
            return np.array([self._codes.setdefault(v, len(self._codes)) for v in y.tolist()], dtype=np.int32)
        codes = np.array([self._codes.setdefault(v, len(self._codes)) for v in uniq.tolist()], dtype=np.int32)
        return codes[inverse.ravel()] if codes.size else np.zeros(0, dtype=np.int32)

    def _value(self, X, also=()):
        if self._also:
            return self.fn(X, self.state, also=also)
        run_pieces(also)
        return self.fn(X, self.state)

    def _computed(self, desc, beside=None):
        """``(value, y)`` per block computed from ``base`` (kept in the store when there is one); ``beside(value)``
        gives the calls to run beside the next block's ``fn`` (the previous value's work)."""
        pending: list = []
        for X, y in self.base._blocks(desc):
            value = self._value(X, pending)
            pending = []
            if self.store is not None:
                self.store.append(self._entry(value, y))
            yield value, y
            if beside is not None:
                pending = list(beside(value))
        if pending:
            run_pieces(pending)
        if self.store is not None:
            self.store.finish()
        self.n_rows = self.base.n_rows

    def _read_back(self, desc):
        self.stats["passes"] += 1
        for entry in self.store.blocks():
            yield self._value_and_labels(entry)

    def _blocks(self, desc):
        if self.store is not None and self.store.complete:
            return self._read_back(desc)
        return self._computed(desc)

    def reduce(self, fn, merge, state=None, desc="pass"):
        """:meth:`BlockFolds.reduce`; on a pass that computes the blocks, ``fn`` of each block runs beside the
        mapping of the next (the same left fold: parts merged in block order)."""
        if self.store is not None and self.store.complete:
            return super().reduce(fn, merge, state, desc)
        parts: list = []
        running = None

        def beside(value):
            return [lambda value=value: parts.append(fn(value, state))]

        try:
            for _ in self._computed(desc, beside):
                for part in parts:  # (the previous block's, done beside this one's mapping)
                    running = part if running is None else merge([running, part])
                parts.clear()
        except BaseException:
            self.release()
            raise
        for part in parts:  # (the last block's)
            running = part if running is None else merge([running, part])
        return merge([running])

    def foreach(self, fn, consume, state=None, desc="pass"):
        try:
            super().foreach(fn, consume, state, desc)
        except BaseException:
            if self.store is not None and not self.store.complete:
                self.release()
            raise

    def release(self):
        """Drop the kept blocks: this source is done with."""
        if self.store is not None:
            self.store.close()
        self._codes, self._labels = {}, None


class ArrayRows(BlockFolds):
    """Rows in memory (an array or CSR matrix, and optional labels) as a :class:`RowSource`, in blocks of
    ``block_rows`` rows (all of them in one block by default).

    Examples
    --------
    >>> import numpy as np
    >>> rows = ArrayRows(np.arange(10.0).reshape(5, 2), block_rows=2)
    >>> float(rows.reduce(lambda X, _: X.sum(), sum))
    45.0
    >>> rows.gather(np.array([1, 3]))[0].tolist()
    [[2.0, 3.0], [6.0, 7.0]]
    """

    def __init__(self, X, y=None, block_rows=None):
        self.X, self.y = X, y
        self.n_rows = int(X.shape[0])
        self.n_features = int(X.shape[1])
        self.has_labels = y is not None
        self.block_rows = max(1, int(block_rows or self.n_rows or 1))
        self.stats = {"passes": 0}

    def gather(self, indices):
        idx = np.asarray(indices, dtype=np.int64)
        X = self.X[idx]
        X = X if sp.issparse(X) else np.ascontiguousarray(X)
        return X, (None if self.y is None else np.asarray(self.y)[idx])

    def _blocks(self, desc):
        self.stats["passes"] += 1
        for start in range(0, self.n_rows, self.block_rows):
            stop = min(self.n_rows, start + self.block_rows)
            yield self.X[start:stop], (None if self.y is None else self.y[start:stop])
