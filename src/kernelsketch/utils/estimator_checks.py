"""Small helpers shared by estimators (kept out of the public API)."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions  # noqa: F401  (re-exported)

from ..kernels.bandwidth import HEURISTICS
from ..kernels.kernel_functions import KERNELS, Kernel

#: constraints shared by every kernel estimator
KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNELS)), Kernel, callable],
    "bandwidth": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions(set(HEURISTICS))],
    "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "kernel_params": [dict, None],
    "random_state": ["random_state", np.random.Generator],
}
#: random features need a kernel with a spectral measure: a name or Kernel, not a callable
FEATURE_KERNEL_CONSTRAINT = [StrOptions(set(KERNELS)), Kernel]


def output_dtype(X):
    return np.float32 if X.dtype == np.float32 else np.float64
