"""Threads: BLAS thread limits and row-parallel elementwise passes.

BLAS already runs the GEMMs of a kernel block on every core; the elementwise
pass that follows (``exp`` over an ``N x m`` block) is a single-threaded numpy
ufunc and, for the Gaussian block, costs as much as the GEMM.  numpy releases
the GIL inside ufunc loops, so splitting the rows of the block over a few
threads runs that pass on all cores.

How many threads: as many as BLAS is currently allowed (``threadpoolctl``), so
one knob -- ``threadpoolctl.threadpool_limits`` or ``OPENBLAS_NUM_THREADS`` /
``OMP_NUM_THREADS`` -- governs all of kernelsketch's parallelism, and a Dask
worker that pins BLAS to one thread also gets single-threaded elementwise
passes (no oversubscription).
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from functools import lru_cache

import numpy as np
import scipy.linalg  # noqa: F401  (loads SciPy's BLAS before the controller inspects the process)
import threadpoolctl
from threadpoolctl import ThreadpoolController

#: Below this many elements per thread an elementwise pass is not split: the
#: dispatch (~20 us a task) would cost more than the loop it saves.
MIN_ELEMENTS_PER_THREAD = 1 << 17

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_pid: int | None = None
_pool_size = 0

_pin_lock = threading.Lock()
_pin_depth = 0
_pin_limiter = None


def _reset_after_fork():
    # A lock held by another thread at fork() time would stay held forever in
    # the child, and the parent's pool threads do not exist there.
    global _pool_lock, _pool, _pool_pid, _pool_size, _pin_lock, _pin_depth, _pin_limiter
    _pool_lock, _pool, _pool_pid, _pool_size = threading.Lock(), None, None, 0
    _pin_lock, _pin_depth, _pin_limiter = threading.Lock(), 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


@lru_cache(maxsize=1)
def threadpool_controller() -> ThreadpoolController:
    """The process's threadpool controller, built once (``limit`` then costs microseconds)."""
    return ThreadpoolController()


@contextmanager
def single_threaded_blas():
    """Context pinning BLAS to one thread (tiny products, small decompositions, tiles).

    On small operands BLAS threads buy nothing when the machine is idle and,
    when the cores are busy, spinning OpenBLAS threads make each call many
    times slower (measured ~20x for Frequent Directions' shrink at load 15).

    BLAS thread counts are process-wide, so the pin is reference-counted:
    when several threads hold it at once (a threaded Dask scheduler), the
    original limits come back when the last one leaves -- not when the first
    leaves (too early) or with the pinned value recorded as "original".
    """
    global _pin_depth, _pin_limiter
    with _pin_lock:
        if _pin_depth == 0:
            _release_openblas_control()
            _pin_limiter = threadpool_controller().limit(limits=1, user_api="blas")
            _release_openblas_control()
        _pin_depth += 1
    try:
        yield
    finally:
        with _pin_lock:
            _pin_depth -= 1
            if _pin_depth == 0:
                _release_openblas_control()
                _pin_limiter.restore_original_limits()
                _release_openblas_control()
                _pin_limiter = None


