"""Which array library an input belongs to: scikit-learn's ``array_api_dispatch`` convention.

Foundation layer: the estimators ask :func:`array_namespace` whether an input takes the
device path (:mod:`kernelsketch.kernels.array_api`) and :func:`to_numpy` brings any
other input to the host for the NumPy code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["array_namespace", "host_array", "move_state_to", "to_numpy"]


def array_namespace(*arrays) -> tuple[Any, Any] | None:
    """``(xp, device)`` of non-NumPy inputs under scikit-learn's ``array_api_dispatch``; None otherwise.

    None means: take the NumPy path (NumPy arrays, sparse matrices, lists, or dispatch off,
    where scikit-learn's own validation converts other arrays to NumPy).
    """
    present = [a for a in arrays if a is not None]
    if not present or any(isinstance(a, np.ndarray | list | tuple) for a in present):
        return None
    from sklearn._config import get_config as sklearn_config

    if not sklearn_config().get("array_api_dispatch", False):
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


def host_array(a):
    """``a`` as a NumPy array: None, NumPy arrays and sparse matrices pass through; any other
    array-API array (PyTorch, CuPy, ...) is copied to the host, whatever the dispatch setting."""
    if a is None or isinstance(a, np.ndarray | np.generic) or not hasattr(a, "__array_namespace__"):
        return a
    from sklearn.externals.array_api_compat import array_namespace as compat_namespace

    return to_numpy(a, compat_namespace(a))


def move_state_to(estimator, xp, device) -> None:
    """Move the NumPy arrays of ``estimator``'s declared ``_persistent_state`` to ``device`` of ``xp``.

    After a fit on a device array: the fitted model lives where its data does (scikit-learn's
    array-API convention). Host paths read the state through :func:`host_array`.
    """
    for name in getattr(type(estimator), "_persistent_state", ()):
        value = vars(estimator).get(name)
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            setattr(estimator, name, xp.asarray(np.ascontiguousarray(value), device=device))
