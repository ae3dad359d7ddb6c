"""Input checks shared by the metrics (private)."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..kernels.blocks import get_kernel
from ..utils.validation import check_input


def data_float64(X, name="X", ensure_min_samples=1):
    """Validate X and return it in float64.

    Metrics are computed in float64 whatever the input dtype: the errors they
    measure can be far below float32 resolution of the kernel values (~1e-7).
    """
    X = check_input(X, accept_sparse=("csr",), ensure_min_samples=ensure_min_samples, name=name)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    return X


def factor_float64(Y, n_rows, name="Y"):
    """Validate a low-rank factor of shape (n_rows, k) (1-D means k = 1); float64, C order."""
    if Y is None:
        raise TypeError(f"{name} is None; expected an array of shape ({n_rows}, k)")
    if sp.issparse(Y):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.dtype == object or not (np.issubdtype(Y.dtype, np.number) or Y.dtype == bool):
        raise TypeError(f"{name} must be a numeric array, got dtype {Y.dtype}")
    if np.iscomplexobj(Y):
        raise TypeError(f"{name} has complex dtype {Y.dtype}; a real factor is expected")
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape ({n_rows}, k), got {Y.ndim}-D")
    if Y.shape[0] != n_rows:
        raise ValueError(
            f"{name} has {Y.shape[0]} rows but X has {n_rows} samples; the factor must have one row per sample"
        )
    if Y.shape[1] == 0:
        raise ValueError(f"{name} has 0 columns; give at least one (a zero column for G' = 0)")
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{name} contains NaN or infinity")
    return Y


def resolve_kernel(kernel, kernel_params):
    """A :class:`Kernel` from a name + parameters, or a Kernel instance as is."""
    return get_kernel(kernel, **kernel_params)


def check_method(method, allowed, name="method"):
    if not isinstance(method, str) or method not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}, got {method!r}")
    return method


def check_positive_int(value, name, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_tol(tol):
    if isinstance(tol, bool) or not isinstance(tol, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"tol must be a number, got {type(tol).__name__}")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    return float(tol)
