"""What the workers of a local cluster started by :func:`~kernelsketch.distributed.cluster.connect` import as they
start (``LocalCluster(preload=...)``): the modules of the default clustering's block functions and the compiled
nearest-landmark kernels.  Without it each worker imports them on its first task of each kind, on the pass's
critical path, while the client waits; with it they are imported while the worker process starts, which the
command line overlaps with its own imports (:class:`~kernelsketch.distributed.cluster.LocalClusterStart`).

None of them imports scikit-learn (a heavy import: SciPy's statistics and pandas come with it, while the client and
the other workers import too): the passes of ``kernelsketch cluster`` send plain arrays (a
:class:`~kernelsketch.maps.landmark_graph.LandmarkGraph`) and functions of sklearn-free modules.  A task whose state
is a scikit-learn estimator (another embedding's ``transform``) imports it on the worker when it arrives.

A worker that was closed normally (its ``dask_teardown`` ran: the cluster's close, its scratch directory already
removed) runs every exit handler and then ends its process without Python's teardown of every module it imported,
which took 0.5-0.7 s per close on the 2-core host and held up the cluster's close (the nanny waits for it).  Any
other ending (an error, a signal) takes the ordinary path.
"""

from __future__ import annotations

from ..kernels.neighbors import _numba_kernel
from ..maps import landmark_graph  # noqa: F401  (the fit pass's and the seeding sample's block functions)
from ..out_of_core import assignment, column_statistics  # noqa: F401  (the assignment's and standardize's)
from ..utils.process_exit import end_without_teardown
from . import engine, shards  # noqa: F401  (the engine's task wrappers, the shard readers)

_numba_kernel()  # (numba and the search kernels, from its disk cache)


def dask_setup(worker):
    """In a worker process, as it starts (nothing to do: :func:`dask_teardown` decides how it ends)."""


def dask_teardown(worker):
    """In a worker process, as its close begins: the process then ends without module teardown
    (:func:`~kernelsketch.utils.process_exit.end_without_teardown`)."""
    end_without_teardown(0)
