"""Chunked kernel blocks: *how* ``K(X, Y)`` is computed under a memory budget.

The budget is ``kernelsketch.get_config()["working_memory"]`` (MiB) and
covers temporaries only.  Memory model per row of a chunk::

    row_bytes = m * itemsize          (the block itself, for kernel_blocks)
              + kernel.temp_bytes_per_row(d, m, itemsize)   (scratch)

and ``chunk_rows = floor(budget / row_bytes)``; a budget that cannot hold one
row raises ``MemoryError`` (:func:`kernelsketch.utils.get_chunk_n_rows`).
"""

from __future__ import annotations

from ..utils.array_api import array_namespace
from ..utils.validation import check_input
from .evaluation import compute_block, evaluate, iter_blocks
from .kernel_functions import get_kernel

__all__ = ["compute_block", "get_kernel", "kernel_blocks", "kernel_diag", "pairwise_kernel"]


def kernel_blocks(X, Y=None, kernel="gaussian", *, working_memory=None, validate=True, **kernel_params):
    """Yield ``(rows, K_block)`` with ``K_block = K(X[rows], Y)``, chunk by chunk.

    The block buffer is reused between iterations: consume (reduce, copy) it
    before asking for the next one.  Each block plus its scratch space fits in
    ``working_memory`` MiB.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels import kernel_blocks
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> sums = [K.sum(axis=1) for _, K in kernel_blocks(X, kernel="gaussian", bandwidth=1.0, working_memory=1)]
    >>> len(sums) > 1, np.concatenate(sums).shape
    (True, (1000,))
    """
    return iter_blocks(get_kernel(kernel, **kernel_params), X, Y, working_memory=working_memory, validate=validate)


def pairwise_kernel(X, Y=None, kernel="gaussian", *, out=None, working_memory=None, **kernel_params):
    """The full kernel matrix ``K(X, Y)`` (``Y = X`` when omitted), computed by blocks.

    Parameters
    ----------
    X : array-like or CSR matrix of shape (n, d)
    Y : array-like or CSR matrix of shape (m, d), optional
    kernel : str or Kernel
    out : ndarray of shape (n, m), optional
        Write the result here (C-contiguous, the result dtype).
    working_memory : float, optional
        MiB for temporaries; the output itself is not counted.
    **kernel_params : bandwidth, degree, gamma, coef0

    Returns
    -------
    K : ndarray of shape (n, m), float32 if both inputs are float32 else float64.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels import pairwise_kernel
    >>> pairwise_kernel(np.eye(2), kernel="gaussian", bandwidth=1.0).round(4)
    array([[1.    , 0.1353],
           [0.1353, 1.    ]])
    """
    if (ns := array_namespace(X, Y)) is not None and out is None:
        # a PyTorch / CuPy / ... array under array_api_dispatch: computed on its device, returned there
        from .array_api import pairwise_kernel_xp

        return pairwise_kernel_xp(get_kernel(kernel, **kernel_params), X, Y, *ns)
    return evaluate(get_kernel(kernel, **kernel_params), X, Y, out=out, working_memory=working_memory)


def kernel_diag(X, kernel="gaussian", **kernel_params):
    """``k(x_i, x_i)`` for every row (O(n d), no block needed)."""
    kern = get_kernel(kernel, **kernel_params)
    X = check_input(X, accept_sparse=("csr",), name="X")
    return kern.diag(X)
