"""Bandwidth heuristics by name.

* ``"percentile"``: the q-th percentile (default q = 25, as in the Kernel JL
  paper's experiments) of interpoint Euclidean distances.
* ``"median"``: the median interpoint distance (q = 50).
* ``"mean_sq"``: the Nystrom eigengap paper's kernel ``exp(-lambda ||x-y||^2 /
  dbar^2)`` with ``dbar^2`` the mean squared interpoint distance; returned as
  our ``h = dbar / sqrt(lambda)``.  ``dbar^2`` is exact in O(n d):
  ``sum_{i != j} ||x_i - x_j||^2 = 2 n sum_i ||x_i||^2 - 2 ||sum_i x_i||^2``.

Percentiles are computed exactly from all pairs when there are at most
``n_pairs`` of them, otherwise from ``n_pairs`` pairs ``(i, j)``, ``i != j``,
drawn uniformly with a seeded generator.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist

from ..utils.array_api import array_namespace, host_rows, to_numpy
from ..utils.validation import check_input, check_input_xp, check_random_state

HEURISTICS = ("percentile", "median", "mean_sq")


def _row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    X = np.asarray(X, dtype=np.float64)
    return np.einsum("ij,ij->i", X, X)


def _all_identical(X):
    if sp.issparse(X):
        X = X.tocsc()
        return bool((X.max(axis=0) - X.min(axis=0)).count_nonzero() == 0)
    return bool(np.all(np.ptp(X, axis=0) == 0))


def check_distance_scale(L):
    """Refuse rows whose spread squares out of their dtype's range (under- or overflow): every distance would be 0
    or inf, and the rows would look like duplicates to a kernel.  Names the remedy (the landmark graph's
    landmarks and the bandwidth heuristics' rows are checked by it, so every method says the same)."""
    L = L.toarray() if sp.issparse(L) else np.asarray(L)
    dtype = np.dtype(np.float32 if L.dtype == np.float32 else np.float64)
    unit = float(np.abs(L).max()) if L.size else 0.0
    if not unit > 0 or L.shape[0] < 2:
        return
    L64 = L.astype(np.float64) / unit  # (in units of the largest value: the spread's own square cannot underflow)
    spread = unit * float(np.sqrt(((L64 - L64.mean(axis=0)) ** 2).sum(axis=1).mean()))
    info = np.finfo(dtype)
    low, high = np.sqrt(float(info.tiny) / float(info.eps)), np.sqrt(float(info.max) * float(info.eps))
    if spread == 0.0 or low <= spread <= high:
        return
    what = "underflow" if spread < low else "overflow"
    raise ValueError(
        f"the rows' spread (their RMS distance to their mean) is {spread:.3g}: squared distances {what} in "
        f"{dtype.name} (distances from {low:.3g} to {high:.3g} keep their digits); rescale the data (e.g. "
        "standardize=True, --standardize, or StandardScaler)"
        + (" or compute in float64" if dtype == np.float32 else "")
    )


def estimate_bandwidth(X, method="percentile", *, percentile=25.0, lam=1.0, n_pairs=100_000, random_state=0):
    """Estimate a kernel bandwidth ``h`` from data.

    Parameters
    ----------
    X : array-like or CSR of shape (n_samples, n_features), n_samples >= 2
    method : {"percentile", "median", "mean_sq"}
    percentile : float in (0, 100]
        q for ``"percentile"``.
    lam : float > 0
        lambda for ``"mean_sq"``.
    n_pairs : int
        Pairs sampled for the percentile methods when there are more.
    random_state : int, Generator or None

    Returns
    -------
    h : float > 0

    Raises
    ------
    ValueError
        If all points are identical, or the chosen percentile is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels import estimate_bandwidth
    >>> X = np.array([[0.0], [1.0], [3.0]])   # distances 1, 2, 3
    >>> float(estimate_bandwidth(X, "median"))
    2.0
    """
    if method not in HEURISTICS:
        raise ValueError(f"unknown bandwidth heuristic {method!r}; choose one of {HEURISTICS} or give a number")
    if (ns := array_namespace(X)) is not None:  # a PyTorch / CuPy / ... array: only the sampled rows leave it
        return _estimate_on_device(X, method, percentile, lam, n_pairs, random_state, ns[0])
    X = check_input(X, accept_sparse=("csr",), ensure_min_samples=2, name="X")
    if _all_identical(X):
        raise ValueError("all points are identical: every interpoint distance is 0, so no bandwidth heuristic applies")
    if not sp.issparse(X):
        check_distance_scale(X)
    n = X.shape[0]
    if method == "mean_sq":
        s = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
        return bandwidth_from_moments(n, float(_row_sq_norms(X).sum()), s, lam)
    q = _check_percentile(method, percentile)
    plan = bandwidth_plan(method, n, n_pairs=n_pairs, random_state=random_state)
    if plan[0] == "all":
        Xd = X.toarray() if sp.issparse(X) else X
        d = pdist(np.asarray(Xd, dtype=np.float64))
    else:
        _, i, j = plan
        if sp.issparse(X):
            diff = X[i] - X[j]
            d = np.sqrt(np.asarray(diff.multiply(diff).sum(axis=1), dtype=np.float64).ravel())
        else:
            diff = np.asarray(X[i], dtype=np.float64) - X[j]
            d = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return _percentile_of(d, q)


def _estimate_on_device(X, method, percentile, lam, n_pairs, random_state, xp):
    """:func:`estimate_bandwidth` of a device array, by its plan (:func:`bandwidth_plan`): the sums of
    ``"mean_sq"`` on the device, and only the sampled pairs' rows copied to the host."""
    X = check_input_xp(X, xp, ensure_min_samples=2)
    n = X.shape[0]
    if bool(xp.all(X == X[:1, ...])):
        raise ValueError("all points are identical: every interpoint distance is 0, so no bandwidth heuristic applies")
    plan = bandwidth_plan(method, n, n_pairs=n_pairs, random_state=random_state)
    if plan[0] == "moments":
        X64 = xp.astype(X, xp.float64)
        return bandwidth_from_moments(n, float(xp.sum(X64 * X64)), to_numpy(xp.sum(X64, axis=0), xp), lam)
    if plan[0] == "all":
        return bandwidth_from_rows(method, to_numpy(X, xp), np.arange(n), percentile=percentile)
    _, i, j = plan
    union = np.unique(np.concatenate([i, j]))
    return bandwidth_from_rows(method, host_rows(X, union), union, i, j, percentile=percentile)


def _check_percentile(method, percentile):
    q = 50.0 if method == "median" else float(percentile)
    if not 0 < q <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {percentile!r}")
    return q


def _percentile_of(d, q):
    h = float(np.percentile(d, q))
    if h <= 0:
        raise ValueError(
            f"the {q:g}th percentile of interpoint distances is 0 (many duplicate points); "
            "give a numeric bandwidth (--bandwidth VALUE on the command line), the 'median' or 'mean_sq' "
            "heuristic, or a larger percentile (kernel_params / the estimator's percentile)"
        )
    return h


def bandwidth_plan(method, n_samples, *, n_pairs=100_000, random_state=0):
    """What :func:`estimate_bandwidth` reads from ``n_samples`` rows, drawn as it draws it.

    Lets a reader that cannot hold the data (a file streamed in blocks, a
    Dask array) resolve a heuristic to exactly the value
    ``estimate_bandwidth(X, method, random_state=random_state)`` gives on
    the whole matrix: gather the rows the plan names, then call
    :func:`bandwidth_from_rows` (or, for ``"mean_sq"``, one pass of sums and
    :func:`bandwidth_from_moments`).

    Returns
    -------
    ("moments",)
        ``"mean_sq"``: needs ``n``, ``sum ||x||^2`` and the column sums.
    ("all",)
        Few enough pairs: every row (all pairwise distances).
    ("pairs", i, j)
        Row indices of the ``n_pairs`` sampled pairs.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> _, i, j = bandwidth_plan("median", 2000, random_state=0)
    >>> union = np.unique(np.concatenate([i, j]))
    >>> h = bandwidth_from_rows("median", X[union], union, i, j)
    >>> h == estimate_bandwidth(X, "median", random_state=0)
    True
    """
    if method not in HEURISTICS:
        raise ValueError(f"unknown bandwidth heuristic {method!r}; choose one of {HEURISTICS} or give a number")
    n = int(n_samples)
    if n < 2:
        raise ValueError(f"a bandwidth heuristic needs at least 2 rows, got {n}")
    if method == "mean_sq":
        return ("moments",)
    if n * (n - 1) // 2 <= n_pairs:
        return ("all",)
    rng = check_random_state(random_state)
    i = rng.integers(0, n, n_pairs)
    j = rng.integers(0, n - 1, n_pairs)
    j += j >= i  # uniform over j != i
    return ("pairs", i, j)


def bandwidth_from_rows(method, rows, row_indices, i=None, j=None, *, percentile=25.0):
    """The percentile heuristic from gathered rows (see :func:`bandwidth_plan`).

    ``rows`` are the data rows at the sorted indices ``row_indices``; ``i`` and
    ``j`` the plan's pairs (None for the ``("all",)`` plan, where ``rows`` is every row).
    """
    q = _check_percentile(method, percentile)
    R = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
    check_distance_scale(R)
    R = np.asarray(R, dtype=np.float64)
    if i is None:
        if R.shape[0] >= 2 and np.all(np.ptp(R, axis=0) == 0):
            raise ValueError(
                "all points are identical: every interpoint distance is 0, so no bandwidth heuristic applies"
            )
        return _percentile_of(pdist(R), q)
    pos_i = np.searchsorted(row_indices, i)
    pos_j = np.searchsorted(row_indices, j)
    diff = R[pos_i] - R[pos_j]
    return _percentile_of(np.sqrt(np.einsum("ij,ij->i", diff, diff)), q)


def bandwidth_from_moments(n, sq_norm_sum, col_sums, lam=1.0):
    """The ``"mean_sq"`` heuristic from ``n``, ``sum_i ||x_i||^2`` and ``sum_i x_i``.

    ``sum_{i != j} ||x_i - x_j||^2 = 2 n sum_i ||x_i||^2 - 2 ||sum_i x_i||^2``, so one pass of sums is exact.
    """
    if not (isinstance(lam, numbers.Real) and lam > 0):
        raise ValueError(f"lam must be > 0, got {lam!r}")
    s = np.asarray(col_sums, dtype=np.float64).ravel()
    dbar2 = (2.0 * n * float(sq_norm_sum) - 2.0 * s @ s) / (n * (n - 1))
    if not dbar2 > 0:
        raise ValueError("all points are identical: every interpoint distance is 0, so no bandwidth heuristic applies")
    return float(np.sqrt(dbar2 / lam))


def resolve_bandwidth(bandwidth, X, random_state=0):
    """A numeric bandwidth from a number or a heuristic name, with clear errors."""
    if isinstance(bandwidth, str):
        return estimate_bandwidth(X, bandwidth, random_state=random_state)
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"bandwidth must be a positive number or one of {HEURISTICS}, got {bandwidth!r}")
    if not np.isfinite(bandwidth) or bandwidth <= 0:
        raise ValueError(f"bandwidth must be a positive finite number, got {bandwidth!r}")
    return float(bandwidth)


