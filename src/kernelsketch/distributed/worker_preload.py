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

import logging

import numpy as np

from ..kernels.neighbors import _numba_kernel
from ..maps import landmark_graph  # noqa: F401  (the fit pass's and the seeding sample's block functions)
from ..out_of_core import assignment, column_statistics  # noqa: F401  (the assignment's and standardize's)
from ..utils.process_exit import end_without_teardown
from . import engine, shards  # noqa: F401  (the engine's task wrappers, the shard readers)

_numba_kernel()  # (numba and the search kernels, from its disk cache)


def _first_calls():
    """Each block function of the default clustering once on a few synthetic rows, float32 and float64: numba loads
    a cached kernel's machine code on its first call with those types, which would otherwise fall in each worker's
    first pass.  Rows this few reach the approximate search's kernel and the assignment's (``coarse_to_fine``,
    ``graph_assign``); the others are taken only for blocks of thousands of rows and load there.  A local cluster's
    workers are forked from a fork server that imports this module once, beside the client's own imports
    (:func:`~kernelsketch.distributed.cluster.start_worker_forkserver`): the kernels are loaded there, once, and
    every forked worker has them (a spawned worker pays them in its own start, where they gained nothing)."""
    from ..maps.landmark_graph import LandmarkGraph, rows_statistics, sample_embedding
    from ..out_of_core.assignment import assign_block
    from ..out_of_core.column_statistics import column_absmax

    rng = np.random.default_rng(0)
    graph = LandmarkGraph(rng.normal(size=(64, 3)), n_neighbors=10, bandwidth=None, search="auto")
    graph.projection = rng.normal(size=(64, 4))
    centers = rng.normal(size=(4, 4))
    settled = graph.settled_cells(centers)
    for dtype in (np.float32, np.float64):
        X = rng.normal(size=(256, 3)).astype(dtype)
        column_absmax(X, None)
        rows_statistics(X, graph)
        sample_embedding(X, graph)
        assign_block(X, (graph, centers, False, settled))


try:
    _first_calls()
except Exception:  # (a warm-up only: the tasks themselves say what is wrong, if anything is)
    logging.getLogger(__name__).debug("the first calls of the block functions failed", exc_info=True)


def dask_setup(worker):
    """In a worker process, as it starts (nothing to do: :func:`dask_teardown` decides how it ends)."""


def dask_teardown(worker):
    """In a worker process, as its close begins: the process then ends without module teardown
    (:func:`~kernelsketch.utils.process_exit.end_without_teardown`)."""
    end_without_teardown(0)
