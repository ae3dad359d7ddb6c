"""Fitting kernelsketch estimators on a dask array without bringing the data to the client.

The out-of-core driver (:func:`kernelsketch.fit_source`) on the Dask engine
(:class:`~kernelsketch.distributed.engine.DaskEngine`): one fitting code for
files, arrays and clusters, so the paths cannot drift apart.
"""

from __future__ import annotations

import numbers

from ..out_of_core import FIT_ROWS
from ._dask import check_dask_matrix


def fit(estimator, X, *, split_every=8, fit_rows=FIT_ROWS, client=None):
    """Fit a kernelsketch estimator on a dask array, in place; returns it.

    Parameters
    ----------
    estimator : FrequentDirections, StreamingKPCA, RNCA, RFKPCA, Nystroem, KernelJL, SubsampleKPCA,
        NystroemKernelKMeans or RandomFourierFeatures
    X : dask.array.Array of shape (n_samples, n_features)
        Row chunks of any size; unknown chunk sizes cost one extra pass to count rows.
    split_every : int, default=8
        Fan-in of the merge tree of the sketching estimators.
    fit_rows : int, default=20000
        Rows NystroemKernelKMeans runs k-means on (all rows when X has fewer).
    client : distributed.Client, optional
        Scatter the state of each pass to the workers up front.

    Returns
    -------
    estimator
        Fitted; its parameters are untouched.

    Notes
    -----
    *Sketches* (FD, StreamingKPCA, RNCA, RFKPCA): chunk ``i`` is sketched by
    ``partial_fit`` on a copy of the estimator and the sketches merged
    ``split_every`` at a time.  RNCA's and RFKPCA's merge is exact (Chan et
    al.'s pairwise update of mean and centred scatter), so the result equals
    the in-memory fit to rounding; FD's merge keeps the guarantee
    ``0 <= A^T A - B^T B <= Delta`` with ``Delta <= ||A - A_k||_F^2 / (l - k)``
    (mergeability), though the sketch differs from a sequential one.

    *Landmarks and bandwidths*: the landmark indices are drawn from
    ``n_samples`` with the in-memory ``fit``'s own order of random draws, and
    a heuristic bandwidth from the very pairs it samples (gathered by index),
    so Nystroem, KernelJL, SubsampleKPCA, RandomFourierFeatures and the
    random-feature PCAs are *identical* to the in-memory fit, and
    NystroemKernelKMeans too when X has at most ``fit_rows`` rows.
    ``NystroemKernelKMeans.labels_`` is a lazy dask array (``predict`` of every row).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from kernelsketch.decomposition import RNCA
    >>> X = np.random.default_rng(0).normal(size=(400, 3))
    >>> a = fit(RNCA(n_components=2, n_random_features=32, bandwidth=2.0, random_state=0),
    ...         da.from_array(X, chunks=(100, 3)))
    >>> b = RNCA(n_components=2, n_random_features=32, bandwidth=2.0, random_state=0).fit(X)
    >>> bool(np.allclose(a.explained_variance_, b.explained_variance_))
    True
    """
    from ..out_of_core import fit_source, fit_strategy
    from . import mapping
    from .engine import DaskEngine

    X = check_dask_matrix(X)
    if isinstance(fit_rows, bool) or not isinstance(fit_rows, numbers.Integral) or fit_rows < 2:
        raise ValueError(f"fit_rows must be an int >= 2, got {fit_rows!r}")
    # the class declares how it is fitted without the data in one place (out_of_core.FIT_STRATEGIES);
    # a plain fit on a sample is fit_source's business, not this whole-data fit's
    if fit_strategy(estimator) == "sample":
        hint = {"KernelPCA": "exact kernel PCA needs the full N x N Gram; use SubsampleKPCA or RNCA"}
        name = type(estimator).__name__
        raise TypeError(
            f"fit on a dask array is not supported for {name}"
            + (f": {hint[name]}" if name in hint else "")
            + " (transform of a fitted estimator works: kernelsketch.distributed.transform; "
            "kernelsketch.fit_source fits any estimator on a sample)"
        )
    engine = DaskEngine(X, client=client, split_every=split_every)
    fit_source(estimator, engine, fit_rows=fit_rows)
    if fit_strategy(estimator) == "landmarks_then_sample" and hasattr(estimator, "predict"):
        # labels of every row, lazily: one more pass when computed
        estimator.labels_ = mapping.predict(estimator, X)
    return estimator
