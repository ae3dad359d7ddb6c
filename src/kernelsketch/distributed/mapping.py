"""Fitted estimators mapped over the row chunks of a dask array.

The fitted state (landmarks, projection, random weights) enters the graph
under one key -- a ``dask.delayed`` object, or with a distributed client a
future scattered to every worker -- and every block task refers to that key:
the state travels once per worker, never once per chunk.
"""

from __future__ import annotations

import uuid

import numpy as np

from ._dask import check_dask_matrix, import_dask


def broadcast(estimator, client=None):
    """A handle on ``estimator`` that a dask graph holds under a single key.

    Parameters
    ----------
    estimator : object
        Usually a fitted estimator.
    client : distributed.Client, optional
        With a client the estimator is scattered to every worker now
        (``client.scatter(..., broadcast=True)``) and a Future is returned;
        without, a ``dask.delayed`` wrapper (the scheduler ships it to each
        worker the first time a task there needs it).

    Returns
    -------
    dask.delayed.Delayed or distributed.Future

    Examples
    --------
    >>> handle = broadcast({"projection": [1.0, 2.0]})
    >>> handle.compute()
    {'projection': [1.0, 2.0]}
    """
    # An explicit key: tokenizing would pickle the whole fitted state once more.
    key = f"{type(estimator).__name__}-fitted-{uuid.uuid4().hex}"
    if client is not None:
        return client.scatter({key: estimator}, broadcast=True)[key]
    dask = import_dask("dask")
    return dask.delayed(estimator, name=key, pure=False)


def _apply(block, estimator, method):
    return getattr(estimator, method)(block)


def _map(estimator, X, method, client):
    da = import_dask("dask.array")
    X = check_dask_matrix(X)
    # A one-row probe on the client gives the output width and dtype, and
    # fails here (not on a worker) when the estimator is unfitted or expects
    # another number of features.
    probe = np.asarray(getattr(estimator, method)(np.zeros((1, X.shape[1]), dtype=X.dtype)))
    handle = broadcast(estimator, client)
    name = f"{type(estimator).__name__.lower()}-{method}-{uuid.uuid4().hex}"
    if probe.ndim == 1:
        return da.map_blocks(
            _apply, X, handle, method, dtype=probe.dtype, drop_axis=1, chunks=(X.chunks[0],), meta=probe[:0], name=name
        )
    return da.map_blocks(
        _apply, X, handle, method, dtype=probe.dtype, chunks=(X.chunks[0], (probe.shape[1],)), meta=probe[:0], name=name
    )


def transform(estimator, X, *, client=None):
    """``estimator.transform`` over the row chunks of a dask array, lazily.

    Parameters
    ----------
    estimator : fitted kernelsketch (or scikit-learn) transformer
    X : dask.array.Array of shape (n_samples, n_features)
        Row chunks of any size (unknown sizes too); several column chunks are
        merged first.
    client : distributed.Client, optional
        Scatter the fitted state to every worker up front (see :func:`broadcast`).

    Returns
    -------
    Z : dask.array.Array of shape (n_samples, n_components)
        Same row chunks as X; block ``i`` is ``estimator.transform(X_i)``,
        so ``Z.compute()`` equals the in-memory ``estimator.transform(X)``
        whenever the map is row-wise (all kernelsketch maps are).

    Notes
    -----
    One pass over X.  What moves: the pickled estimator once to each worker
    (its size is ``landmarks_ + projection_``, or the random weights, about
    ``8 (m D + m d)`` bytes), and the output blocks to whoever consumes them.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from kernelsketch.maps import Nystroem
    >>> X = np.random.default_rng(0).normal(size=(300, 3))
    >>> ny = Nystroem(n_landmarks=30, bandwidth=2.0, random_state=0).fit(X)
    >>> Z = transform(ny, da.from_array(X, chunks=(100, 3)))
    >>> bool(np.allclose(Z.compute(), ny.transform(X)))
    True
    """
    return _map(estimator, X, "transform", client)


def predict(estimator, X, *, client=None):
    """``estimator.predict`` over the row chunks of a dask array (1-D dask array), lazily.

    See :func:`transform`; used for cluster assignments
    (:class:`~kernelsketch.cluster.NystroemKernelKMeans`).
    """
    return _map(estimator, X, "predict", client)
