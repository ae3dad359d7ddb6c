"""Clustering on kernel embeddings.

Names are imported lazily from their modules (PEP 562).
"""

import importlib

_LAZY = {"NystroemKernelKMeans": "nystroem_kernel_kmeans", "StreamingKMeans": "streaming_kmeans"}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        from .. import _IMPORT_LOCK  # one import at a time across threads (see kernelsketch.__init__)

        with _IMPORT_LOCK:
            return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
