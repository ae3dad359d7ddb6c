"""The hook that lets an estimator's ``transform`` accept a dask array.

It imports nothing heavy: a dask array is recognised by its type's module,
so estimators can call it on every ``transform`` at no cost, and dask is
only imported when a dask array actually arrives.
"""

from __future__ import annotations


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

    The hook for the first line of an estimator's ``transform``::

        if (Z := maybe_dask_transform(self, X)) is not None:
            return Z

    Inside the mapped blocks X is a numpy array, so the call returns None
    there and the estimator's own code runs: no recursion.

    Parameters
    ----------
    estimator : fitted estimator
    X : anything
    method : {"transform", "predict"}

    Returns
    -------
    dask.array.Array or None

    Examples
    --------
    >>> import numpy as np
    >>> maybe_dask_transform(None, np.zeros((3, 2))) is None
    True
    """
    if not is_dask_array(X):
        return None
    from .mapping import predict, transform

    return predict(estimator, X) if method == "predict" else transform(estimator, X)
