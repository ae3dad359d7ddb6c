"""The out-of-core driver's Dask engine: the same questions answered by a Dask cluster.

:mod:`kernelsketch.out_of_core` asks an engine for the number of rows, rows
by index, a value reduced over every block and every block mapped in row
order.  Here the blocks are the row chunks of a dask array: the fitted state
a pass needs (an embedding, the k-means centres) is scattered once to every
worker (:func:`~kernelsketch.distributed.mapping.broadcast`), each chunk
returns only its small result (sums and counts, a block of labels, a block
of embedding), and results come back to the client in row order with a
bounded number in flight.  Nothing else moves: the data stay where the
workers read them.
"""

from __future__ import annotations

import copy
import functools
import os
import pickle
from functools import partial

import numpy as np

from ._dask import check_dask_matrix, import_dask, known_n_rows, persist_in_memory
from .mapping import broadcast
from .reduction import compute_reduced, tree_reduce
from .shards import gather_shard_rows, read_chunk

#: derived chunks (a kept graph) may take at most this share of the workers' memory limits
KEEP_MEMORY_FRACTION = 0.25


def _sketch_block(template, block):
    from ..out_of_core.fit import _fresh

    return _fresh(template).partial_fit(block)


def _payload_bytes(value):
    """About the bytes a result brings back: its arrays' data (NumPy, sparse), summed through tuples, lists and
    dicts, without pickling the result again to count it; anything else by its pickle."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        return value.nbytes
    if isinstance(value, tuple | list):
        return sum(_payload_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_payload_bytes(v) for v in value.values())
    if all(hasattr(value, a) for a in ("data", "indices", "indptr")):  # scipy CSR / CSC
        return sum(_payload_bytes(getattr(value, a)) for a in ("data", "indices", "indptr"))
    try:
        return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:
        return 0


#: rows of a piece at least when a row-wise mapping of gathered rows is split among the workers
SPLIT_ROWS = 10_000
#: bytes of one piece of a ``.npy`` chunk that a reduce pass's task reads and folds at a time (:func:`_run_on_chunk`:
#: the local engine's block size; a 64 MiB chunk's column extremes took 1.8x the time of its four 16 MiB pieces' on
#: one thread)
REDUCE_PIECE_BYTES = 16 << 20


def _peak_rss_mib():
    """This process's peak resident set in MiB (a worker's, through ``client.run``); None where not reported."""
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # (bytes on macOS, KiB on Linux)


def _run(fn, block, state):
    return fn(block, state)


def _pair(X, y):
    return X, y


def _run_on_chunk(fn, spec, read_options, preprocess, state, with_y, merge=None, sub_rows=None):
    """``fn(X, state)`` of a shard file's chunk read here (:func:`~kernelsketch.distributed.shards.read_chunk`),
    with the chunk's labels when ``with_y``: one task a chunk.

    With ``merge`` (a reduce pass's) and ``sub_rows``, a ``.npy`` chunk is read and passed to ``fn`` in pieces of
    ``sub_rows`` rows, their results folded left with ``merge`` here: each piece's reads and temporaries stay in
    the worker's cache and heap (:data:`REDUCE_PIECE_BYTES`), where a 64 MiB chunk's each took fresh pages."""
    path, fmt, start, stop = spec
    if merge is None or sub_rows is None or fmt != "npy" or stop - start <= sub_rows:
        X, y = read_chunk(spec, read_options, preprocess)
        out = fn(X, state)
        return (out, y) if with_y else out
    out = None
    for lo in range(start, stop, sub_rows):
        X, _ = read_chunk((path, fmt, lo, min(lo + sub_rows, stop)), read_options, preprocess)
        part = fn(X, state)
        out = part if out is None else merge([out, part])
    return out


def _run_on_rows(fn, rows, state):
    X, y = rows
    return fn(X, state), y


def _split_labels(consume):
    """``consume`` of results that carry their chunk's labels (``(out, y)``, :func:`_run_on_chunk`)."""

    def split(result, _none):
        return consume(result[0], result[1])

    return split


def _worker_memory(method):
    """A worker killed for memory (``distributed.KilledWorker``) becomes a MemoryError naming the step and the limit."""

    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            if type(exc).__name__ != "KilledWorker":
                raise
            step = kwargs.get("desc") or (args[-1] if args and isinstance(args[-1], str) else method.__name__)
            raise MemoryError(
                f"a Dask worker died during '{step}' ({self.worker_memory()} per worker, chunks of "
                f"{self.chunk_mib():.0f} MiB): give each worker more memory (--worker-memory, or "
                "connect(n_workers, memory_limit=...)), fewer rows per chunk, or fewer workers on this machine"
            ) from None

    return wrapped


class DaskEngine:
    """Row chunks of a dask array, computed on a Dask cluster (or dask's local threads).

    Parameters
    ----------
    X : dask.array.Array (n_samples, n_features)
    y : dask.array.Array (n_samples,), optional
        Labels chunked like X's rows (from a label column).
    client : distributed.Client, optional
        Without one, dask's default scheduler runs the tasks.
    split_every : int, default=8
        Fan-in of the merge tree of streaming estimators.
    window : int, optional
        Blocks in flight while results are consumed (``foreach``) or merged
        (``reduce``) in order (default ``2 * workers + 2``; 4 without a client, where a
        ``reduce`` computes one chunk per core at a time if that is more): bounds the
        client's memory.

    Attributes
    ----------
    stats : dict
        ``tasks`` submitted, ``bytes_to_client`` (results brought back),
        ``bytes_broadcast`` (pickled state scattered, once per pass), ``passes`` and ``bytes_persisted``
        (NumPy data found in the input's graph, e.g. ``dask.array.from_array`` of an ndarray, put on the
        workers once at the start so that no pass sends it again).
    """

    name = "dask"

    def __init__(self, X, y=None, *, client=None, split_every=8, window=None, feature_names=None):
        X = check_dask_matrix(X)
        X, n = known_n_rows(X)
        if y is not None and tuple(y.chunks[0]) != tuple(X.chunks[0]):
            y = y.rechunk((X.chunks[0],))
        # arrays built from NumPy data carry it in their graphs: put it on the workers once, not once a pass
        (X, y), sent = persist_in_memory(client, X, y)
        self.X, self.y, self.client = X, y, client
        self.source = None  # (chunks on workers: no text file's missing cells read here)
        self.n_rows = n
        self.n_features = int(X.shape[1])
        self.has_labels = y is not None
        self.sparse = False
        self.dtype = np.dtype(X.dtype)
        self.feature_names = feature_names
        #: the files this engine reads (set by :meth:`open`; an output may never be one of them)
        self.input_paths: list = []
        self.split_every = split_every
        #: where the chunks of shard files come from (:func:`~kernelsketch.distributed.shards.gather_shard_rows`), and
        #: the row-wise steps applied to them since (:meth:`set_preprocess`): rows by index are read alone
        self._shards = None
        self._preprocess: tuple = ()
        workers = len(client.scheduler_info()["workers"]) if client is not None else 1
        self.window = window or (2 * max(workers, 1) + 2)
        self.stats = {"tasks": 0, "bytes_to_client": 0, "bytes_broadcast": 0, "passes": 0, "bytes_persisted": sent}

    def worker_memory(self):
        """The workers' memory limit, as text ("unknown" without a client)."""
        if self.client is None:
            return "unknown memory"
        limits = {w.get("memory_limit") for w in self.client.scheduler_info()["workers"].values()}
        return ", ".join(f"{v / 2**20:,.0f} MiB" if v else "no limit" for v in sorted(limits, key=lambda v: v or 0))

    def chunk_mib(self):
        """The largest chunk's size in MiB."""
        return max(self.X.chunks[0]) * self.n_features * self.dtype.itemsize / 2**20

    @classmethod
    def open(cls, data, *, client=None, chunk_rows=None, columns=None, label_column=None, dtype=None, **unused):
        """An engine for a dask array, or for ``.npy`` / Parquet shards read by the workers."""
        from ..utils.dispatch import is_dask_array
        from .shards import _open_shards

        bad = sorted(k for k, v in unused.items() if v is not None and k not in ("format",))
        if unused.get("format") not in (None, "npy", "parquet"):
            bad.append("format")
        if bad:
            raise ValueError(
                f"options {bad} apply to text files read in this process, not to Dask "
                "(which reads .npy or Parquet shards)"
            )
        if is_dask_array(data):
            return cls(data, client=client)
        X, y, shards = _open_shards(data, columns, label_column, dtype, chunk_rows)
        engine = cls(X, y, client=client)
        engine._shards = shards
        engine.input_paths = [data]  # the shard directory (or file): outputs may never be in it
        return engine

    def worker_peak_mib(self):
        """The largest peak resident set of the cluster's workers so far, in MiB (None without a client).

        A local cluster's workers are forked by a fork server
        (:func:`~kernelsketch.distributed.cluster.start_worker_forkserver`), not waited for by the process that
        started them, so its own resource accounting never sees their peaks: each worker reports its own."""
        if self.client is None:
            return None
        peaks = [p for p in self.client.run(_peak_rss_mib).values() if p is not None]
        return round(max(peaks), 1) if peaks else None

    def describe(self):
        where = self.client.scheduler.address if self.client is not None else "local threads"
        return (
            f"dask array of {self.n_rows} rows x {self.n_features} features in {self.X.numblocks[0]} chunks on {where}"
        )

    def _state(self, state):
        if state is None:
            return None
        self.stats["bytes_broadcast"] += len(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
        return broadcast(state, self.client)

    def _count(self, value):
        self.stats["bytes_to_client"] += _payload_bytes(value)

    def set_preprocess(self, fn):
        """Apply ``fn`` to every chunk from now on (lazily, on the workers: ``X.map_blocks(fn)``).

        The chunks' dtype is what ``fn`` returns (a code read as 74.5 in an integer column makes the
        column float, as on the local engine), found on one row of zeros.
        """
        probe = np.asarray(fn(np.zeros((1, self.X.shape[1]), dtype=self.X.dtype)))
        width = probe.shape[1]  # (a column selection by name changes it)
        self.X = self.X.map_blocks(fn, dtype=probe.dtype, chunks=(self.X.chunks[0], (width,)))
        self._preprocess = (*self._preprocess, fn)
        self.dtype = probe.dtype
        self.n_features = int(width)

    @_worker_memory
    def gather(self, indices):
        """Rows at sorted distinct ``indices``; each chunk sends back only its selected rows."""
        idx = np.asarray(indices, dtype=np.int64)
        if idx.size == 0:
            return np.empty((0, self.n_features), dtype=self.dtype), None
        dask = import_dask("dask")
        rows, tasks = self._rows(idx)
        X, y = dask.compute(rows)[0]
        self.stats["tasks"] += tasks
        self._count((X, y))
        return np.asarray(X), (None if y is None else np.asarray(y))

    def _rows(self, idx):
        """``(a delayed (X, y), its task count)`` of the rows at sorted distinct ``idx``: from shard files, one task
        reads only those rows of each chunk that holds one (:func:`~kernelsketch.distributed.shards.gather_shard_rows`);
        from any other dask array, ``X[idx]`` (dask's take, which computes every chunk that holds one)."""
        dask = import_dask("dask")
        if self._shards is not None:
            return gather_shard_rows(self._shards, idx, self._preprocess)
        rows = dask.delayed(_pair, pure=True)(self.X[idx], self.y[idx] if self.y is not None else None)
        return rows, self.X.numblocks[0] + 1

    @_worker_memory
    def gather_mapped(self, indices, fn, state=None, rowwise=False):
        """``(fn(X, state), y)`` of the rows at sorted distinct ``indices``, ``fn`` run on the worker that collects
        them (:func:`~kernelsketch.utils.row_source.gather_mapped`): the seeding sample's embedding, where the
        workers have the search's kernels loaded and this process has not.  ``rowwise`` (``fn`` maps each row on its
        own): with a client of several workers, the rows are cut into one consecutive piece a worker (at least
        :data:`SPLIT_ROWS` rows each), gathered and mapped side by side, and the outputs stacked in order."""
        from ..utils.row_source import stack_rows

        idx = np.asarray(indices, dtype=np.int64)
        if idx.size == 0:
            X, y = self.gather(idx)
            return fn(X, state), y
        n = 1
        if rowwise and self.client is not None:
            n = max(1, min(len(self.client.scheduler_info().get("workers", {})), idx.size // SPLIT_ROWS))
        outs = self._mapped(np.array_split(idx, n), fn, state)
        out, y = outs[0] if n == 1 else (stack_rows([o for o, _ in outs]), stack_rows([y for _, y in outs]))
        return out, (None if y is None else np.asarray(y))

    @_worker_memory
    def gather_mapped_pieces(self, pieces, fn, state=None):
        """``[fn(X, state) for X of each piece]`` of pieces of sorted distinct indices, each run on the worker that
        collects its rows, all in one computation (:func:`~kernelsketch.utils.row_source.gather_mapped_pieces`:
        the spectral embedding's statistics of a sample, its pieces on the workers side by side)."""
        return [out for out, _ in self._mapped(pieces, fn, state)]

    def _mapped(self, pieces, fn, state):
        """``[(fn(X, state), y)]`` of each piece's rows (:meth:`_rows`), each run where its rows are, in one
        computation; its tasks and the bytes sent back are counted."""
        dask = import_dask("dask")
        handle = self._state(state)
        calls, tasks = [], 0
        for piece in pieces:
            rows, n = self._rows(np.asarray(piece, dtype=np.int64))
            calls.append(dask.delayed(_run_on_rows, pure=False)(fn, rows, handle))
            tasks += n + 1
        outs = dask.compute(*calls)
        self.stats["tasks"] += tasks
        for out in outs:
            self._count(out)
        return outs

    def reservoir(self, m, seed, desc="sample"):
        """A seeded uniform sample of ``m`` rows: ``(X, y)`` (the rows are known: a seeded draw, then :meth:`gather`).

        The driver asks for a reservoir only while the row count is unknown, which a dask array's
        never is; this answers the Engine contract for any other caller.
        """
        rng = np.random.default_rng(seed)
        k = min(int(m), self.n_rows)
        return self.gather(np.sort(rng.choice(self.n_rows, k, replace=False)))

    def _blocks(self):
        """The chunks as delayed objects, each with only its own tasks (:meth:`_chunk_graphs`)."""
        kept = getattr(self, "_kept", None)
        return list(kept) if kept is not None else self._chunk_graphs()

    def _chunk_graphs(self):
        """``X``'s chunks as delayed objects, each culled to the tasks it needs (made once per ``X``).

        ``X.to_delayed()`` gives every chunk the whole array's graph: a pass that submits its chunks one by one
        (:meth:`_in_order`, a window at a time) would pickle every chunk's read tasks with each of them (about 10 ms
        of this process's time a chunk with the 5M x 20 file's 24 chunks of 16 MiB)."""
        cached = vars(self).get("_culled")
        if cached is None or cached[0] is not self.X:
            dask = import_dask("dask")
            cached = self._culled = (self.X, [dask.optimize(d)[0] for d in self.X.to_delayed().ravel()])
        return list(cached[1])

    @_worker_memory
    def map(self, fn, state=None, desc="map", keep=False):
        """An engine whose chunks are ``fn(chunk, state)`` (:mod:`kernelsketch.utils.row_source`); ``keep``: computed
        once, at once, and kept on the workers (``persist``) until :meth:`release`.

        Its :meth:`reduce` and :meth:`foreach` read those chunks (the labels are this engine's), so a later
        pass does not compute ``fn`` again: the spectral embedding's graph found in the fit pass serves the
        assignment pass.  Without ``keep`` each pass computes ``fn`` of its chunk on the workers.
        """
        dask = import_dask("dask")
        handle = self._state(state)
        parts = [dask.delayed(_run, pure=False)(fn, b, handle) for b in self._blocks()]
        if keep:
            self.stats["tasks"] += len(parts)
            parts = self.client.persist(parts) if self.client is not None else list(dask.persist(*parts))
        mapped = copy.copy(self)
        mapped._kept = parts
        return mapped

    def release(self):
        """Drop the chunks :meth:`map` kept on the workers."""
        kept, self._kept = getattr(self, "_kept", None), None
        if kept and self.client is not None:
            from distributed import futures_of

            self.client.cancel(futures_of(kept))

    def can_keep(self, nbytes):
        """Whether the workers can keep ``nbytes`` of derived chunks: a client, and at most
        :data:`KEEP_MEMORY_FRACTION` of their memory limits (any worker without a limit: yes)."""
        if self.client is None:
            return False
        limits = [w.get("memory_limit") or 0 for w in self.client.scheduler_info()["workers"].values()]
        if not limits:
            return False
        return any(v == 0 for v in limits) or nbytes <= KEEP_MEMORY_FRACTION * sum(limits)

    @_worker_memory
    def reduce(self, fn, merge, state=None, desc="pass"):
        """``merge`` of ``fn(block, state)`` over every chunk: computed on the workers, folded on the client.

        The chunks' results are merged in chunk order as they arrive (``merge([running, part])``, the
        local engine's left fold, so the sums are bit-identical on both engines), ``window`` chunks in
        flight: the client holds one running result and at most ``window`` parts, never one per chunk.
        """
        running = None

        def fold(part, _y):
            nonlocal running
            running = part if running is None else merge([running, part])

        # (without a client, dask's threads here: a batch per core at least, each part a small result)
        batch = self.window if self.client is not None else max(self.window, os.cpu_count() or 1)
        self._in_order(fn, fold, state, desc, labels=False, batch=batch, merge=merge)
        return merge([running])

    @_worker_memory
    def stream_fit(self, template, desc="partial_fit"):
        """Each chunk sketched by ``partial_fit`` on a copy of ``template``, merged up a tree."""
        self.stats["passes"] += 1
        self.stats["tasks"] += 2 * self.X.numblocks[0]
        merged = compute_reduced(tree_reduce(self.X, partial(_sketch_block, template), split_every=self.split_every))
        self._count(merged)
        return merged

    @_worker_memory
    def foreach(self, fn, consume, state=None, desc="transform"):
        """``consume(fn(block, state), y_block)`` for every chunk in row order, ``window`` chunks in flight."""
        self._in_order(fn, consume, state, desc, labels=True)

    def _in_order(self, fn, consume, state, desc, labels, batch=None, merge=None):
        """``consume(fn(block, state), y_block or None)`` in chunk order, at most ``window`` chunks in flight
        (without a client: computed ``batch`` chunks at a time, default ``window``); ``merge``: a reduce pass's, with
        which a shard file's chunk is folded in pieces in its task (:func:`_run_on_chunk`)."""
        dask = import_dask("dask")
        from ..utils.progress import progress

        handle = self._state(state)
        with_y = labels and self.y is not None
        if self._shards is not None and getattr(self, "_kept", None) is None:
            # shard files: each chunk read, preprocessed and passed to fn in one task (the array's graph has three
            # or four a chunk, each scheduled and sent on its own), its labels in its result
            options, steps = self._shards.read_options, tuple(self._preprocess)
            call = dask.delayed(_run_on_chunk, pure=False)
            sub_rows = max(1, REDUCE_PIECE_BYTES // max(1, self.n_features * self.dtype.itemsize))
            parts = [call(fn, spec, options, steps, handle, with_y, merge, sub_rows) for spec in self._shards.chunks]
            ys, joined = [None] * len(parts), with_y
        else:
            blocks = self._blocks()
            ys = list(self.y.to_delayed().ravel()) if with_y else [None] * len(blocks)
            parts = [dask.delayed(_run, pure=False)(fn, b, handle) for b in blocks]
            joined = False
        count = self._count
        if joined:  # (the bytes counted are fn's output's, as for any other engine's chunk)
            consume, count = _split_labels(consume), (lambda result: self._count(result[0]))
        self.stats["tasks"] += len(parts)
        self.stats["passes"] += 1
        bar = progress(total=self.n_rows, desc=desc, unit="rows")
        try:
            if self.client is not None:
                self._foreach_futures(parts, ys, consume, bar, count)
            else:
                batch = batch or self.window
                for start in range(0, len(parts), batch):
                    chunk = parts[start : start + batch]
                    ychunk = [y for y in ys[start : start + batch] if y is not None]
                    done = dask.compute(*chunk, *ychunk)
                    outs, youts = done[: len(chunk)], done[len(chunk) :]
                    for i, out in enumerate(outs):
                        count(out)
                        consume(out, youts[i] if youts else None)
                        bar.update(self.X.chunks[0][start + i])
        finally:
            bar.close()

    def _foreach_futures(self, parts, ys, consume, bar, count):
        client = self.client
        futures = {}

        def submit(i):
            futures[i] = client.compute([parts[i]] + ([ys[i]] if ys[i] is not None else []))

        for i in range(min(self.window, len(parts))):
            submit(i)
        try:
            for i in range(len(parts)):
                done = [f.result() for f in futures.pop(i)]
                if i + self.window < len(parts):
                    submit(i + self.window)
                count(done[0])
                consume(done[0], done[1] if len(done) > 1 else None)
                bar.update(self.X.chunks[0][i])
        finally:
            for fs in futures.values():
                for f in fs:
                    f.cancel()
