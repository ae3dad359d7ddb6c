"""Clustering on kernel embeddings.

Names are imported lazily from their modules (PEP 562).
"""

from .._lazy import attach

_LAZY = {
    "LandmarkSpectralClustering": "landmark_spectral_clustering",
    "NystroemKernelKMeans": "nystroem_kernel_kmeans",
    "StreamingKMeans": "streaming_kmeans",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = attach(__name__, _LAZY)
