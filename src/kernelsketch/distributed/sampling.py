"""Uniform row samples drawn from a dask array without loading all its rows.

Indices are drawn on the client from the number of rows alone (with the
in-memory estimators' own :func:`~kernelsketch.maps.sample_landmarks`), so a
sample depends on the seed and ``n_samples``, never on the chunking; then
only the chosen rows are gathered, each chunk sending back its selected rows.
"""

from __future__ import annotations

import numpy as np

from ..maps.landmarks import sample_row_indices  # noqa: F401  (re-exported)
from ._dask import check_dask_matrix


def gather_rows(X, *index_sets):
    """Bring the rows of X at each index set to the client, in one pass.

    Parameters
    ----------
    X : dask.array.Array (n_samples, n_features), row-chunk sizes known
    *index_sets : int arrays (or None)
        Duplicates and any order are allowed.

    Returns
    -------
    list of ndarray
        ``X[idx]`` for each index set (None for None); the union of the sets
        is fetched once.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> X = da.from_array(np.arange(20.0).reshape(10, 2), chunks=(3, 2))
    >>> a, b = gather_rows(X, np.array([7, 1]), np.array([1, 1]))
    >>> a.tolist(), b[:, 0].tolist()
    ([[14.0, 15.0], [2.0, 3.0]], [2.0, 2.0])
    """
    X = check_dask_matrix(X)
    sets = [None if s is None else np.asarray(s, dtype=np.int64) for s in index_sets]
    given = [s for s in sets if s is not None]
    if not given:
        return [None] * len(sets)
    union = np.unique(np.concatenate(given))
    rows = np.asarray(X[union].compute())
    return [None if s is None else rows[np.searchsorted(union, s)] for s in sets]
