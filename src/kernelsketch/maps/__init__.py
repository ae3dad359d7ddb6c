"""Feature maps: Nystroem, random Fourier features, the Kernel JL Gaussian sketch.

Names are imported lazily from their modules (PEP 562).
"""

from .._lazy import attach

_LAZY = {
    "Nystroem": "nystroem",
    "KernelJL": "kernel_jl",
    "LandmarkSpectralEmbedding": "landmark_spectral",
    "RandomFourierFeatures": "random_fourier_features",
    "sample_landmarks": "landmarks",
    "choose_n_landmarks": "landmark_count",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = attach(__name__, _LAZY)