def _release_openblas_control():
    """Let any thread set OpenBLAS' (process-wide) thread count next.

    threadpoolctl >= 3.6 lets only one "controlling" thread change a
    pthreads OpenBLAS, silently ignoring the others; the pin above is set by
    the first thread to enter and lifted by the last to leave, which may be
    another thread, so control is released around each change.
    """
    clear = getattr(getattr(threadpoolctl, "OpenBLASController", None), "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_n_jobs(n_jobs) -> int:
    """``n_jobs`` as a thread count: None or -1 the usable cores, ``-k`` all but ``k - 1`` of them (scikit-learn's
    convention), a positive number itself (at most the usable cores)."""
    cores = usable_cores()
    if n_jobs is None:
        return cores
    n = int(n_jobs)
    if n == 0:
        raise ValueError("n_jobs=0 runs nothing: give a positive count, or -1 / None for every usable core")
    return min(cores, n) if n > 0 else max(1, cores + 1 + n)


@contextmanager
def thread_limit(n_jobs=None):
    """Run the block on at most ``n_jobs`` threads (:func:`resolve_n_jobs`): BLAS and OpenMP through
    threadpoolctl (which the elementwise passes and the compiled searches follow: :func:`blas_num_threads`) and
    numba's parallel loops.  None: the process's current limits, unchanged."""
    if n_jobs is None:
        yield
        return
    n = resolve_n_jobs(n_jobs)
    numba_before = None
    import sys

    if "numba" in sys.modules:
        import numba

        numba_before = numba.get_num_threads()
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    _release_openblas_control()
    limiter = threadpool_controller().limit(limits=n)
    _release_openblas_control()
    try:
        yield
    finally:
        _release_openblas_control()
        limiter.restore_original_limits()
        _release_openblas_control()
        if numba_before is not None:
            import numba

            numba.set_num_threads(numba_before)


#: BLAS calls below this many flops run on one thread (see :func:`blas_for`)
SMALL_BLAS_FLOPS = 5e8


def blas_for(flops: float):
    """Context for a BLAS call of ``flops``: one thread when it is small, else unchanged.

    A small product (a 1000 x 1000 x 50 GEMM: 1e8 flops, milliseconds on one
    core) gains little from BLAS threads, and after a multithreaded call
    OpenBLAS keeps its threads spinning, stealing a core from whatever comes
    next (``benchmarks/results/design-measurements.md``).
    """
    return single_threaded_blas() if flops < SMALL_BLAS_FLOPS else nullcontext()


def blas_num_threads() -> int:
    """Threads BLAS may use now (the smallest over loaded BLAS libraries; >= 1)."""
    counts = [lc.num_threads for lc in threadpool_controller().select(user_api="blas").lib_controllers]
    n = min(counts) if counts else 1
    try:
        n = min(n, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        n = min(n, os.cpu_count() or 1)
    return max(1, int(n))


def shared_executor(n_workers: int) -> ThreadPoolExecutor:
    """A process-wide pool with at least ``n_workers`` threads (rebuilt after a fork)."""
    global _pool, _pool_pid, _pool_size
    with _pool_lock:
        pid = os.getpid()
        if _pool is None or _pool_pid != pid or _pool_size < n_workers:
            # after fork() the parent's worker threads do not exist in the child:
            # a pool inherited through fork would never run its tasks
            old = _pool if _pool_pid == pid else None
            _pool = ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="kernelsketch")
            _pool_pid, _pool_size = pid, n_workers
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def run_claim_loops(do_piece, n_pieces: int, n_workers: int, setup=None) -> None:
    """Call ``do_piece(i, state)`` for ``i < n_pieces`` on the calling thread and ``n_workers - 1`` pool threads.

    Pieces are claimed from a shared counter, so the work balances itself
    across threads however busy each core is; ``state = setup()`` is built once
    per thread (scratch buffers), None without ``setup``.  The calling thread
    takes part; copies still queued when it is done (the shared pool busy
    with another caller's work) are cancelled rather than waited for, so
    concurrent callers never wait on each other.  When a piece fails (or the
    caller is interrupted) no new pieces are started; running ones finish
    and the first exception is raised.
    """
    counter = itertools.count()  # next() on a count is atomic under the GIL
    failed: list[BaseException] = []

    def work():
        state = setup() if setup is not None else None
        try:
            while not failed and (i := next(counter)) < n_pieces:
                do_piece(i, state)
        except BaseException:
            failed.append(True)
            raise

    if n_workers <= 1:
        work()
        return
    pool = shared_executor(n_workers - 1)
    futures = [pool.submit(work) for _ in range(n_workers - 1)]
    try:
        work()
    finally:
        for f in futures:
            f.cancel()  # only succeeds for copies that have not started
        errors = [f.exception() for f in futures if not f.cancelled()]
    for err in errors:
        if err is not None:
            raise err


def run_pieces(pieces, n_threads: int | None = None) -> None:
    """Call every one of ``pieces`` (callables of no argument) on up to ``n_threads`` threads (default: the BLAS
    thread count), claimed in order (:func:`run_claim_loops`)."""
    pieces = list(pieces)
    if pieces:
        n_workers = max(1, min(len(pieces), n_threads or blas_num_threads()))
        run_claim_loops(lambda t, _state: pieces[t](), len(pieces), n_workers)


def iter_prefetched(iterable):
    """The items of ``iterable`` in order, each taken from it on a thread of its own while the caller works on the
    item before (the next block read and checked while the current one is searched; with ``map(load, items)``, each
    item loaded while the one before is worked on): one item ahead at most.
    ``iterable``'s errors are raised here when their item is due.  When the caller stops early (an error, a
    ``break``, Ctrl-C), the item being taken is waited for and ``iterable``'s iterator is closed, as a plain
    loop's would be."""
    it = iter(iterable)
    end = object()
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernelsketch-read") as pool:
            ahead = pool.submit(next, it, end)
            while (item := ahead.result()) is not end:
                ahead = pool.submit(next, it, end)
                yield item
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


def parallel_rows(func, *arrays, n_threads: int | None = None) -> None:
    """Call ``func(*row_slices)`` on contiguous row ranges of ``arrays``, on several threads.

    ``func`` must only touch the row range it is given (an in-place ufunc on a
    slice of an output buffer).  The rows are cut into a few ranges per
    thread, claimed by the calling thread and the pool threads alike
    (:func:`run_claim_loops`).  Exceptions raised by ``func`` propagate.
    """
    n_rows = arrays[0].shape[0]
    size = arrays[0].size
    if n_threads is None:
        n_threads = blas_num_threads()
    n_threads = int(max(1, min(n_threads, n_rows, size // MIN_ELEMENTS_PER_THREAD)))
    if n_threads == 1:
        func(*arrays)
        return
    n_parts = min(n_rows, 4 * n_threads)
    bounds = np.linspace(0, n_rows, n_parts + 1).astype(int)

    def piece(i, _):
        func(*(a[bounds[i] : bounds[i + 1]] for a in arrays))

    run_claim_loops(piece, n_parts, n_threads)


def exp_inplace(a: np.ndarray) -> np.ndarray:
    """``np.exp(a, out=a)`` with the rows split over the BLAS thread count; returns ``a``."""
    if a.ndim == 0:
        np.exp(a, out=a)
        return a
    parallel_rows(lambda part: np.exp(part, out=part), a)
    return a
