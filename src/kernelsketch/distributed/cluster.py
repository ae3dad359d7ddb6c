"""Joining a running Dask cluster or starting a local one."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import socket
import struct
import threading

from ._dask import import_dask

#: seconds a scheduler has to answer (the probe, then distributed.Client's own connect)
CONNECT_TIMEOUT = 10.0
#: the module a local cluster's workers import as they start (:mod:`kernelsketch.distributed.worker_preload`)
WORKER_PRELOAD = "kernelsketch.distributed.worker_preload"


def probe_scheduler(address, *, timeout=CONNECT_TIMEOUT):
    """Check that a Dask scheduler answers at ``address`` (``tcp://host:port``), within ``timeout`` seconds.

    A Dask scheduler speaks first: on a new connection it sends its handshake, a
    message whose first 8 bytes are its (small) length.  Anything else (an HTTP
    server, which waits for a request; a closed port) would make ``distributed.Client``
    hang or read a text reply as a length of exabytes: refused here with a message that
    says what was found.  Addresses of other schemes (``tls://``, ``ws://``) are not probed.

    Raises
    ------
    ConnectionError
        Nothing listens there, nothing answers, or what answers is not a Dask scheduler.
    """
    scheme, sep, rest = str(address).partition("://")
    if not sep:
        scheme, rest = "tcp", str(address)
    if scheme != "tcp":
        return
    host, _, port_s = rest.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_s.split("/")[0])
    except ValueError:
        raise ConnectionError(f"{address!r} is not a scheduler address (tcp://host:port)") from None
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            head = b""
            while len(head) < 8:
                part = sock.recv(8 - len(head))
                if not part:
                    break
                head += part
    except TimeoutError:
        raise ConnectionError(
            f"{address!r} did not answer as a Dask scheduler within {timeout:g} s (a Dask scheduler sends a "
            "handshake at once; is this the address of another service?)"
        ) from None
    except OSError as exc:
        raise ConnectionError(f"cannot connect to the Dask scheduler at {address!r}: {exc}") from None
    if len(head) < 8 or struct.unpack("<Q", head)[0] > 2**20:
        raise ConnectionError(
            f"{address!r} is not a Dask scheduler: it answered {head!r}, not a Dask handshake "
            "(start one with `dask scheduler`, or use --workers N for a local cluster)"
        )


#: the environment a local cluster's worker processes start with: distributed's default
#: ``distributed.nanny.pre-spawn-environ`` (one BLAS / OpenMP thread a process: variables read as those libraries
#: load, so they must be set before the process imports them) and the hash seed its nannies give their workers --
#: but not its ``MALLOC_TRIM_THRESHOLD_``: setting it turns off glibc's dynamic mmap threshold, so that every
#: temporary of a block's work over 128 KiB is a fresh mapping whose pages fault in again (a pass's chunk read and
#: folded in 16 MiB pieces took 0.361 s with it and 0.203 s without, on one thread); a worker's blocks are bounded
#: (:data:`~kernelsketch.distributed.engine.REDUCE_PIECE_BYTES`, the chunks), and so is what its heap keeps
WORKER_ENVIRON = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "PYTHONHASHSEED": "6640",
}


def start_worker_forkserver():
    """Start multiprocessing's fork server with distributed and the workers' modules imported; True if this process
    has one so started.

    A local cluster's nannies then fork their worker processes from it (``multiprocessing-method: forkserver``)
    instead of spawning fresh interpreters that each import distributed, numpy and the compiled kernels (1.3 s per
    worker on the 2-core host, both at once, while the client imports too): the server imports them once, as soon
    as it is started, beside the client's own imports (the command line starts it as soon as it sees ``--workers``).
    It starts with :data:`WORKER_ENVIRON` (its children's libraries are the ones it loaded) and ends with this
    process.  False where fork servers do not exist (Windows) or one was started otherwise (its modules and
    environment are whatever it was started with: the cluster then spawns its workers, distributed's default).
    """
    global _FORKSERVER_STARTED
    if _FORKSERVER_STARTED:
        return True
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    if getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None) is not None:
        return False  # (running: started by someone else)
    forkserver.set_forkserver_preload(["distributed", "distributed.nanny", WORKER_PRELOAD])
    saved = {k: os.environ.get(k) for k in WORKER_ENVIRON}
    os.environ.update(WORKER_ENVIRON)
    try:
        forkserver.ensure_running()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    _FORKSERVER_STARTED = True
    return True


_FORKSERVER_STARTED = False


def _check_n_workers(n_workers):
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ValueError(f"n_workers must be an int >= 1, got {n_workers!r}")


def _local_cluster(n_workers, threads_per_worker, memory_limit, *, forked=False):
    distributed = import_dask("distributed")
    method = contextlib.nullcontext()
    if forked:  # the nannies fork their workers from the fork server start_worker_forkserver started
        # (distributed's own first use of a fork server imports numpy, pandas and lz4 here to preload them in it:
        # this process's fork server has its preload already)
        distributed.utils._forkserver_preload_set = True
        method = import_dask("dask").config.set({"distributed.worker.multiprocessing-method": "forkserver"})
    with method:
        return distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=threads_per_worker,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            memory_limit=memory_limit,
            # a failed task raises its exception here, with the library's message: the workers'
            # own log of it ("Compute Failed" and a traceback block on stderr) would repeat it
            silence_logs=logging.CRITICAL,
            preload=[WORKER_PRELOAD],
        )


class LocalClusterStart:
    """A local cluster of ``n_workers`` processes started on a thread: its workers spawn and import
    (:mod:`~kernelsketch.distributed.worker_preload`) while this process goes on, e.g. importing and checking what
    the job needs; :func:`connect` (``start=``) then waits for it and closes it on exit.

    ``kernelsketch cluster --workers N`` starts one as soon as its arguments are checked (3 processes importing
    scikit-learn and numba at once, instead of this one and then the workers).  :meth:`close` stops it if it is
    never used.

    ``docs/distributed.md`` has a runnable example (its worker processes need a ``__main__`` guard).
    """

    def __init__(self, n_workers, *, threads_per_worker=1, memory_limit="auto"):
        _check_n_workers(n_workers)
        forked = start_worker_forkserver()  # (first: it imports while this process imports distributed)
        import_dask("distributed")  # (the message for a missing extra here, not on the thread)
        self.n_workers = n_workers
        self._cluster = None
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(
            target=self._start,
            args=(n_workers, threads_per_worker, memory_limit, forked),
            name="kernelsketch-cluster-start",
        )
        self._thread.daemon = True
        self._thread.start()

    def _start(self, n_workers, threads_per_worker, memory_limit, forked):
        try:
            self._cluster = _local_cluster(n_workers, threads_per_worker, memory_limit, forked=forked)
        except BaseException as exc:  # raised again by result(), in the caller's thread
            self._error = exc

    def result(self):
        """The started ``distributed.LocalCluster`` (waits for it); its start's exception, if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        if self._closed:
            raise ValueError("this LocalClusterStart's cluster was closed (connect(start=...) closes it at the end)")
        return self._cluster

    def close(self):
        """Stop the cluster (after its start has finished); nothing if it failed to start."""
        self._thread.join()
        self._closed = True
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()
            self._cluster = None


@contextlib.contextmanager
def connect(
    scheduler=None,
    n_workers=None,
    *,
    threads_per_worker=1,
    memory_limit="auto",
    connect_timeout=CONNECT_TIMEOUT,
    start=None,
):
    """A ``distributed.Client`` for the ``with`` block, closed afterwards.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``).
    n_workers : int, optional
        Start a ``LocalCluster`` of that many worker processes on this
        machine (loopback only, dashboard on a free port if bokeh is installed), stopped on exit;
        its workers log nothing below CRITICAL: a failed task raises its exception here instead.  They are forked
        from a fork server that imports their modules once (:func:`start_worker_forkserver`; spawned where there
        is none).
    threads_per_worker : int, default=1
        For a local cluster: kernelsketch's hot paths are BLAS calls, so
        one thread per process avoids oversubscribing the cores.
    memory_limit : str or int, default="auto"
    connect_timeout : float, default=10
        Seconds to wait for ``scheduler`` to answer (see :func:`probe_scheduler`).
    start : LocalClusterStart, optional
        A local cluster already being started (:class:`LocalClusterStart`), instead of ``scheduler`` or
        ``n_workers``: waited for, then closed on exit.

    Yields
    ------
    distributed.Client

    Raises
    ------
    ValueError
        Both or neither of ``scheduler`` and ``n_workers`` given (or ``start`` with either).
    ConnectionError
        ``scheduler`` is unreachable or is not a Dask scheduler.
    """
    if start is not None:
        if scheduler is not None or n_workers is not None:
            raise ValueError("give start (a LocalClusterStart) alone, without scheduler or n_workers")
        try:
            cluster = start.result()
            with import_dask("distributed").Client(cluster) as client:
                yield client
        finally:
            start.close()
        return
    if (scheduler is None) == (n_workers is None):
        raise ValueError("give exactly one of scheduler (an address) or n_workers (to start a local cluster)")
    distributed = import_dask("distributed")
    if scheduler is not None:
        probe_scheduler(scheduler, timeout=connect_timeout)
        try:
            client = distributed.Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"cannot connect to the Dask scheduler at {scheduler!r}: {exc}") from exc
        except Exception as exc:  # a reply that starts like a Dask handshake but is not one (struct / msgpack errors)
            raise ConnectionError(
                f"{scheduler!r} is not a Dask scheduler: its reply could not be read as a Dask handshake "
                f"({type(exc).__name__}: {exc}); start one with `dask scheduler`, or use --workers N for a local "
                "cluster"
            ) from None
        with client:
            yield client
        return
    _check_n_workers(n_workers)
    forked = start_worker_forkserver()
    with (
        _local_cluster(n_workers, threads_per_worker, memory_limit, forked=forked) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
