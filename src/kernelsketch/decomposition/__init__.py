"""Kernel PCA: exact, on a subsample, on random features, streaming.

Names are imported lazily from their modules (PEP 562).
"""

from .._lazy import attach

_LAZY = {
    "KernelPCA": "kernel_pca",
    "SubsampleKPCA": "subsample_kpca",
    "RFKPCA": "random_feature_pca",
    "RNCA": "random_feature_pca",
    "StreamingKPCA": "streaming_kpca",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = attach(__name__, _LAZY)
