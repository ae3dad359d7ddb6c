"""Importing dask lazily, with an error that says how to install it."""

from __future__ import annotations

import importlib


def import_dask(module="dask.array"):
    """Import ``module`` (``dask.array``, ``dask``, ``distributed``) or raise a clear ImportError."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"kernelsketch.distributed needs {module.split('.')[0]} ({exc}); install the extra with "
            "pip install 'kernelsketch[dask]'"
        ) from exc


def check_dask_matrix(X, name="X"):
    """A 2-D dask array with its columns in one chunk (blocks are then whole rows)."""
    da = import_dask("dask.array")
    if not isinstance(X, da.Array):
        raise TypeError(
            f"{name} must be a dask array, got {type(X).__name__}; wrap numpy data with "
            "dask.array.from_array(X, chunks=(rows, -1))"
        )
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got a {X.ndim}-D dask array of shape {X.shape}")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has no feature column (shape {X.shape})")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def known_n_rows(X):
    """``(X, n_rows)`` with the row-chunk sizes known (computed in one pass if they were not)."""
    import math

    if any(math.isnan(c) for c in X.chunks[0]):
        # one pass over the data on the workers; only the chunk lengths come back
        X = X.compute_chunk_sizes()
    n = int(sum(X.chunks[0]))
    if n == 0:
        raise ValueError("X has no rows")
    return X, n


def in_memory_bytes(*arrays):
    """Bytes of NumPy data held in the arrays' task graphs (``dask.array.from_array`` over an ndarray holds
    every chunk there, and every compute would send them to the scheduler again)."""
    import numpy as np

    total, seen = 0, set()
    for arr in arrays:
        if arr is None:
            continue
        for key, value in dict(arr.__dask_graph__()).items():
            value = getattr(value, "value", value)  # newer dask wraps literal data in a DataNode
            if isinstance(value, np.ndarray) and key not in seen:
                seen.add(key)
                total += value.nbytes
    return total


def persist_in_memory(client, *arrays):
    """The arrays persisted on ``client``'s workers once if their graphs hold NumPy data, else as given.

    A graph with the data in it is pickled and sent with every compute ("Sending large graph of size ...",
    once per pass); persisted, the chunks are sent once and every later graph names them by key.
    Without a client (and no default one: dask's own threads) nothing is sent, and nothing changes.  Returns
    ``(arrays, bytes_sent)``.
    """
    if client is None:
        try:  # a distributed Client made dask's default scheduler: the computes go there too
            from distributed import default_client

            client = default_client()
        except (ImportError, ValueError):
            return arrays, 0
    nbytes = in_memory_bytes(*arrays)
    if nbytes == 0:
        return arrays, 0
    present = [a for a in arrays if a is not None]
    persisted = iter(client.persist(present))
    return tuple(next(persisted) if a is not None else None for a in arrays), nbytes
