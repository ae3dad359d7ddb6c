"""Per-column statistics of a block of rows, and their exact merge: what ``standardize_source`` reads in one pass.

Block functions for :meth:`Engine.reduce <kernelsketch.out_of_core.engine.Engine.reduce>` (run wherever the rows
are: a thread here, a Dask worker, which needs nothing heavier than NumPy for them) and the merges that fold their
results in block order.
"""

from __future__ import annotations

import numpy as np

from ..utils.threads import blas_num_threads, run_claim_loops


def units(absmax):
    """Each column's unit for the scaled moments: its largest ``|value|`` (1 for an all-zero column)."""
    return np.where(absmax > 0, absmax, 1.0)


def column_moments(X, _):
    """(n, column means, scaled sums of squared deviations, column max |value|) of one block.

    The deviations are summed in units of the column's largest ``|value|`` ``c``:
    ``sum(((x - mean) / c)^2)``, so a column of values near 1e160 (whose squares overflow)
    gets a finite, exact-to-rounding scale.
    """
    X = np.asarray(X, dtype=np.float64)
    absmax = np.abs(X).max(axis=0, initial=0.0)
    c = units(absmax)
    Xc = X / c
    mean_c = Xc.mean(axis=0)
    return X.shape[0], mean_c * c, ((Xc - mean_c) ** 2).sum(axis=0), absmax


def column_absmax(X, _):
    """(n, column max |value|) of one block: all ``standardize="auto"`` needs to decide.

    Each column's largest and smallest value by pairwise folds (``np.maximum`` of the block's two
    halves, then of that result's halves, ...): every ufunc call runs over long contiguous rows, where
    ``X.max(axis=0)`` makes one call per row of ``d`` values, on the BLAS thread count.  The same values as
    ``X.max(axis=0)`` / ``X.min(axis=0)``: a maximum is exact in any order, and a NaN propagates either way.
    """
    X = np.asarray(X)
    if X.dtype.kind != "f":
        X = X.astype(np.float64)
    n, d = X.shape
    if n == 0:
        return 0, np.full(d, -np.inf)
    parts = max(1, min(blas_num_threads(), n // _FOLD_MIN_ROWS))
    bounds = np.linspace(0, n, parts + 1).astype(np.int64)
    extremes = np.empty((parts, 2, d), dtype=X.dtype)

    def piece(i, _state):
        rows = X[bounds[i] : bounds[i + 1]]
        extremes[i, 0] = _fold(rows, np.maximum)
        extremes[i, 1] = _fold(rows, np.minimum)

    run_claim_loops(piece, parts, parts)
    hi, lo = extremes[:, 0].max(axis=0), extremes[:, 1].min(axis=0)
    return n, np.maximum(hi, -lo).astype(np.float64)


#: rows per thread below which the column extremes are folded on one thread
_FOLD_MIN_ROWS = 4096


def _fold(Y, ufunc):
    """``ufunc.reduce(Y, axis=0)`` for a binary ``ufunc`` like ``np.maximum``, by halving ``Y`` (``n >= 1`` rows)."""
    while Y.shape[0] > 1:
        h = Y.shape[0] // 2
        Z = ufunc(Y[:h], Y[h : 2 * h])
        if Y.shape[0] % 2:
            ufunc(Z[0], Y[-1], out=Z[0])
        Y = Z
    return Y[0]


def merge_absmax(parts):
    n, absmax = 0, None
    for nb, ab in parts:
        n += nb
        absmax = ab.copy() if absmax is None else np.maximum(absmax, ab)
    return n, absmax


def merge_moments(parts):
    """Chan et al.'s pairwise update (exact to rounding, no cancellation of raw sums), in scaled units.

    Each part's scaled sum of squares is in units of its own column maxima; the merged one
    is in units of the merged maxima (never smaller, so rescaling cannot overflow).
    """
    n, mean, m2, absmax = 0, None, None, None
    for nb, mb, m2b, ab in parts:
        if nb == 0:
            continue
        if mean is None:
            n, mean, m2, absmax = nb, mb.copy(), m2b.copy(), ab.copy()
            continue
        new_max = np.maximum(absmax, ab)
        c = units(new_max)
        ca, cb = units(absmax) / c, units(ab) / c
        delta = mb / c - mean / c
        total = n + nb
        mean = mean + (mb - mean) * (nb / total)
        m2 = m2 * ca**2 + m2b * cb**2 + delta**2 * (n * nb / total)
        absmax = new_max
        n = total
    return n, mean, m2, absmax