def _moments(X, _):
    """One block's ``(rows, sum of squares, column sums)``: what ``"mean_sq"`` needs of every row."""
    if sp.issparse(X):
        sq = float(X.multiply(X).sum())
        s = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
    else:
        X64 = np.asarray(X, dtype=np.float64)
        sq = float(np.einsum("ij,ij->", X64, X64))
        s = X64.sum(axis=0)
    return (X.shape[0], sq, s)


def bandwidth_of_rows(method, rows, random_state=0):
    """:func:`estimate_bandwidth` of every row of a row source (:mod:`kernelsketch.utils.row_source`: an array,
    a file, Dask), from the very pairs it samples with ``random_state`` (gathered by index), or from one pass of
    sums for ``"mean_sq"``: the bandwidth an in-memory fit resolves, without the rows in memory."""
    from ..utils.row_source import count_rows, sum_parts

    plan = bandwidth_plan(method, count_rows(rows), random_state=random_state)
    if plan[0] == "moments":
        n, sq, s = rows.reduce(_moments, sum_parts, desc="bandwidth (mean_sq)")
        return bandwidth_from_moments(n, sq, s)
    if plan[0] == "all":
        X, _ = rows.gather(np.arange(rows.n_rows))
        return bandwidth_from_rows(method, X, None)
    _, i, j = plan
    union = np.unique(np.concatenate([i, j]))
    X, _ = rows.gather(union)
    return bandwidth_from_rows(method, X, union, i, j)
