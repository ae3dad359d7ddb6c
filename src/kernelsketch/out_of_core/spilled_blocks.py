"""Blocks kept on disk for a run: the local engine's store of a kept mapped source.

``engine.map(fn, keep=True)`` (:mod:`kernelsketch.utils.row_source`) computes ``fn`` of each block once, in
the first pass over it, and later passes read the results back.  On the local engine they go to a
:class:`SpilledBlocks`: each array of a block's result in its own file in a private temporary folder (plain
appends on a background thread, one block in flight, overlapping the next block's work: their pages go to the
page cache, not to this process's memory), read back in the same order by each later pass.  An integer array
whose values fit in int16 is stored as int16 (the spectral embedding's landmark indices: 2 bytes instead of 4)
and read back in its own dtype.  The folder is removed by :meth:`SpilledBlocks.close` (also on error), and a
killed run's folder by the next run (:func:`remove_stale_graphs`).

The spectral clustering keeps each row's landmark graph this way (``r`` indices and weights a row), so that the
assignment pass needs no second nearest-landmark search: the same numbers, so the same labels.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["SpilledBlocks", "remove_stale_graphs"]

_writer_lock = threading.Lock()
_writer_pool: tuple[int, ThreadPoolExecutor] | None = None


def _writer() -> ThreadPoolExecutor:
    """The process's one block-writing thread (its own: the shared pool's threads run the searches)."""
    global _writer_pool
    with _writer_lock:
        if _writer_pool is None or _writer_pool[0] != os.getpid():  # (a forked child has no such thread)
            _writer_pool = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernelsketch-graph"))
        return _writer_pool[1]


#: the kept blocks' folder: ``kernelsketch-graph-<pid>-<random>`` in the temporary directory
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


class SpilledBlocks:
    """A run-scoped store of blocks (tuples whose arrays go to disk), written once in order, read in order.

    Parameters
    ----------
    dir : path-like, optional
        Where the temporary folder is made (default: the system's temporary directory).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.out_of_core.spilled_blocks import SpilledBlocks
    >>> with SpilledBlocks() as store:
    ...     store.append((np.array([[0, 2], [1, 0]], np.int32), np.array([[0.7, 0.3], [0.6, 0.4]]), True))
    ...     store.finish()
    ...     indices, weights, flag = next(store.blocks())
    >>> indices.tolist(), indices.dtype.name, weights.tolist(), flag
    ([[0, 2], [1, 0]], 'int32', [[0.7, 0.3], [0.6, 0.4]], True)
    """

    #: write each block on a background thread while the caller computes the next (one write in flight)
    background = True

    def __init__(self, dir=None):
        remove_stale_graphs(dir)
        self.folder = tempfile.mkdtemp(prefix=f"{GRAPH_PREFIX}{os.getpid()}-", dir=dir)
        self._files: list | None = None
        self.layout: list | None = None  # per element: (original dtype, trailing shape) of an array, None otherwise
        self.blocks_kept: list = []  # per block: (rows, stored dtypes, the non-array elements)
        self.rows = 0
        self.nbytes = 0
        self.complete = False
        self.single: bool | None = None
        self._pending = None
        self._closed = False

    def append(self, value):
        """Add the next block's result: an array, or a tuple whose arrays share their first dimension (the block's
        rows) and whose other items are kept as they are."""
        if self.complete or self._closed:
            raise RuntimeError("the kept blocks are finished: they are written by one pass only")
        if self.single is None:
            self.single = not isinstance(value, tuple)  # (one array a block: kept as a 1-tuple, given back bare)
        value = (value,) if self.single else tuple(value)
        layout = [(np.asarray(v).dtype, np.asarray(v).shape[1:]) if isinstance(v, np.ndarray) else None for v in value]
        if self.layout is None:
            self.layout = layout
            self._files = [
                open(os.path.join(self.folder, f"{i}.bin"), "wb") if kind is not None else None
                for i, kind in enumerate(layout)
            ]
        elif [k is None for k in layout] != [k is None for k in self.layout] or any(
            a is not None and (a[0] != b[0] or a[1] != b[1]) for a, b in zip(layout, self.layout, strict=True)
        ):
            raise ValueError("every block must have the first block's arrays (dtypes and widths)")
        arrays = [
            np.ascontiguousarray(_small(v)) if k is not None else None for v, k in zip(value, layout, strict=True)
        ]
        rows = {a.shape[0] for a in arrays if a is not None}
        if len(rows) > 1:
            raise ValueError(f"the arrays of one block must have the same rows, got {sorted(rows)}")
        n = rows.pop() if rows else 0
        others = tuple(v if k is None else None for v, k in zip(value, layout, strict=True))
        self.blocks_kept.append((n, [None if a is None else a.dtype for a in arrays], others))
        if self.background:
            self._wait()  # one write in flight: at most one block is held here
            # (an array stored as given is copied: the caller may reuse it while it is written)
            arrays = [a.copy() if a is not None and a is v else a for a, v in zip(arrays, value, strict=True)]
            self._pending = _writer().submit(self._write, arrays)
        else:
            self._write(arrays)
        self.rows += n
        self.nbytes += sum(a.nbytes for a in arrays if a is not None)

    def _write(self, arrays):
        for f, a in zip(self._files, arrays, strict=True):
            if a is not None:
                a.tofile(f)

    def _wait(self):
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()  # (a failed write raises here)

    def finish(self):
        """Close the files: the pass that wrote them saw every block."""
        self._wait()
        for f in self._files or ():
            if f is not None:
                f.close()
        self._files = None
        self.complete = True

    def blocks(self):
        """The blocks, from the first on, each as it was appended (arrays in their own dtypes)."""
        if not self.complete:
            raise RuntimeError("the kept blocks are read only after the pass that writes them has finished")
        paths = [None if k is None else os.path.join(self.folder, f"{i}.bin") for i, k in enumerate(self.layout or ())]
        files = [None if p is None else open(p, "rb") for p in paths]
        try:
            for n, dtypes, others in self.blocks_kept:
                out = []
                for f, kind, stored, other in zip(files, self.layout, dtypes, others, strict=True):
                    if kind is None:
                        out.append(other)
                        continue
                    count = n * int(np.prod(kind[1], dtype=np.int64))
                    a = np.fromfile(f, dtype=stored, count=count).reshape((n, *kind[1]))
                    out.append(a.astype(kind[0], copy=False))
                yield out[0] if self.single else tuple(out)
        finally:
            for f in files:
                if f is not None:
                    f.close()

    def close(self):
        """Remove the temporary folder and everything in it."""
        self._closed = True
        try:
            self._wait()
        except Exception:  # (closing after a failed write: the failure was or will be raised elsewhere)
            pass
        finally:  # (also when Ctrl-C interrupts the wait)
            for f in self._files or ():
                if f is not None:
                    f.close()
            self._files = None
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _small(a):
    """An integer array as int16 when every value fits (stored in 2 bytes a value), else as it is."""
    a = np.asarray(a)
    if a.dtype.kind in "iu" and a.dtype.itemsize > 2 and a.size:
        lo, hi = int(a.min()), int(a.max())
        if np.iinfo(np.int16).min <= lo and hi <= np.iinfo(np.int16).max:
            return a.astype(np.int16)
    return a
