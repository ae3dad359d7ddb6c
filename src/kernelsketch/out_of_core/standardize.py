"""Standardizing a source in one pass: per-block moments merged exactly, the engine then reads z-scored rows."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._typing import DataLike
from ..utils.threads import blas_num_threads, run_claim_loops
from .engine import _file_feature_names, open_engine


# -- standardizing ----------------------------------------------------------------
def _units(absmax):
    """Each column's unit for the scaled moments: its largest ``|value|`` (1 for an all-zero column)."""
    return np.where(absmax > 0, absmax, 1.0)


def _column_moments(X, _):
    """(n, column means, scaled sums of squared deviations, column max |value|) of one block.

    The deviations are summed in units of the column's largest ``|value|`` ``c``:
    ``sum(((x - mean) / c)^2)``, so a column of values near 1e160 (whose squares overflow)
    gets a finite, exact-to-rounding scale.
    """
    X = np.asarray(X, dtype=np.float64)
    absmax = np.abs(X).max(axis=0, initial=0.0)
    c = _units(absmax)
    Xc = X / c
    mean_c = Xc.mean(axis=0)
    return X.shape[0], mean_c * c, ((Xc - mean_c) ** 2).sum(axis=0), absmax


def _column_absmax(X, _):
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


def _merge_absmax(parts):
    n, absmax = 0, None
    for nb, ab in parts:
        n += nb
        absmax = ab.copy() if absmax is None else np.maximum(absmax, ab)
    return n, absmax


def _merge_moments(parts):
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
        c = _units(new_max)
        ca, cb = _units(absmax) / c, _units(ab) / c
        delta = mb / c - mean / c
        total = n + nb
        mean = mean + (mb - mean) * (nb / total)
        m2 = m2 * ca**2 + m2b * cb**2 + delta**2 * (n * nb / total)
        absmax = new_max
        n = total
    return n, mean, m2, absmax


#: ``standardize="auto"`` z-scores when the columns' magnitudes spread over more than this factor
UNIT_SPREAD = 10.0


def magnitude_spread(column_absmax) -> float:
    """How far the columns' magnitudes differ: 90th over 10th percentile of their largest ``|value|``.

    About 1 when every column is in one unit (pixels, counts, already scaled data), large
    when the columns are measured in different units (millimetres beside thousands of
    dollars).  All-zero columns are left out.  ``standardize="auto"`` z-scores the data
    when this exceeds :data:`UNIT_SPREAD`.

    Examples
    --------
    >>> round(magnitude_spread([255, 255, 250, 0]), 3), magnitude_spread([0.1, 3.0, 1500.0, 40.0]) > UNIT_SPREAD
    (1.016, True)
    """
    a = np.asarray(column_absmax, dtype=np.float64)
    a = a[a > 0]
    if a.size < 2:
        return 1.0
    return float(np.percentile(a, 90) / np.percentile(a, 10))


