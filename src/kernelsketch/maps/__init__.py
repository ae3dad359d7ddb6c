"""Feature maps: Nystroem, random Fourier features, the Kernel JL Gaussian sketch.

Names are imported lazily from their modules (PEP 562).
"""

import importlib

_LAZY = {"Nystroem": "nystroem", "KernelJL": "kernel_jl", "RandomFourierFeatures": "random_fourier_features", "sample_landmarks": "landmarks"}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        from .. import _IMPORT_LOCK  # one import at a time across threads (see kernelsketch.__init__)

        with _IMPORT_LOCK:
            return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
