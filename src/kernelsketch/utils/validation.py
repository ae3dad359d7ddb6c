"""Input validation with messages that name the problem.

Thin wrappers over :func:`sklearn.utils.check_array` (which already rejects
NaN/inf, complex and empty input with clear messages) plus the few checks it
does not make for us (object/bool dtypes, feature counts at transform time).

scikit-learn is imported on the first input that needs it: a finite float32/float64 NumPy block passes
:func:`check_input` without it (:func:`_plain_float_block`), so a Dask worker's block tasks never import it.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .array_api import array_namespace, to_numpy

FLOAT_DTYPES = (np.float64, np.float32)


def check_input(
    X,
    *,
    accept_sparse=("csr",),
    dtype=FLOAT_DTYPES,
    ensure_min_samples=1,
    ensure_min_features=1,
    name="X",
    reset=None,
    estimator=None,
    copy=False,
    allow_nan=False,
) -> NDArray[Any] | sp.csr_matrix:
    """Validate a data matrix: 2-D, finite, numeric, float32/float64, non-empty.

    With ``estimator`` and ``reset`` given, goes through scikit-learn's
    ``validate_data`` so ``n_features_in_`` (and ``feature_names_in_``) are set
    at fit (``reset=True``) and checked at transform (``reset=False``).
    Complex input raises scikit-learn's ``ValueError("Complex data not supported")``.

    float32 is kept as float32; integer and boolean input become float64.
    Sparse input is converted to CSR with sorted indices (when accepted).
    """
    if X is None:
        raise TypeError(f"{name} is None; expected an array of shape (n_samples, n_features)")
    if (estimator is None or reset is None) and _plain_float_block(
        X, dtype, ensure_min_samples, ensure_min_features, copy, allow_nan
    ):
        X = np.asarray(X)  # (what check_array returns for it: the same array, a subclass as an ndarray view)
        _check_magnitude(X, name)
        return X
    from sklearn.utils import check_array
    from sklearn.utils.validation import validate_data

    if (ns := array_namespace(X)) is not None:
        # a PyTorch / CuPy / ... array under array_api_dispatch: the NumPy code runs on a host copy
        # (the estimators' transforms with a device path never come here: kernels.array_api)
        X = to_numpy(X, ns[0])
    kwargs = dict(
        accept_sparse=list(accept_sparse) if accept_sparse else False,
        dtype=list(dtype) if isinstance(dtype, tuple) else dtype,
        ensure_all_finite="allow-nan" if allow_nan else True,
        ensure_min_samples=ensure_min_samples,
        ensure_min_features=ensure_min_features,
        copy=copy,
    )
    # scikit-learn's finiteness check sums X first: inf + -inf or an overflowing sum warns
    # ("invalid value", "overflow") just before it raises its clear ValueError; only the error is news
    resetting = estimator is not None and bool(reset)
    before = {a: vars(estimator)[a] for a in _FEATURE_ATTRS if a in vars(estimator)} if resetting else {}
    with np.errstate(invalid="ignore", over="ignore"):
        if estimator is not None and reset is not None:
            # sets n_features_in_ (reset=True) or checks it (reset=False)
            X = validate_data(estimator, X, reset=reset, **kwargs)
        else:
            X = check_array(X, input_name=name, estimator=estimator, **kwargs)
    try:
        _check_magnitude(X, name)
    except ValueError:
        if resetting:
            # refused input leaves the estimator as it was: a stream that never started has not started
            for attr in _FEATURE_ATTRS:
                if attr in before:
                    setattr(estimator, attr, before[attr])
                else:
                    vars(estimator).pop(attr, None)
        raise
    if sp.issparse(X):
        if not X.has_sorted_indices:
            X = X.copy()
            X.sort_indices()
        if X.dtype not in FLOAT_DTYPES:
            X = X.astype(np.float64)
    return X


def _plain_float_block(X, dtype, ensure_min_samples, ensure_min_features, copy, allow_nan):
    """Whether ``X`` is a NumPy array that :func:`sklearn.utils.check_array` would return as it is: 2-D, of at least
    the rows and columns asked, float32 or float64 among ``dtype``, every value finite (its sum is: any NaN or
    infinity makes it non-finite), no copy asked.  Anything else (a doubt included: a sum that overflows) goes to
    scikit-learn, whose answer and messages stand."""
    if type(X) not in (np.ndarray, np.memmap) or X.ndim != 2 or copy or allow_nan:
        return False
    if X.shape[0] < max(ensure_min_samples, 1) or X.shape[1] < max(ensure_min_features, 1):
        return False
    allowed = dtype if isinstance(dtype, tuple | list) else (dtype,)
    named = [np.dtype(d) for d in allowed if isinstance(d, type | np.dtype)]
    if X.dtype not in (np.float32, np.float64) or X.dtype not in named:
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(X.sum()))


#: what validate_data(reset=True) sets on the estimator
_FEATURE_ATTRS = ("n_features_in_", "feature_names_in_")

#: largest magnitude accepted: squared norms and distances of such values (and sums of a few
#: thousand of them) stay finite in float64 (max ~1.8e308)
MAX_MAGNITUDE = 1e150


def _check_magnitude(X, name):
    data = X.data if sp.issparse(X) else X
    if data.size == 0 or data.dtype.kind != "f" or float(np.finfo(data.dtype).max) <= MAX_MAGNITUDE:
        return
    big = (
        max(float(np.nanmax(data)), -float(np.nanmin(data)))
        if np.isnan(data).any()
        else max(float(data.max()), -float(data.min()))
    )
    if big > MAX_MAGNITUDE:
        raise ValueError(
            f"{name} has a value of magnitude {big:.4g}: squared distances overflow float64 beyond "
            f"about {MAX_MAGNITUDE:g}; rescale the data (e.g. StandardScaler) first"
        )


def check_input_xp(X, xp, *, estimator=None, reset=None, ensure_min_samples=1, name="X"):
    """:func:`check_input` for a PyTorch / CuPy / ... array, on its device (no host copy).

    2-D, at least ``ensure_min_samples`` rows and one column, finite, no magnitude beyond
    float64's squared-distance range; integer and boolean input become float64, float32 stays
    float32. With ``estimator``: ``reset=True`` sets ``n_features_in_`` (an array has no
    feature names), ``reset=False`` checks it.
    """
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D {name} of shape (n_samples, n_features), got shape {tuple(X.shape)}")
    if X.shape[0] < ensure_min_samples:
        raise ValueError(
            f"Found array with {X.shape[0]} sample(s) (shape={tuple(X.shape)}) while a minimum of "
            f"{ensure_min_samples} is required."
        )
    if X.shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={tuple(X.shape)}) while a minimum of 1 is required.")
    if xp.isdtype(X.dtype, "complex floating"):
        raise ValueError("Complex data not supported")
    if not xp.isdtype(X.dtype, "real floating"):
        X = xp.astype(X, xp.float64)
    if not bool(xp.all(xp.isfinite(X))):
        raise ValueError(f"Input {name} contains NaN or infinity.")
    if X.dtype == xp.float64:
        big = float(xp.max(xp.abs(X)))
        if big > MAX_MAGNITUDE:
            raise ValueError(
                f"{name} has a value of magnitude {big:.4g}: squared distances overflow float64 beyond "
                f"about {MAX_MAGNITUDE:g}; rescale the data (e.g. StandardScaler) first"
            )
    if estimator is not None and reset is not None:
        if reset:
            estimator.n_features_in_ = int(X.shape[1])
            vars(estimator).pop("feature_names_in_", None)
        else:
            check_n_features(estimator, X, name)
    return X


def dense_if_needed(est, X):
    """``X`` as ``est`` takes it: a sparse block made dense unless the estimator's tags accept sparse input."""
    if not sp.issparse(X):
        return X
    try:
        sparse_ok = bool(est.__sklearn_tags__().input_tags.sparse)
    except AttributeError:
        sparse_ok = False
    return X if sparse_ok else X.toarray()


