"""The out-of-core driver: fit on a data source, map it block by block into a sink, cluster it.

Everything the ``kernelsketch`` command line does to a data file is a call
here, and so is its Dask path: the same driver runs on two *engines*,

* :class:`LocalEngine` -- a file (CSV/TSV, ``.npy``, Parquet, libsvm) or an
  in-memory array, read in row blocks in this process;
* :class:`kernelsketch.distributed.engine.DaskEngine` -- a dask array, its
  blocks computed on a Dask cluster (``client=`` or a dask array given as data).

Both answer the same few questions -- how many rows, these rows by index,
a value reduced over every block, every block mapped in order -- so an
estimator fitted, an embedding written or a clustering computed by either
is the same, to rounding, for the same seed.

Public entry points (re-exported as ``kernelsketch.fit_source`` etc.):

* :func:`fit_source` -- fit any kernelsketch estimator (or any scikit-learn
  estimator, on a sample) without loading the data;
* :func:`transform_source` -- map a source through a fitted estimator into
  a sink: an in-memory array, a ``.npy`` / CSV / TSV / Parquet file written
  atomically, or any callable;
* :func:`embed_file` -- both, in one call;
* :func:`cluster_file` -- the main job: kernel embedding + k-means
  (:class:`~kernelsketch.cluster.StreamingKMeans`) with the labels streamed to
  a sink, never holding the ``N x d`` embedding.

The package, one concept per module, data flowing down (driver -> fit strategy -> engine -> reader)
and back up once:

* :mod:`~kernelsketch.out_of_core.engine` -- the :class:`Engine` contract and :class:`LocalEngine`;
* :mod:`~kernelsketch.out_of_core.missing` -- missing-value codes found on a sample and read as medians;
* :mod:`~kernelsketch.out_of_core.column_statistics` -- per-column statistics of a block and their exact merge;
* :mod:`~kernelsketch.out_of_core.standardize` -- z-scoring a source in one pass;
* :mod:`~kernelsketch.out_of_core.fit` -- :func:`fit_source`, one strategy per kind of estimator,
  and :func:`choose_landmarks`;
* :mod:`~kernelsketch.out_of_core.spilled_blocks` -- the local engine's kept blocks on disk
  (:class:`SpilledBlocks`: each row's landmark graph kept from the fit pass, so that later passes need no
  second search);
* :mod:`~kernelsketch.out_of_core.sinks` -- where output blocks go;
* :mod:`~kernelsketch.out_of_core.assignment` -- a block's k-means assignment, the pass function the drivers send
  to where the rows are;
* :mod:`~kernelsketch.out_of_core.drivers` -- :func:`transform_source`, :func:`embed_file`,
  :func:`cluster_file`.
"""

from .._lazy import attach

_LAZY = {
    "CODE_CHECK_ROWS": "missing",
    "ClusterResult": "drivers",
    "EmbedResult": "drivers",
    "EmptyClusterWarning": "drivers",
    "Engine": "engine",
    "FIT_ROWS": "fit",
    "FIT_STRATEGIES": "fit",
    "FitResult": "fit",
    "LocalEngine": "engine",
    "PairCounts": "drivers",
    "SpilledBlocks": "spilled_blocks",
    "TransformResult": "drivers",
    "UNIT_SPREAD": "standardize",
    "align_columns": "engine",
    "choose_landmarks": "fit",
    "cluster_file": "drivers",
    "embed_file": "drivers",
    "fit_source": "fit",
    "fit_strategy": "fit",
    "magnitude_spread": "standardize",
    "model_read_options": "drivers",
    "open_engine": "engine",
    "record_feature_names": "engine",
    "replace_missing_codes": "missing",
    "resolve_kernel": "fit",
    "standardize_source": "standardize",
    "transform_source": "drivers",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = attach(__name__, _LAZY)
