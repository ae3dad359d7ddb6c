"""Let an estimator's ``transform``/``predict`` accept a dask array.

Estimators sit below :mod:`kernelsketch.distributed` in the layering, so they
never import it: a dask array is recognised by its type's module name (no
import of dask), and only then is the Dask integration loaded by name.
"""

from __future__ import annotations

import importlib


def is_dask_array(X) -> bool:
    """True when ``X`` is a :class:`dask.array.Array` (checked without importing dask).

    Examples
    --------
    >>> import numpy as np
    >>> is_dask_array(np.zeros((2, 2)))
    False
    """
    cls = type(X)
    return cls.__name__ == "Array" and cls.__module__.split(".")[0] == "dask"


def maybe_dask_transform(estimator, X, method="transform"):
    """``kernelsketch.distributed.transform(estimator, X)`` if X is a dask array, else None.

    The first line of every estimator's ``transform``::

        if (Z := maybe_dask_transform(self, X)) is not None:
            return Z

    Inside the mapped blocks X is a numpy array, so the call returns None
    there and the estimator's own code runs: no recursion.

    Examples
    --------
    >>> import numpy as np
    >>> maybe_dask_transform(None, np.zeros((3, 2))) is None
    True
    """
    if not is_dask_array(X):
        return None
    mapping = importlib.import_module("kernelsketch.distributed.mapping")
    return mapping.predict(estimator, X) if method == "predict" else mapping.transform(estimator, X)
