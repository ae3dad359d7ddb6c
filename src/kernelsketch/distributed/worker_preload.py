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

from ..kernels.neighbors import _numba_kernel
from ..out_of_core import drivers  # noqa: F401  (the estimators, the engine's pass functions, scikit-learn)
from ..utils.process_exit import end_without_teardown

_numba_kernel()  # (numba and the search kernels, from its disk cache)


def dask_setup(worker):
    """In a worker process, as it starts (nothing to do: :func:`dask_teardown` decides how it ends)."""


def dask_teardown(worker):
    """In a worker process, as its close begins: the process then ends without module teardown
    (:func:`~kernelsketch.utils.process_exit.end_without_teardown`)."""
    end_without_teardown(0)
