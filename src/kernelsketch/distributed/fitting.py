"""Fitting kernelsketch estimators on a dask array without bringing the data to the client.

Three strategies, by what the estimator needs from the data:

* **mergeable sketches** (:class:`FrequentDirections`, :class:`StreamingKPCA`,
  :class:`RNCA`): every row chunk is sketched by ``partial_fit`` on a clone
  and the sketches are merged up a tree (:func:`.reduction.tree_reduce`).
  One pass (two with a bandwidth heuristic).
* **landmark estimators** (:class:`Nystroem`, :class:`KernelJL`,
  :class:`SubsampleKPCA`, :class:`NystroemKernelKMeans`): landmark indices
  are drawn on the client from ``n_samples`` with the estimator's own seed
  sequence, only those rows (and a bandwidth sample) are gathered, then the
  estimator is fitted in memory with ``landmarks=`` set.  One pass.
* **random features** (:class:`RandomFourierFeatures`): only the bandwidth
  heuristic looks at data (a gathered sample).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..kernels.kernel_functions import KERNELS, Kernel, ShiftInvariantKernel
from ..kernels.selection import make_kernel
from ..maps.landmarks import resolve_n_landmarks, sample_landmarks
from ..utils.validation import check_random_state, derive_seed
from ._dask import check_dask_matrix, known_n_rows
from .reduction import compute_reduced, tree_reduce
from .sampling import gather_rows, sample_row_indices

#: rows gathered to resolve a bandwidth heuristic (all rows when there are fewer)
BANDWIDTH_ROWS = 5000
#: rows NystroemKernelKMeans runs k-means on (all rows when there are fewer)
FIT_ROWS = 20000


def _needs_data(est) -> bool:
    """True when the estimator's kernel has a bandwidth heuristic to resolve on data."""
    kernel, bandwidth = getattr(est, "kernel", None), getattr(est, "bandwidth", None)
    if not isinstance(bandwidth, str) or isinstance(kernel, Kernel) or not isinstance(kernel, str):
        return False
    cls = KERNELS.get(kernel.lower())
    return cls is not None and issubclass(cls, ShiftInvariantKernel)


def _bandwidth_indices(est, n_samples, n_rows, seed):
    if not _needs_data(est):
        return None
    # the sample's own stream, independent of the landmark draw
    return sample_row_indices(n_samples, n_rows, [seed, 0x6B73])


def _resolved_kernel(est, sample, seed):
    """The estimator's Kernel, a heuristic bandwidth resolved on ``sample`` with ``seed``."""
    return make_kernel(est.kernel, est.bandwidth, getattr(est, "kernel_params", None), sample, random_state=seed)


def _adopt(est, fitted, restore):
    """Make ``est`` the fitted estimator ``fitted`` with ``est``'s own parameters."""
    fitted.set_params(**restore)
    vars(est).clear()
    vars(est).update(vars(fitted))
    return est


def _fit_with_params(est, fit_rows, temporary):
    """``est.fit(fit_rows)`` with ``temporary`` parameters, restored afterwards (also on error)."""
    original = {k: v for k, v in est.get_params(deep=False).items() if k in temporary}
    est.set_params(**temporary)
    try:
        est.fit(fit_rows)
    finally:
        est.set_params(**original)
    return est


def _fresh(est, **params):
    """An unfitted copy of ``est`` with ``params`` changed.

    Not :func:`sklearn.base.clone`: it recurses into every parameter that has
    ``get_params``, and kernelsketch Kernel objects do not take ``deep=``.
    """
    return type(est)(**{**est.get_params(deep=False), **params})


# -- mergeable sketches ------------------------------------------------------
def _sketch_block(template, block):
    return _fresh(template).partial_fit(block)


def _fit_mergeable(est, X, *, split_every, bandwidth_rows):
    from functools import partial

    from ..sketches.frequent_directions import FrequentDirections

    if isinstance(est, FrequentDirections):
        template, restore = _fresh(est), {}
    else:
        # One integer seed and one resolved kernel for every chunk: sketches
        # merge only when their random features are identical.
        seed = derive_seed(est.random_state)
        sample = None
        if _needs_data(est):
            X, n = known_n_rows(X)
            (sample,) = gather_rows(X, _bandwidth_indices(est, n, bandwidth_rows, seed))
        kernel = _resolved_kernel(est, sample, seed)
        template = _fresh(est, kernel=kernel, random_state=seed)
        restore = {"kernel": est.kernel, "random_state": est.random_state}
    merged = compute_reduced(tree_reduce(X, partial(_sketch_block, template), split_every=split_every))
    if merged is None:
        raise ValueError("X has no rows")
    return _adopt(est, merged, restore)


