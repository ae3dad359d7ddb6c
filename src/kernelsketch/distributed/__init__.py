"""Dask integration: the same estimators on dask arrays and a ``distributed`` cluster.

Dask is an optional extra (``pip install 'kernelsketch[dask]'``) imported
only when one of these functions runs.  Names are imported lazily (PEP 562).

* :func:`fit` fits an estimator on a dask array without bringing the data to
  the client (tree-merged sketches, sampled landmarks, sampled bandwidths).
* :func:`transform` / :func:`predict` map a fitted estimator over row chunks;
  the fitted state enters the graph once.
* :func:`maybe_dask_transform` is the one-line hook an estimator's
  ``transform`` calls to accept dask arrays.
* :func:`read_shards` opens a directory of ``.npy`` or Parquet shards as a
  dask array; :func:`connect` starts or joins a cluster.
"""

from .._lazy import attach

_LAZY = {
    "fit": "fitting",
    "transform": "mapping",
    "predict": "mapping",
    "broadcast": "mapping",
    "maybe_dask_transform": "dispatch",
    "is_dask_array": "dispatch",
    "tree_reduce": "reduction",
    "sample_row_indices": "sampling",
    "gather_rows": "sampling",
    "read_shards": "shards",
    "connect": "cluster",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = attach(__name__, _LAZY)
