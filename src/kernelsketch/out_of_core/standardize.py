"""Standardizing a source in one pass: per-block moments merged exactly, the engine then reads z-scored rows."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._typing import DataLike
from .column_statistics import column_absmax, column_moments, merge_absmax, merge_moments, units
from .engine import _file_feature_names, open_engine

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
            moments = engine.reduce(column_moments, merge_moments, desc="standardize (one pass)")
            n, absmax = moments[0], moments[3]
        else:
            n, absmax = engine.reduce(column_absmax, merge_absmax, desc="column magnitudes (one pass)")
        if not n:
            raise ValueError("the data has no rows")
        if magnitude_spread(absmax) <= UNIT_SPREAD:
            return engine, None
    if moments is None:
        moments = engine.reduce(column_moments, merge_moments, desc="standardize (one pass)")
    n, mean, m2, absmax = moments
    if not n:
        raise ValueError("the data has no rows")
    scale = units(absmax) * np.sqrt(m2 / n)  # the standard deviation, computed without squaring the values
    with np.errstate(over="ignore"):
        var = scale**2  # (inf for a column whose variance exceeds float64's range; scale_ is what is used)
    from sklearn.preprocessing import StandardScaler  # (here: sklearn.preprocessing imports scipy.stats)

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
