"""What the workers of a local cluster started by :func:`~kernelsketch.distributed.cluster.connect` import as they
start (``LocalCluster(preload=...)``): the drivers' modules (scikit-learn's among them) and the compiled
nearest-landmark kernels.  Without it each worker imports them on its first task of each kind, on the pass's
critical path, while the client waits; with it they are imported while the worker process starts, which the
command line overlaps with its own imports (:class:`~kernelsketch.distributed.cluster.LocalClusterStart`)."""

from __future__ import annotations

from ..kernels.neighbors import _numba_kernel
from ..out_of_core import drivers  # noqa: F401  (the estimators, the engine's pass functions, scikit-learn)

_numba_kernel()  # (numba and the search kernels, from its disk cache)
