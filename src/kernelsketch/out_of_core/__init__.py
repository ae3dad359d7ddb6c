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
* :mod:`~kernelsketch.out_of_core.standardize` -- z-scoring a source in one pass;
* :mod:`~kernelsketch.out_of_core.fit` -- :func:`fit_source`, one strategy per kind of estimator,
  and :func:`choose_landmarks`;
* :mod:`~kernelsketch.out_of_core.spilled_blocks` -- the local engine's kept blocks on disk
  (:class:`SpilledBlocks`: each row's landmark graph kept from the fit pass, so that later passes need no
  second search);
* :mod:`~kernelsketch.out_of_core.sinks` -- where output blocks go;
* :mod:`~kernelsketch.out_of_core.drivers` -- :func:`transform_source`, :func:`embed_file`,
  :func:`cluster_file`.
"""

from __future__ import annotations

from .drivers import (
    ClusterResult,
    EmbedResult,
    EmptyClusterWarning,
    PairCounts,
    TransformResult,
    cluster_file,
    embed_file,
    model_read_options,
    transform_source,
)
from .engine import Engine, LocalEngine, align_columns, open_engine, record_feature_names
from .fit import FIT_ROWS, FIT_STRATEGIES, FitResult, choose_landmarks, fit_source, fit_strategy, resolve_kernel
from .missing import CODE_CHECK_ROWS, replace_missing_codes
from .spilled_blocks import SpilledBlocks
from .standardize import UNIT_SPREAD, magnitude_spread, standardize_source

__all__ = [
    "CODE_CHECK_ROWS",
    "FIT_ROWS",
    "FIT_STRATEGIES",
    "UNIT_SPREAD",
    "ClusterResult",
    "EmbedResult",
    "EmptyClusterWarning",
    "Engine",
    "FitResult",
    "LocalEngine",
    "PairCounts",
    "SpilledBlocks",
    "TransformResult",
    "align_columns",
    "choose_landmarks",
    "cluster_file",
    "embed_file",
    "fit_source",
    "fit_strategy",
    "magnitude_spread",
    "model_read_options",
    "open_engine",
    "record_feature_names",
    "replace_missing_codes",
    "resolve_kernel",
    "standardize_source",
    "transform_source",
]
