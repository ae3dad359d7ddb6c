"""Turn an estimator's ``kernel``/``bandwidth``/``gamma``/``kernel_params`` into a Kernel."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .bandwidth import HEURISTICS, resolve_bandwidth
from .kernel_functions import KERNELS, CallableKernel, Kernel, ShiftInvariantKernel, get_kernel

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


#: kernel_params each named kernel accepts
_KERNEL_PARAMS = {
    "polynomial": {"degree", "gamma", "coef0"},
    "poly": {"degree", "gamma", "coef0"},
    "sigmoid": {"gamma", "coef0"},
}


def make_kernel(kernel, bandwidth, kernel_params, X, random_state=0, gamma=None) -> Kernel:
    """Build the kernel an estimator uses, resolving bandwidth heuristics on ``X``.

    ``kernel_params`` (a dict or None) holds ``degree``, ``gamma``, ``coef0``
    for the polynomial kernel, ``gamma``, ``coef0`` for the sigmoid kernel, and
    keyword arguments of a callable kernel; it is never mutated.  ``gamma``
    (scikit-learn's parameter) sets a shift-invariant kernel's bandwidth
    (:meth:`~kernelsketch.kernels.ShiftInvariantKernel.bandwidth_from_gamma`) in place
    of a heuristic, or the polynomial / sigmoid ``gamma``; given together with a
    numeric ``bandwidth`` (or a different ``kernel_params["gamma"]``) it is an error.
    """
    if isinstance(kernel, Kernel):
        if gamma is not None:
            raise ValueError("gamma cannot be combined with a Kernel instance; set it on the kernel")
        return kernel
    if callable(kernel):
        if gamma is not None:
            raise ValueError("gamma has no meaning for a callable kernel; pass its arguments in kernel_params")
        return CallableKernel(kernel, **dict(kernel_params or {}))
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a name, a kernelsketch Kernel or a callable, got {type(kernel).__name__}")
    key = kernel.lower()
    cls = KERNELS.get(key)
    if cls is None:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {sorted(set(KERNELS))}")
    params = dict(kernel_params or {})
    allowed = _KERNEL_PARAMS.get(key, set())
    unknown = set(params) - allowed
    if unknown:
        raise ValueError(
            f"unknown kernel_params {sorted(unknown)} for the {key} kernel; allowed: "
            f"{', '.join(sorted(allowed)) or 'none'}"
        )
    if issubclass(cls, ShiftInvariantKernel):
        if gamma is not None:
            if not isinstance(bandwidth, str):
                raise ValueError(
                    f"give the {key} kernel's width once: gamma={gamma!r} or bandwidth={bandwidth!r}, not both"
                )
            return get_kernel(key, bandwidth=cls.bandwidth_from_gamma(gamma))
        h = resolve_bandwidth(bandwidth, X, random_state=random_state)
        return get_kernel(key, bandwidth=h)
    if gamma is not None:
        if "gamma" not in allowed:
            raise ValueError(f"the {key} kernel has no gamma")
        if params.get("gamma", gamma) != gamma:
            raise ValueError(f"gamma={gamma!r} and kernel_params['gamma']={params['gamma']!r} disagree")
        params["gamma"] = gamma
    return get_kernel(key, **params)


class KernelEstimatorMixin:
    """``bandwidth_``: the bandwidth a fitted kernel estimator uses (None for kernels without one)."""

    @property
    def bandwidth_(self):
        kernel = getattr(self, "kernel_", None)
        if kernel is None:
            raise AttributeError(f"{type(self).__name__} is not fitted: bandwidth_ is set by fit")
        return fitted_bandwidth(kernel)


def fitted_bandwidth(kernel):
    """The bandwidth ``h`` of a fitted kernel, or None for kernels without one."""
    return getattr(kernel, "bandwidth", None) if isinstance(kernel, ShiftInvariantKernel) else None
