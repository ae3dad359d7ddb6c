"""Let an estimator's ``transform``/``predict`` accept a dask array.

Estimators sit below :mod:`kernelsketch.distributed` in the layering, so they
never import it: a dask array is recognised by its type's module name (no
import of dask), and the module that handles it is the one the package root
registered for ``"dask"`` (:func:`kernelsketch._lazy.register_backend`).
"""

from __future__ import annotations

from .._lazy import backend


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
    dask = backend("dask")
    return dask.predict(estimator, X) if method == "predict" else dask.transform(estimator, X)