def _sample_absmax(sample):
    """Each column's largest ``|value|`` among rows already read (missing cells left out)."""
    A = np.abs(sample.toarray() if sp.issparse(sample) else np.asarray(sample, dtype=np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (an all-missing column: NaN, left out below)
        top = np.nanmax(A, axis=0)
    return np.nan_to_num(top, nan=0.0)


def standardize_source(
    data: DataLike, *, when: bool | str = True, client: Any = None, sample: Any = None, **read_options: Any
) -> tuple[Any, Any]:
    """Z-score every column of ``data`` from one pass; the engine then reads standardized rows.

    Parameters
    ----------
    data : path, array, MatrixSource, dask array or an engine (as :func:`fit_source`)
    when : True or "auto", default=True
        ``"auto"``: only when the columns are in different units
        (:func:`magnitude_spread` above :data:`UNIT_SPREAD`, read in a first pass of
        column maxima); otherwise the engine is returned unchanged with ``scaler=None``
        after that one cheap pass, and standardized after a second (the moments) if not.
    sample : array, optional
        Rows already read (the run's inspection sample): when their magnitudes already differ, the one pass
        reads the moments and the maxima together (the decision is still the maxima of every row), so data that
        will be standardized is read once, not twice.

    Returns
    -------
    engine, scaler : the engine (pass it to :func:`fit_source`, :func:`transform_source`,
        :func:`cluster_file`; every block it reads is standardized) and the fitted
        :class:`sklearn.preprocessing.StandardScaler` (put it before the estimator
        in a Pipeline to apply the same scaling to new data; ``kernelsketch fit
        --standardize`` saves exactly that Pipeline).

    Means and variances come from one pass of per-block moments merged exactly
    (Chan et al.), equal to ``StandardScaler().fit(X)`` to rounding; a constant
    column is centred and left unscaled, as scikit-learn does.

    Examples
    --------
    >>> import numpy as np, kernelsketch as ks
    >>> X = np.random.default_rng(0).normal(5.0, 3.0, size=(1000, 4))
    >>> engine, scaler = ks.standardize_source(X)
    >>> res = ks.fit_source(ks.KernelJL(n_components=5, random_state=0), engine)
    >>> bool(np.allclose(scaler.mean_, X.mean(axis=0)))
    True
    """
    from sklearn.preprocessing import StandardScaler

    engine = open_engine(data, client=client, **read_options)
    if getattr(engine, "sparse", False) and when == "auto":
        return engine, None  # the automatic choice never densifies: sparse data stay as given
    if getattr(engine, "sparse", False):
        raise TypeError(
            "standardizing centres the columns, which would make sparse data dense; "
            "scale sparse data without centring (e.g. MaxAbsScaler) before fitting"
        )
    if when not in (True, "auto"):
        raise ValueError(f"when must be True or 'auto', got {when!r}")
    moments = None
    if when == "auto":
        # the decision needs only each column's largest |value| (a min and a max: a tenth of the moments'
        # cost); the moments are read in a second pass only for data that will be standardized, or in the same
        # pass when a sample already says the magnitudes differ
        likely = sample is not None and sample.shape[0] > 0 and magnitude_spread(_sample_absmax(sample)) > UNIT_SPREAD
        if likely:
            moments = engine.reduce(_column_moments, _merge_moments, desc="standardize (one pass)")
            n, absmax = moments[0], moments[3]
        else:
            n, absmax = engine.reduce(_column_absmax, _merge_absmax, desc="column magnitudes (one pass)")
        if not n:
            raise ValueError("the data has no rows")
        if magnitude_spread(absmax) <= UNIT_SPREAD:
            return engine, None
    if moments is None:
        moments = engine.reduce(_column_moments, _merge_moments, desc="standardize (one pass)")
    n, mean, m2, absmax = moments
    if not n:
        raise ValueError("the data has no rows")
    scale = _units(absmax) * np.sqrt(m2 / n)  # the standard deviation, computed without squaring the values
    with np.errstate(over="ignore"):
        var = scale**2  # (inf for a column whose variance exceeds float64's range; scale_ is what is used)
    scaler = StandardScaler()
    scaler.mean_, scaler.var_ = mean, var
    scale[scale < 10 * np.finfo(np.float64).eps * np.maximum(np.abs(mean), 1.0)] = 1.0  # constant columns
    scaler.scale_ = scale
    scaler.n_samples_seen_ = np.int64(n)
    scaler.n_features_in_ = int(mean.shape[0])
    names = _file_feature_names(engine)
    if names is not None:  # a saved Pipeline(scaler, estimator) knows the file's columns
        scaler.feature_names_in_ = names
    dtype = engine.dtype

    def apply(X, mean=mean, scale=scale, dtype=dtype):
        return ((np.asarray(X, dtype=np.float64) - mean) / scale).astype(dtype, copy=False)

    engine.set_preprocess(apply)
    return engine, scaler
