"""Kernels, bandwidth heuristics, chunked kernel blocks, the Gram matrix as an operator.

See :mod:`kernelsketch.kernels.kernel_functions` for the parametrisation of
every kernel and the conversions to scikit-learn's and the papers' forms.
Names are imported lazily from their modules (PEP 562): a light submodule is imported without the others.
"""

from .._lazy import attach

_LAZY = {
    "HEURISTICS": "bandwidth",
    "estimate_bandwidth": "bandwidth",
    "resolve_bandwidth": "bandwidth",
    "get_kernel": "blocks",
    "kernel_blocks": "blocks",
    "kernel_diag": "blocks",
    "pairwise_kernel": "blocks",
    "BlockKernel": "evaluation",
    "GramOperator": "gram_operator",
    "KERNELS": "kernel_functions",
    "SHIFT_INVARIANT": "kernel_functions",
    "CallableKernel": "kernel_functions",
    "CauchyKernel": "kernel_functions",
    "CosineKernel": "kernel_functions",
    "GaussianKernel": "kernel_functions",
    "Kernel": "kernel_functions",
    "LaplacianKernel": "kernel_functions",
    "LinearKernel": "kernel_functions",
    "PolynomialKernel": "kernel_functions",
    "ShiftInvariantKernel": "kernel_functions",
    "SigmoidKernel": "kernel_functions",
    "make_kernel": "selection",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = attach(__name__, _LAZY)
