"""What the workers of a local cluster started by :func:`~kernelsketch.distributed.cluster.connect` import as they
start (``LocalCluster(preload=...)``): the drivers' modules (scikit-learn's among them) and the compiled
nearest-landmark kernels.  Without it each worker imports them on its first task of each kind, on the pass's
critical path, while the client waits; with it they are imported while the worker process starts, which the
command line overlaps with its own imports (:class:`~kernelsketch.distributed.cluster.LocalClusterStart`).

A worker that was closed normally (its ``dask_teardown`` ran: the cluster's close, its scratch directory already
removed) runs every exit handler and then ends its process without Python's teardown of every module it imported,
which took 0.5-0.7 s per close on the 2-core host and held up the cluster's close (the nanny waits for it).  Any
other ending (an error, a signal) takes the ordinary path.
"""

from __future__ import annotations

import atexit
import os
import sys

from ..kernels.neighbors import _numba_kernel
from ..out_of_core import drivers  # noqa: F401  (the estimators, the engine's pass functions, scikit-learn)

_numba_kernel()  # (numba and the search kernels, from its disk cache)

_closed_normally = False


def dask_setup(worker):
    """In a worker process, as it starts: end the process at once after a normal close."""
    atexit.register(_exit_without_teardown)


def dask_teardown(worker):
    """In a worker process, as its close begins."""
    global _closed_normally
    _closed_normally = True


def _exit_without_teardown():
    """Every other exit handler (logging's flush, weak-reference finalizers, a coverage or profiling tool's save),
    then the process's end without the teardown of its modules; nothing but the ordinary path unless closed
    normally."""
    run_others = getattr(atexit, "_run_exitfuncs", None)
    if not _closed_normally or run_others is None:
        return
    atexit.unregister(_exit_without_teardown)
    run_others()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)
