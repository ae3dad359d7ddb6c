"""Kernels, bandwidth heuristics, chunked kernel blocks, the Gram matrix as an operator.

See :mod:`kernelsketch.kernels.kernel_functions` for the parametrisation of
every kernel and the conversions to scikit-learn's and the papers' forms.
"""

from .bandwidth import HEURISTICS, estimate_bandwidth, resolve_bandwidth
from .blocks import get_kernel, kernel_blocks, kernel_diag, pairwise_kernel
from .evaluation import BlockKernel
from .gram_operator import GramOperator
from .kernel_functions import (
    KERNELS,
    SHIFT_INVARIANT,
    CallableKernel,
    CauchyKernel,
    CosineKernel,
    GaussianKernel,
    Kernel,
    LaplacianKernel,
    LinearKernel,
    PolynomialKernel,
    ShiftInvariantKernel,
    SigmoidKernel,
)
from .selection import make_kernel

__all__ = [
    "HEURISTICS",
    "KERNELS",
    "SHIFT_INVARIANT",
    "BlockKernel",
    "CallableKernel",
    "CauchyKernel",
    "CosineKernel",
    "GaussianKernel",
    "GramOperator",
    "Kernel",
    "LaplacianKernel",
    "LinearKernel",
    "PolynomialKernel",
    "ShiftInvariantKernel",
    "SigmoidKernel",
    "estimate_bandwidth",
    "get_kernel",
    "kernel_blocks",
    "kernel_diag",
    "make_kernel",
    "pairwise_kernel",
    "resolve_bandwidth",
]
