"""Chunked kernel blocks: *how* ``K(X, Y)`` is computed under a memory budget.

The budget is ``kernelsketch.get_config()["working_memory"]`` (MiB) and
covers temporaries only.  Memory model per row of a chunk::

    row_bytes = m * itemsize          (the block itself, for kernel_blocks)
              + kernel.temp_bytes_per_row(d, m, itemsize)   (scratch)

and ``chunk_rows = floor(budget / row_bytes)``; a budget that cannot hold one
row raises ``MemoryError`` (:func:`kernelsketch.utils.get_chunk_n_rows`).
"""

from __future__ import annotations


import numpy as np

from ..utils.chunking import gen_row_slices, get_chunk_n_rows, check_allocation
from ..utils.threads import parallel_rows
from ..utils.validation import check_input
from .kernel_functions import KERNELS, CallableKernel, Kernel, ShiftInvariantKernel


def get_kernel(kernel="gaussian", *, bandwidth=None, degree=3, gamma=None, coef0=1.0) -> Kernel:
    """Return a :class:`Kernel` from a name and parameters (or pass one through).

    Parameters
    ----------
    kernel : str, Kernel or callable
        One of ``"gaussian"`` (alias ``"rbf"``), ``"laplacian"``, ``"cauchy"``,
        ``"polynomial"`` (alias ``"poly"``), ``"sigmoid"``, ``"cosine"``, ``"linear"``,
        a Kernel instance, or a function ``f(X, Y) -> K(X, Y)`` (a :class:`CallableKernel`).
    bandwidth : float
        ``h`` of the shift-invariant kernels (required for them; must be a
        number here -- resolve heuristics first with :func:`resolve_bandwidth`).
    degree, gamma, coef0 :
        Polynomial (all three) and sigmoid (``gamma``, ``coef0``) kernel parameters.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return CallableKernel(kernel)
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a name or a kernelsketch Kernel, got {type(kernel).__name__}")
    key = kernel.lower()
    if key not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {sorted(set(KERNELS))}")
    cls = KERNELS[key]
    if issubclass(cls, ShiftInvariantKernel):
        if bandwidth is None:
            raise ValueError(f"the {key} kernel needs a bandwidth")
        return cls(bandwidth=bandwidth)
    if key in ("polynomial", "poly"):
        return cls(degree=degree, gamma=gamma, coef0=coef0)
    if key == "sigmoid":
        return cls(gamma=gamma, coef0=coef0)
    return cls()


def _out_dtype(X, Y):
    dts = [Z.dtype for Z in (X, Y) if Z is not None]
    return np.float32 if all(dt == np.float32 for dt in dts) else np.float64


def _validated_pair(X, Y, kernel):
    X = check_input(X, accept_sparse=("csr",), name="X")
    if Y is None:
        return X, X, True
    Y = check_input(Y, accept_sparse=("csr",), name="Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
    return X, Y, False


def compute_block(kern, X, prepared, out):
    """``kern.compute(X, prepared, out)``, with the rows split over threads when that helps.

    Kernels of GEMM form parallelise inside ``compute`` (tiles, see
    :mod:`.tiled_gemm`).  The others (Laplacian, Cauchy: ``cdist`` and
    elementwise loops, single-threaded) have their rows split over the BLAS
    thread count -- ``compute`` only writes its own rows of ``out``, and numpy
    and ``cdist`` release the GIL (1.6x on 2 cores for 20,000 x 1,000 blocks).
    A custom kernel whose ``compute`` is not safe to run concurrently on
    disjoint rows sets ``parallel_compute = False``.
    """
    if type(kern).gemm_operands is not Kernel.gemm_operands or not getattr(kern, "parallel_compute", True):
        kern.compute(X, prepared, out)
    else:
        parallel_rows(lambda o, x: kern.compute(x, prepared, o), out, X)


def _set_unit_diagonal(kernel, out, rows, same):
    # K(X, X): distances of a point to itself are exactly zero, so k = 1.
    if same and kernel.unit_diagonal:
        idx = np.arange(rows.start, rows.stop)
        out[idx - rows.start, idx] = 1.0


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
    kern = get_kernel(kernel, **kernel_params)
    if validate:
        X, Y, same = _validated_pair(X, Y, kern)
    else:
        same = Y is None or Y is X
        Y = X if Y is None else Y
    dtype = _out_dtype(X, Y)
    itemsize = np.dtype(dtype).itemsize
    m = Y.shape[0]
    row_bytes = m * itemsize + kern.temp_bytes_per_row(X.shape[1], m, itemsize)
    chunk = get_chunk_n_rows(row_bytes, X.shape[0], working_memory)
    prepared = kern.prepare(Y, dtype)
    buf = np.empty((chunk, m), dtype=dtype)
    for rows in gen_row_slices(X.shape[0], chunk):
        out = buf[: rows.stop - rows.start]
        compute_block(kern, X[rows], prepared, out)
        _set_unit_diagonal(kern, out, rows, same)
        yield rows, out


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
    kern = get_kernel(kernel, **kernel_params)
    X, Y, same = _validated_pair(X, Y, kern)
    dtype = _out_dtype(X, Y)
    n, m = X.shape[0], Y.shape[0]
    if out is None:
        check_allocation(float(n) * m * np.dtype(dtype).itemsize, f"the {n} x {m} kernel matrix",
                         "compute it block by block with kernel_blocks(), or use an estimator that never forms "
                         "it (SubsampleKPCA, Nystroem, KernelJL, KernelPCA(eigen_solver='operator'))")
        out = np.empty((n, m), dtype=dtype)
    elif out.shape != (n, m) or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {np.dtype(dtype).name} array of shape {(n, m)}")
    itemsize = np.dtype(dtype).itemsize
    chunk = get_chunk_n_rows(kern.temp_bytes_per_row(X.shape[1], m, itemsize), n, working_memory)
    prepared = kern.prepare(Y, dtype)
    for rows in gen_row_slices(n, chunk):
        compute_block(kern, X[rows], prepared, out[rows])
        _set_unit_diagonal(kern, out[rows], rows, same)
    return out


def kernel_diag(X, kernel="gaussian", **kernel_params):
    """``k(x_i, x_i)`` for every row (O(n d), no block needed)."""
    kern = get_kernel(kernel, **kernel_params)
    X = check_input(X, accept_sparse=("csr",), name="X")
    return kern.diag(X)
