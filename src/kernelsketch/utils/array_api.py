"""Which array library an input belongs to: scikit-learn's ``array_api_dispatch`` convention.

Foundation layer: the estimators ask :func:`array_namespace` whether an input takes the
device path (:mod:`kernelsketch.kernels.array_api`) and :func:`to_numpy` brings any
other input to the host for the NumPy code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["array_namespace", "to_numpy"]


def array_namespace(*arrays) -> tuple[Any, Any] | None:
    """``(xp, device)`` of non-NumPy inputs under scikit-learn's ``array_api_dispatch``; None otherwise.

    None means: take the NumPy path (NumPy arrays, sparse matrices, lists, or dispatch off,
    where scikit-learn's own validation converts other arrays to NumPy).
    """
    present = [a for a in arrays if a is not None]
    if not present or any(isinstance(a, np.ndarray | list | tuple) for a in present):
        return None
    import sklearn

    if not sklearn.get_config().get("array_api_dispatch", False):
        return None
    from sklearn.utils._array_api import _is_numpy_namespace, get_namespace_and_device

    try:
        xp, _, device = get_namespace_and_device(*present)
    except (TypeError, ValueError):
        return None
    return None if _is_numpy_namespace(xp) else (xp, device)


def to_numpy(A, xp) -> np.ndarray:
    """``A`` (of namespace ``xp``, on any device) as a NumPy array on the host."""
    from sklearn.utils._array_api import _convert_to_numpy

    return np.asarray(_convert_to_numpy(A, xp))
