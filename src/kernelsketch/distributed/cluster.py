"""Joining a running Dask cluster or starting a local one."""

from __future__ import annotations

import contextlib

from ._dask import import_dask


@contextlib.contextmanager
def connect(scheduler=None, n_workers=None, *, threads_per_worker=1, memory_limit="auto"):
    """A ``distributed.Client`` for the ``with`` block, closed afterwards.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``).
    n_workers : int, optional
        Start a ``LocalCluster`` of that many worker processes on this
        machine (loopback only, dashboard on a free port if bokeh is installed), stopped on exit.
    threads_per_worker : int, default=1
        For a local cluster: kernelsketch's hot paths are BLAS calls, so
        one thread per process avoids oversubscribing the cores.
    memory_limit : str or int, default="auto"

    Yields
    ------
    distributed.Client

    Raises
    ------
    ValueError
        Both or neither of ``scheduler`` and ``n_workers`` given.
    """
    if (scheduler is None) == (n_workers is None):
        raise ValueError("give exactly one of scheduler (an address) or n_workers (to start a local cluster)")
    distributed = import_dask("distributed")
    if scheduler is not None:
        with distributed.Client(scheduler) as client:
            yield client
        return
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ValueError(f"n_workers must be an int >= 1, got {n_workers!r}")
    with (
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=threads_per_worker,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            memory_limit=memory_limit,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
