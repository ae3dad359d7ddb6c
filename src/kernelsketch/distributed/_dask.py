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
