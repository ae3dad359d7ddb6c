"""Turn an estimator's ``kernel``/``bandwidth``/``kernel_params`` into a Kernel."""

from __future__ import annotations

from .bandwidth import resolve_bandwidth
from .blocks import get_kernel
from .kernel_functions import KERNELS, Kernel, ShiftInvariantKernel


def make_kernel(kernel, bandwidth, kernel_params, X, random_state=0) -> Kernel:
    """Build the kernel an estimator uses, resolving bandwidth heuristics on ``X``.

    ``kernel_params`` (a dict or None) holds ``degree``, ``gamma``, ``coef0``
    for the polynomial kernel; it is never mutated.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a name or a kernelsketch Kernel, got {type(kernel).__name__}")
    cls = KERNELS.get(kernel.lower())
    if cls is None:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {sorted(set(KERNELS))}")
    params = dict(kernel_params or {})
    unknown = set(params) - {"degree", "gamma", "coef0"}
    if unknown:
        raise ValueError(f"unknown kernel_params {sorted(unknown)}; allowed: degree, gamma, coef0")
    if issubclass(cls, ShiftInvariantKernel):
        h = resolve_bandwidth(bandwidth, X, random_state=random_state)
        return get_kernel(kernel, bandwidth=h)
    return get_kernel(kernel, **params)
