"""Tree reduction of per-chunk sketches: ``da.reduction`` over object-valued blocks.

Each row chunk becomes one sketch (``chunk_fn``), and sketches are merged
``split_every`` at a time up a tree: the depth is
``log_{split_every}(n_chunks)`` and nothing but sketches leaves a worker.
"""

from __future__ import annotations

import copy

import numpy as np

from ._dask import check_dask_matrix, import_dask


def _boxed(value):
    # one object in a (1, 1) array: what dask's reduction machinery concatenates
    out = np.empty((1, 1), dtype=object)
    out[0, 0] = value
    return out


def merge_all(sketches):
    """Merge a sequence of mergeable sketches into a new one (inputs untouched); None for no sketch.

    Copying the first sketch before merging keeps every task a pure function
    of its inputs: a task re-run after a worker died sees the same inputs and
    gives the same result, where an in-place merge could count data twice.
    """
    parts = [s for s in sketches if s is not None]
    if not parts:
        return None
    acc = copy.deepcopy(parts[0])
    for other in parts[1:]:
        acc.merge(other)
    return acc


def tree_reduce(X, chunk_fn, *, merge=merge_all, split_every=8):
    """Reduce the row chunks of a dask array to one value through a merge tree.

    Parameters
    ----------
    X : dask.array.Array (n_samples, n_features)
    chunk_fn : callable ``block -> sketch`` (``None`` for an empty block)
    merge : callable ``list of sketches -> sketch``, default :func:`merge_all`
        Must not modify its inputs.
    split_every : int >= 2
        Fan-in of the tree.

    Returns
    -------
    dask.array.Array
        0-d object array; ``.compute()`` gives the merged sketch.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> X = da.ones((100, 2), chunks=(10, 2))
    >>> total = tree_reduce(X, lambda b: float(b.sum()), merge=lambda s: sum(s), split_every=3)
    >>> float(total.compute())
    200.0
    """
    da = import_dask("dask.array")
    X = check_dask_matrix(X)
    if not (isinstance(split_every, int) and split_every >= 2):
        raise ValueError(f"split_every must be an int >= 2, got {split_every!r}")

    def chunk(block, axis=None, keepdims=True):
        return _boxed(chunk_fn(block) if block.shape[0] else None)

    def combine(boxes, axis=None, keepdims=True):
        return _boxed(merge(list(boxes.ravel())))

    def aggregate(boxes, axis=None, keepdims=False):
        out = np.empty((), dtype=object)
        out[()] = merge(list(boxes.ravel()))
        return out

    return da.reduction(
        X,
        chunk,
        aggregate,
        combine=combine,
        axis=(0, 1),
        keepdims=False,
        concatenate=True,
        split_every=split_every,
        dtype=object,
        meta=np.empty((), dtype=object),
        name="kernelsketch-tree-reduce",
    )


def compute_reduced(reduced):
    """The merged object of :func:`tree_reduce` (unboxed from its 0-d array)."""
    value = reduced.compute()
    return value.item() if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0 else value
