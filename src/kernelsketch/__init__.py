"""kernelsketch: kernel PCA, kernel embeddings and kernel clustering at scale.

Public estimators are re-exported here and imported lazily (PEP 562), so
``import kernelsketch`` stays cheap and optional extras (dask, matplotlib) are
never imported unless used.
"""

from __future__ import annotations

import importlib
import threading

from ._config import config_context, get_config, set_config

__version__ = "0.1.0"

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
    "diagnose": "diagnostics",
    "ApproximationWarning": "utils.warnings",
    "DiagnoseResult": "diagnostics",
    "embed_file": "out_of_core",
    "cluster_file": "out_of_core",
    # clustering
    "StreamingKMeans": "cluster",
    # persistence
    "save": "persistence",
    "load": "persistence",
}

__all__ = ["config_context", "get_config", "set_config", "__version__", *_LAZY]


_SUBPACKAGES = ("kernels", "maps", "sketches", "decomposition", "cluster", "metrics", "datasets", "experiments",
                "io", "distributed", "persistence", "utils", "out_of_core", "diagnostics")


# Concurrent first accesses from several threads import one at a time: a thread must
# never see a submodule another thread is still initialising (an ImportError then).
_IMPORT_LOCK = threading.RLock()


def __getattr__(name):
    if name in _SUBPACKAGES:
        with _IMPORT_LOCK:
            return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        with _IMPORT_LOCK:
            module = importlib.import_module(f".{_LAZY[name]}", __name__)
            return getattr(module, name)
    raise AttributeError(f"module 'kernelsketch' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBPACKAGES))
