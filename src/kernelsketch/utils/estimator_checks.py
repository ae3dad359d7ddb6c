"""Small helpers shared by estimators (kept out of the public API).

The kernel parameters' constraints live with the kernels: :data:`kernelsketch.kernels.selection.KERNEL_CONSTRAINTS`.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

__all__ = ["HasMethods", "Interval", "StrOptions", "output_dtype"]


def output_dtype(X):
    return np.float32 if X.dtype == np.float32 else np.float64