# -- landmark estimators ------------------------------------------------------
def _fit_landmarks(est, X, *, bandwidth_rows, fit_rows):
    from ..cluster.nystroem_kernel_kmeans import NystroemKernelKMeans
    from ..maps.nystroem import Nystroem

    X, n = known_n_rows(X)
    if isinstance(est, NystroemKernelKMeans):
        return _fit_kernel_kmeans(est, X, n, bandwidth_rows=bandwidth_rows, fit_rows=fit_rows)
    # The in-memory fit's order of draws (LandmarkMapMixin.draw_seeds): the
    # kernel's seed, the estimator's own seeds (KernelJL: its Gaussian
    # matrix's), then landmark indices from the same generator -- so the
    # same seed picks the same rows.
    rng = check_random_state(est.random_state)
    bw_seed, extra_seeds = est.draw_seeds(rng)
    idx = None
    if est.landmarks is None:
        replace = bool(getattr(est, "replace", False))
        m = resolve_n_landmarks(est.n_landmarks, n, replace=replace)
        idx = sample_landmarks(n, m, rng, replace=replace)
    L, sample = gather_rows(X, idx, _bandwidth_indices(est, n, bandwidth_rows, bw_seed))
    temporary = {"kernel": _resolved_kernel(est, sample, bw_seed), "random_state": rng}
    if extra_seeds and isinstance(est.random_state, numbers.Integral):
        # replay the same seed: fit redraws (kernel seed, its own seeds), skips the given landmarks
        temporary["random_state"] = est.random_state
    if idx is not None:
        temporary["landmarks"] = L
    else:
        L = est.landmarks
    _fit_with_params(est, L, temporary)
    if idx is not None:
        est.landmark_indices_ = idx
    if isinstance(est, Nystroem):
        est.n_samples_seen_ = n
    return est


def _fit_kernel_kmeans(est, X, n, *, bandwidth_rows, fit_rows):
    from ..maps.nystroem import Nystroem
    from . import mapping

    # NystroemKernelKMeans.fit draws (embedding seed, k-means seed) first and
    # its Nystroem draws (bandwidth seed, landmarks) from the embedding seed.
    rng = check_random_state(est.random_state)
    seed_map, seed_km = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
    rng_map = np.random.default_rng(seed_map)
    bw_seed, _ = Nystroem.draw_seeds(rng_map)
    idx = None
    if est.landmarks is None:
        m = resolve_n_landmarks(est.n_landmarks, n)
        idx = sample_landmarks(n, m, rng_map)
    fit_idx = sample_row_indices(n, fit_rows, [seed_km, 0x6B6D])
    L, sample, X_fit = gather_rows(X, idx, _bandwidth_indices(est, n, bandwidth_rows, bw_seed), fit_idx)
    temporary = {"kernel": _resolved_kernel(est, sample, bw_seed)}
    if idx is not None:
        temporary["landmarks"] = L
    # est.fit draws the same two seeds from random_state, so its Nystroem
    # takes the landmarks and kernel given here and k-means the same seed.
    _fit_with_params(est, X_fit, temporary)
    est.nystroem_.set_params(landmarks=None, kernel=est.kernel)
    if idx is not None:
        est.nystroem_.landmark_indices_ = idx
    est.nystroem_.n_samples_seen_ = n
    # labels of every row, lazily: one more pass when computed
    est.labels_ = mapping.predict(est, X)
    return est


# -- random features -----------------------------------------------------------
def _fit_random_features(est, X, *, bandwidth_rows):
    seed = derive_seed(est.random_state)
    X, n = known_n_rows(X)
    idx = _bandwidth_indices(est, n, bandwidth_rows, seed)
    (sample,) = gather_rows(X, idx if idx is not None else np.arange(min(n, 2)))
    return _fit_with_params(est, sample, {"kernel": _resolved_kernel(est, sample, seed), "random_state": seed})


