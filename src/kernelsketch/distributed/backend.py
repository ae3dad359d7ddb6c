"""What the lower layers get for dask arrays (registered by the package root as the ``"dask"`` backend).

- ``transform`` / ``predict``: an estimator's output on a dask array, block by block
  (:mod:`.mapping`);
- ``Engine``: the out-of-core driver's engine for a dask array or a Dask client
  (:class:`.engine.DaskEngine`).
"""

from .engine import DaskEngine as Engine
from .mapping import predict, transform

__all__ = ["Engine", "predict", "transform"]
