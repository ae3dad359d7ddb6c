"""Kernel PCA: exact, on a subsample, on random features, streaming."""

from .kernel_pca import KernelPCA

__all__ = ["KernelPCA"]