def check_n_features(estimator, X, name="X"):
    """Raise a ValueError naming both counts when X has the wrong feature count."""
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and X.shape[1] != expected:
        raise ValueError(
            f"{name} has {X.shape[1]} features, but {type(estimator).__name__} "
            f"is expecting {expected} features as input."
        )


def check_random_state(seed) -> np.random.Generator:
    """Turn ``None``, an int, a ``SeedSequence`` or a ``Generator`` into a ``Generator``.

    A ``numpy.random.RandomState`` is accepted too (scikit-learn habit): a
    Generator is seeded from it, so results stay reproducible.
    """
    if seed is None or isinstance(seed, (numbers.Integral, np.integer, np.random.SeedSequence)):
        if isinstance(seed, numbers.Integral) and int(seed) < 0:
            raise ValueError(f"random_state must be a non-negative int, got {seed}")
        return np.random.default_rng(seed if seed is None or isinstance(seed, np.random.SeedSequence) else int(seed))
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    raise TypeError(f"random_state must be None, an int, a numpy Generator or RandomState; got {type(seed).__name__}")


def derive_seed(random_state) -> int:
    """A fixed 32-bit integer seed (accepted by scikit-learn too) drawn once from ``random_state``.

    Used where several independent streams must be derived reproducibly, e.g.
    ``default_rng([seed, block_index])`` for chunk-independent randomness.
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).integers(0, 2**32 - 1))


def cast_finite(X, dtype, *, name="X", stream="stream"):
    """``X`` in ``dtype``; a ValueError when a finite value does not survive the cast.

    A stream (a sketch, a reservoir) keeps the dtype of its first block; a
    later float64 block with values beyond float32's range would silently
    become ``inf`` there and poison every later result (an SVD of a
    non-finite matrix may never return).  Refused before anything enters
    the state.
    """
    dtype = np.dtype(dtype)
    if X.dtype == dtype:
        return X
    with np.errstate(over="ignore", invalid="ignore"):
        Y = X.astype(dtype)
    data = Y.data if sp.issparse(Y) else Y
    if not np.all(np.isfinite(data)):
        src = X.data if sp.issparse(X) else X
        big = float(np.max(np.abs(src)))
        raise ValueError(
            f"{name} has a value of magnitude {big:.4g}, beyond the range of {dtype} (max {np.finfo(dtype).max:.4g}), "
            f"the dtype this {stream} took from its first block; rescale the data or start the stream in float64"
        )
    return Y


def require_finite(A, what="matrix"):
    """Raise a ValueError before a LAPACK call would see NaN or inf (it may never return)."""
    data = A.data if sp.issparse(A) else A
    if not np.all(np.isfinite(data)):
        raise ValueError(
            f"the {what} has non-finite entries (overflow in the data or the kernel); "
            "rescale the data or choose another bandwidth"
        )
    return A


#: column names that mean "the classes", not a feature (a file's header or a DataFrame's columns)
LABEL_NAMES = frozenset({"label", "labels", "class", "classes", "target", "y", "category", "species", "outcome"})


def label_like_names(names) -> list:
    """The names among ``names`` that are named like the class labels (:data:`LABEL_NAMES`): clustering or
    embedding them as features is almost never meant (``label_column=`` leaves one out, ``columns=`` keeps it).
    A ``y`` beside an ``x`` is a coordinate."""
    names = list(names)
    lower = {str(n).strip().lower() for n in names}
    pair = {"y"} if "x" in lower else set()  # x and y side by side are coordinates, not features and a target
    return [n for n in names if str(n).strip().lower() in LABEL_NAMES - pair]


def refuse_label_like_frame(X):
    """A ValueError when ``X`` (a DataFrame) has a column named like the class labels: ``fit(df)`` of a
    clustering would cluster the answer (the guard ``cluster_file`` and the command line have)."""
    columns = getattr(X, "columns", None)
    if columns is None or getattr(X, "ndim", 2) != 2:
        return
    suspects = label_like_names(columns)
    if suspects:
        raise ValueError(
            f"column {suspects[0]!r} looks like the class labels: drop it before fitting (X.drop(columns="
            f"{[str(s) for s in suspects]!r})), or rename it if it is a feature"
        )