def fit(estimator, X, *, split_every=8, bandwidth_rows=BANDWIDTH_ROWS, fit_rows=FIT_ROWS):
    """Fit a kernelsketch estimator on a dask array, in place; returns it.

    Parameters
    ----------
    estimator : FrequentDirections, StreamingKPCA, RNCA, RFKPCA, Nystroem, KernelJL, SubsampleKPCA,
        NystroemKernelKMeans or RandomFourierFeatures
    X : dask.array.Array of shape (n_samples, n_features)
        Row chunks of any size; unknown chunk sizes cost one extra pass to count rows.
    split_every : int, default=8
        Fan-in of the merge tree of the sketching estimators.
    bandwidth_rows : int, default=5000
        Uniform sample of rows on which a bandwidth heuristic is resolved
        (all rows when X has fewer: the in-memory result then).
    fit_rows : int, default=20000
        Rows NystroemKernelKMeans runs k-means on (all rows when X has fewer).

    Returns
    -------
    estimator
        Fitted; its parameters are untouched.

    Notes
    -----
    *Sketches* (FD, StreamingKPCA, RNCA, RFKPCA): chunk ``i`` is sketched by
    ``clone(estimator).partial_fit(X_i)`` and the sketches merged ``split_every``
    at a time.  RNCA's and RFKPCA's merge is exact (Chan et al.'s pairwise update of mean
    and centred scatter), so the result equals the in-memory fit to rounding;
    FD's merge keeps the guarantee ``0 <= A^T A - B^T B <= Delta`` with
    ``Delta <= ||A - A_k||_F^2 / (l - k)`` (mergeability), though the sketch
    differs from a sequential one.  Random features are drawn from one
    integer seed resolved on the client (the same for every chunk, so the
    result does not depend on the chunking).

    *Landmarks*: the indices are drawn from ``n_samples`` with the same seed
    sequence as the in-memory ``fit``, so with a numeric bandwidth (or fewer
    than ``bandwidth_rows`` rows) Nystroem, SubsampleKPCA and
    NystroemKernelKMeans (up to ``fit_rows`` rows) are *identical* to the
    in-memory fit, and so is KernelJL with an integer ``random_state`` (its
    Gaussian matrix ``Z`` has its own seed, drawn before the landmarks; see
    :class:`~kernelsketch.maps.landmark_estimator.LandmarkMapMixin`).

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
    from ..cluster.nystroem_kernel_kmeans import NystroemKernelKMeans
    from ..decomposition.random_feature_pca import RFKPCA, RNCA
    from ..decomposition.streaming_kpca import StreamingKPCA
    from ..decomposition.subsample_kpca import SubsampleKPCA
    from ..maps.kernel_jl import KernelJL
    from ..maps.nystroem import Nystroem
    from ..maps.random_fourier_features import RandomFourierFeatures
    from ..sketches.frequent_directions import FrequentDirections

    X = check_dask_matrix(X)
    for name, value in (("bandwidth_rows", bandwidth_rows), ("fit_rows", fit_rows)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 2:
            raise ValueError(f"{name} must be an int >= 2, got {value!r}")
    if isinstance(estimator, (FrequentDirections, StreamingKPCA, RNCA, RFKPCA)):
        return _fit_mergeable(estimator, X, split_every=split_every, bandwidth_rows=bandwidth_rows)
    if isinstance(estimator, (Nystroem, KernelJL, SubsampleKPCA, NystroemKernelKMeans)):
        return _fit_landmarks(estimator, X, bandwidth_rows=bandwidth_rows, fit_rows=fit_rows)
    if isinstance(estimator, RandomFourierFeatures):
        return _fit_random_features(estimator, X, bandwidth_rows=bandwidth_rows)
    hint = {"KernelPCA": "exact kernel PCA needs the full N x N Gram; use SubsampleKPCA or RNCA"}
    name = type(estimator).__name__
    raise TypeError(f"fit on a dask array is not supported for {name}"
                    + (f": {hint[name]}" if name in hint else "")
                    + " (transform of a fitted estimator works: kernelsketch.distributed.transform)")
