"""Each row's landmark graph, kept from the fit pass so that later passes need no second search.

The default clustering finds every row's ``r`` nearest landmarks twice: once in the fit pass (for
the graph statistics ``Z^T Z``) and once in the assignment pass (for the embedding).  The search
is almost all of either pass.  A :class:`GraphCache` keeps what the first search found, ``r``
landmark indices (int16 for at most 32,768 landmarks, else int32) and ``r`` weights (in their own
dtype: float32 for float32 rows) per row, so that the assignment pass (and any Lloyd pass) is a
sparse product with the projection: the same numbers as searching again, so the same labels.

The rows are written in the order the fit pass reads them, to two files in a private temporary
folder (plain appends on a background thread, one block in flight, overlapping the next block's
search: their pages go to the page cache, not to this process's memory), and read back in the
same order by each later pass.  That order is the local engine's: its passes read the
same blocks, in row order, after the same preprocessing.  The folder is removed by
:meth:`GraphCache.close` (also on error: use it as a context manager).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..utils.progress import progress
from .engine import LocalEngine

__all__ = ["GraphCache", "KeptGraphs"]

_writer_lock = threading.Lock()
_writer_pool: tuple[int, ThreadPoolExecutor] | None = None


def _writer() -> ThreadPoolExecutor:
    """The process's one graph-writing thread (its own: the shared pool's threads run the searches)."""
    global _writer_pool
    with _writer_lock:
        if _writer_pool is None or _writer_pool[0] != os.getpid():  # (a forked child has no such thread)
            _writer_pool = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernelsketch-graph"))
        return _writer_pool[1]


#: the kept graph's folder: ``kernelsketch-graph-<pid>-<random>`` in the temporary directory
GRAPH_PREFIX = "kernelsketch-graph-"
_GRAPH_FOLDER = re.compile(re.escape(GRAPH_PREFIX) + r"(?P<pid>\d+)-")


def remove_stale_graphs(dir=None) -> list[str]:
    """Delete the kept-graph folders that killed runs left in ``dir`` (default: the temporary directory).

    A folder is stale when the process named in it (``kernelsketch-graph-<pid>-...``) no longer runs
    (SIGKILL, a power cut: nothing removed it), as :func:`~kernelsketch.io.atomic.remove_stale_parts` does for
    an output's part files; a live run's folder is kept.  Returns the folders removed.
    """
    from ..io.atomic import _pid_alive

    folder = tempfile.gettempdir() if dir is None else os.fspath(dir)
    removed: list[str] = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for name in entries:
        m = _GRAPH_FOLDER.match(name)
        if m is None or int(m["pid"]) == os.getpid() or _pid_alive(int(m["pid"])):
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class GraphCache:
    """A run-scoped store of ``(indices, weights)`` blocks, written once in row order, read in row order.

    Parameters
    ----------
    dir : path-like, optional
        Where the temporary folder is made (default: the system's temporary directory).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.out_of_core.graph_cache import GraphCache
    >>> with GraphCache() as cache:
    ...     cache.append(np.array([[0, 2], [1, 0]], np.int32), np.array([[0.7, 0.3], [0.6, 0.4]]))
    ...     cache.finish()
    ...     reader = cache.reader()
    ...     indices, weights = reader.next(2)
    >>> indices.tolist(), weights.tolist()
    ([[0, 2], [1, 0]], [[0.7, 0.3], [0.6, 0.4]])
    """

    def __init__(self, dir=None):
        remove_stale_graphs(dir)
        self.folder = tempfile.mkdtemp(prefix=f"{GRAPH_PREFIX}{os.getpid()}-", dir=dir)
        self._paths = (os.path.join(self.folder, "indices.bin"), os.path.join(self.folder, "weights.bin"))
        self._files = [open(p, "wb") for p in self._paths]
        self.width = None
        self.rows = 0
        self.complete = False
        self.index_dtype = None  # int16 when every index fits (fewer bytes to write and read), else int32
        self.weight_dtype = None  # the first block's: float32 or float64
        self.float32_rows = None  # whether the rows searched were float32 (their embedding is float32 too)
        self.block_sizes = []  # rows of each block appended, in order
        self._pending = None

    #: write each block on a background thread while the caller computes the next (one write in flight)
    background = True

    def append(self, indices, weights, n_points=None, float32_rows=False):
        """Add the next block's graph (rows in order): ``indices`` (n, r) int, ``weights`` (n, r) float.

        ``n_points``: how many points the indices are taken from (the landmarks), known at the first
        block: with at most 32,768 the indices are stored as int16.  ``float32_rows``: whether the rows
        searched were float32 (as the engine over this graph, :meth:`engine`, says of its blocks).
        """
        if self.complete or self._files is None:
            raise RuntimeError("the graph cache is finished: it is written by one pass only")
        indices = np.asarray(indices)
        if self.weight_dtype is None:
            self.weight_dtype = np.dtype(np.float32 if np.asarray(weights).dtype == np.float32 else np.float64)
        weights = np.ascontiguousarray(weights, dtype=self.weight_dtype)
        if indices.shape != weights.shape or indices.ndim != 2:
            raise ValueError(f"indices {indices.shape} and weights {weights.shape} must be one (n, r) shape")
        if self.width is None:
            self.width = indices.shape[1]
        elif indices.shape[1] != self.width:
            raise ValueError(f"every block has {self.width} neighbours per row, got {indices.shape[1]}")
        if self.index_dtype is None:
            fits = n_points is not None and n_points <= np.iinfo(np.int16).max + 1
            self.index_dtype = np.dtype(np.int16 if fits else np.int32)
        small_max = np.iinfo(self.index_dtype).max
        if self.index_dtype == np.int16 and indices.size and (indices.min() < 0 or indices.max() > small_max):
            raise ValueError("an index exceeds the number of points given at the first block")
        small = np.array(indices, dtype=self.index_dtype, order="C")  # (a copy: the caller may reuse its arrays)
        if self.background:
            self._wait()  # one write in flight: at most one block's graph is held here
            self._pending = _writer().submit(self._write, small, weights.copy())
        else:
            self._write(small, weights)
        self.rows += indices.shape[0]
        self.block_sizes.append(indices.shape[0])
        if self.float32_rows is None:
            self.float32_rows = bool(float32_rows)

    def _write(self, indices, weights):
        indices.tofile(self._files[0])
        weights.tofile(self._files[1])

    def _wait(self):
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()  # (a failed write raises here)

    def finish(self):
        """Close the files: the pass that wrote them saw every row."""
        self._wait()
        for f in self._files or ():
            f.close()
        self._files = None
        self.complete = True

    def reader(self):
        """A reader of the blocks from the first row on (one per later pass)."""
        if not self.complete:
            raise RuntimeError("the graph cache is read only after the pass that writes it has finished")
        return _Reader(self)

    def engine(self, like):
        """The kept graph as an engine over its blocks, in the blocks of the pass that wrote it: each block
        ``(indices, weights, float32 rows?)`` as :class:`KeptGraphs`' chunks (no labels: the file is not read).

        ``like``: the engine of the data (its pass counter is shared).
        """
        if not self.complete:
            raise RuntimeError("the graph cache is read only after the pass that writes it has finished")
        return _GraphEngine(self, like)

    def close(self):
        """Remove the temporary folder and everything in it."""
        try:
            self._wait()
        except Exception:  # (closing after a failed write: the failure was or will be raised elsewhere)
            pass
        finally:  # (also when Ctrl-C interrupts the wait)
            for f in self._files or ():
                f.close()
            self._files = None
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def nbytes(self):
        """Bytes on disk."""
        itemsizes = np.dtype(self.index_dtype or np.int32).itemsize + np.dtype(self.weight_dtype or np.float64).itemsize
        return self.rows * (self.width or 0) * itemsizes


class _Reader:
    def __init__(self, cache):
        self.cache = cache
        self.row = 0
        self._files = [open(p, "rb") for p in cache._paths]

    def next(self, n):
        """The next ``n`` rows' ``(indices, weights)``."""
        r = self.cache.width
        if self.row + n > self.cache.rows:
            raise ValueError(f"the graph cache holds {self.cache.rows} rows; asked for rows {self.row}..{self.row + n}")
        indices = np.fromfile(self._files[0], dtype=self.cache.index_dtype, count=n * r).reshape(n, r).astype(np.int32)
        weights = np.fromfile(self._files[1], dtype=self.cache.weight_dtype, count=n * r).reshape(n, r)
        self.row += n
        if self.row == self.cache.rows:
            self.close()
        return indices, weights

    def close(self):
        for f in self._files:
            f.close()


class _GraphEngine(LocalEngine):
    """A finished :class:`GraphCache` read as a local engine's blocks, in row order: :meth:`reduce` and
    :meth:`foreach` are the local engine's, over ``((indices, weights, float32 rows?), None)`` blocks."""

    has_labels = False

    def __init__(self, cache, like):  # (no source: the blocks are the kept graph's)
        self.cache = cache
        self.n_rows = cache.rows
        self.stats = like.stats

    def _blocks(self, desc):
        self.stats["passes"] += 1
        reader = self.cache.reader()
        bar = progress(total=self.n_rows, desc=desc, unit="rows")
        try:
            for n in self.cache.block_sizes:
                indices, weights = reader.next(n)
                yield (indices, weights, self.cache.float32_rows), None
                bar.update(n)
        except BaseException:
            reader.close()
            getattr(bar, "abort", bar.close)()
            raise
        bar.close()


class KeptGraphs:
    """Each chunk's graph kept by the engine itself for the run (Dask: on the workers, ``engine.derive``).

    The Dask counterpart of :class:`GraphCache`: the fit pass derives an engine whose chunks are the
    graphs (``(indices, weights, float32 input?)``) and sums the statistics over it; the assignment
    pass (and any Lloyd pass) embeds those chunks, so each row is searched once.  :meth:`close`
    drops them (also on error: use it as a context manager).
    """

    def __init__(self):
        self.graphs = None

    def keep(self, engine, fn, state, desc="graph"):
        """The engine of ``fn(chunk, state)`` over ``engine``'s chunks, kept until :meth:`close`."""
        self.graphs = engine.derive(fn, state, desc=desc)
        return self.graphs

    def close(self):
        if self.graphs is not None:
            self.graphs.release()
            self.graphs = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
