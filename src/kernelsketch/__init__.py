"""kernelsketch: kernel PCA, kernel embeddings and kernel clustering at scale.

Public estimators are re-exported here and imported lazily (PEP 562), so
``import kernelsketch`` stays cheap and optional extras (dask, matplotlib) are
never imported unless used.
"""

from __future__ import annotations

from ._config import config_context, get_config, set_config
from ._lazy import attach, register_backend
from ._version import __version__

# public name -> submodule that defines it
_LAZY = {
    # kernels
    "get_kernel": "kernels",
    "pairwise_kernel": "kernels",
    "kernel_blocks": "kernels",
    "estimate_bandwidth": "kernels",
    "GramOperator": "kernels",
    # feature maps
    "Nystroem": "maps",
    "RandomFourierFeatures": "maps",
    "KernelJL": "maps",
    "LandmarkSpectralEmbedding": "maps",
    # sketches
    "FrequentDirections": "sketches",
    # decomposition
    "KernelPCA": "decomposition",
    "SubsampleKPCA": "decomposition",
    "RFKPCA": "decomposition",
    "RNCA": "decomposition",
    "StreamingKPCA": "decomposition",
    # clustering
    "NystroemKernelKMeans": "cluster",
    "LandmarkSpectralClustering": "cluster",
    # datasets
    "load_dataset": "datasets",
    "list_datasets": "datasets",
    "make_cluster_in_cluster": "datasets",
    "make_crescent_fullmoon": "datasets",
    "make_random_noisy": "datasets",
    # the out-of-core driver
    "fit_source": "out_of_core",
    "transform_source": "out_of_core",
    "standardize_source": "out_of_core",
    "replace_missing_codes": "out_of_core",
    "choose_landmarks": "out_of_core",
    "diagnose": "diagnostics",
    "ApproximationWarning": "utils.warnings",
    "DiagnoseResult": "diagnostics",
    "embed_file": "out_of_core",
    "cluster_file": "out_of_core",
    # clustering
    "StreamingKMeans": "cluster",
    # preprocessing a fitted clustering carries
    "MissingValueCodeImputer": "preprocessing",
    # persistence
    "save": "persistence",
    "load": "persistence",
    # devices (array API)
    "move_estimator_to": "utils.array_api",
}

__all__ = ["config_context", "get_config", "set_config", "__version__", *_LAZY]


_SUBPACKAGES = (
    "kernels",
    "maps",
    "sketches",
    "decomposition",
    "cluster",
    "preprocessing",
    "metrics",
    "datasets",
    "experiments",
    "io",
    "distributed",
    "persistence",
    "utils",
    "out_of_core",
    "diagnostics",
    "estimators",
)


__getattr__, __dir__ = attach(__name__, _LAZY, _SUBPACKAGES)

# The top of the layering wires the Dask integration into the hooks of the layers
# below it (estimators' transform, the out-of-core driver), which never import it:
# the module is loaded only when a dask array (or a Dask client) arrives.
register_backend("dask", "kernelsketch.distributed.backend")
