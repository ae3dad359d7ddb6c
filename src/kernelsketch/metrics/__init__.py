"""Gram-approximation errors, Nystroem eigengap errors, Kernel JL Theorem 1, clustering scores."""

from .clustering import adjusted_rand_index, embedding_silhouette, rand_index, relative_eigengap
from .gram_errors import (
    gram_residual_norms,
    kernel_frobenius_error,
    kernel_frobenius_error_dense,
    kernel_spectral_error,
    kernel_spectral_error_dense,
)
from .kernel_jl import Theorem1Error, theorem1_inner_product_error
from .nystrom_errors import (
    NystroemErrors,
    additional_approximation_error,
    additional_approximation_error_dense,
    eigengaps,
    nystroem_errors,
    nystroem_factor,
    top_eigen,
)

__all__ = [
    "NystroemErrors",
    "Theorem1Error",
    "additional_approximation_error",
    "additional_approximation_error_dense",
    "adjusted_rand_index",
    "eigengaps",
    "embedding_silhouette",
    "gram_residual_norms",
    "kernel_frobenius_error",
    "kernel_frobenius_error_dense",
    "kernel_spectral_error",
    "kernel_spectral_error_dense",
    "nystroem_errors",
    "nystroem_factor",
    "rand_index",
    "relative_eigengap",
    "theorem1_inner_product_error",
    "top_eigen",
]
