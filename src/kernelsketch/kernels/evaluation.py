"""Evaluating a kernel on row chunks: the chunking, threading and validation under every block.

This module takes a kernel *object* (anything with the block protocol of
:class:`~kernelsketch.kernels.Kernel`: ``prepare``, ``compute``,
``temp_bytes_per_row``, ``unit_diagonal``, ``gemm_form``, ``parallel_compute``)
and imports nothing else from :mod:`kernelsketch.kernels`, so that
``Kernel.__call__`` and :mod:`.blocks` both build on it without an import cycle.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ..utils.chunking import check_allocation, gen_row_slices, get_chunk_n_rows
from ..utils.threads import parallel_rows
from ..utils.validation import check_input


@runtime_checkable
class BlockKernel(Protocol):
    """The block protocol: what chunked evaluation needs from a kernel.

    :class:`~kernelsketch.kernels.Kernel` implements it; so may any object. ``prepare(Y, dtype)``
    returns one object (whatever the kernel precomputes from ``Y``: norms, a shifted copy,
    GEMM operands), opaque to callers, that every ``compute`` / ``gemm_operands`` call against
    ``Y`` receives back.
    """

    #: k(x, x) = 1: blocks of K(X, X) get an exact unit diagonal
    unit_diagonal: bool
    #: ``compute`` may run concurrently on disjoint row ranges (it writes only its own ``out`` rows)
    parallel_compute: bool
    #: ``gemm_operands`` gives ``K(X, Y) = elementwise(A @ B)`` for dense blocks (then ``compute``
    #: runs the fused, internally threaded route)
    gemm_form: bool

    def prepare(self, Y: Any, dtype: Any) -> Any: ...

    def compute(self, X: Any, prepared: Any, out: NDArray[Any]) -> Any: ...

    def temp_bytes_per_row(self, n_features: int, n_cols: int, itemsize: int) -> int: ...

    def gemm_operands(self, X: Any, prepared: Any, out_dtype: Any) -> tuple[NDArray[Any], NDArray[Any]] | None: ...

    def diag(self, X: Any) -> NDArray[Any]: ...


def out_dtype(X, Y):
    dts = [Z.dtype for Z in (X, Y) if Z is not None]
    return np.float32 if all(dt == np.float32 for dt in dts) else np.float64


def validated_pair(X, Y, kernel):
    X = check_input(X, accept_sparse=("csr",), name="X")
    if Y is None:
        return X, X, True
    Y = check_input(Y, accept_sparse=("csr",), name="Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
    return X, Y, False


def compute_block(kern: BlockKernel, X, prepared, out) -> None:
    """``kern.compute(X, prepared, out)``, with the rows split over threads when that helps.

    Kernels of GEMM form parallelise inside ``compute`` (tiles, see
    :mod:`.tiled_gemm`).  The others (Laplacian, Cauchy: ``cdist`` and
    elementwise loops, single-threaded) have their rows split over the BLAS
    thread count -- ``compute`` only writes its own rows of ``out``, and numpy
    and ``cdist`` release the GIL (1.6x on 2 cores for 20,000 x 1,000 blocks).
    A custom kernel whose ``compute`` is not safe to run concurrently on
    disjoint rows sets ``parallel_compute = False``.
    """
    if getattr(kern, "gemm_form", False) or not getattr(kern, "parallel_compute", True):
        kern.compute(X, prepared, out)
    else:
        parallel_rows(lambda o, x: kern.compute(x, prepared, o), out, X)


def set_unit_diagonal(kernel, out, rows, same):
    # K(X, X): distances of a point to itself are exactly zero, so k = 1.
    if same and kernel.unit_diagonal:
        idx = np.arange(rows.start, rows.stop)
        out[idx - rows.start, idx] = 1.0


def iter_blocks(kern: BlockKernel, X, Y=None, *, working_memory=None, validate=True):
    """The generator behind :func:`kernelsketch.kernels.kernel_blocks`, for a kernel object."""
    if validate:
        X, Y, same = validated_pair(X, Y, kern)
    else:
        same = Y is None or Y is X
        Y = X if Y is None else Y
    dtype = out_dtype(X, Y)
    itemsize = np.dtype(dtype).itemsize
    m = Y.shape[0]
    row_bytes = m * itemsize + kern.temp_bytes_per_row(X.shape[1], m, itemsize)
    chunk = get_chunk_n_rows(row_bytes, X.shape[0], working_memory)
    prepared = kern.prepare(Y, dtype)
    buf = np.empty((chunk, m), dtype=dtype)
    for rows in gen_row_slices(X.shape[0], chunk):
        out = buf[: rows.stop - rows.start]
        compute_block(kern, X[rows], prepared, out)
        set_unit_diagonal(kern, out, rows, same)
        yield rows, out


def evaluate(kern: BlockKernel, X, Y=None, *, out=None, working_memory=None) -> NDArray[Any]:
    """The full block ``K(X, Y)`` of a kernel object: :func:`kernelsketch.kernels.pairwise_kernel`'s work."""
    X, Y, same = validated_pair(X, Y, kern)
    dtype = out_dtype(X, Y)
    n, m = X.shape[0], Y.shape[0]
    if out is None:
        check_allocation(
            float(n) * m * np.dtype(dtype).itemsize,
            f"the {n} x {m} kernel matrix",
            "compute it block by block with kernel_blocks(), or use an estimator that never forms "
            "it (SubsampleKPCA, Nystroem, KernelJL, KernelPCA(eigen_solver='operator'))",
        )
        out = np.empty((n, m), dtype=dtype)
    elif out.shape != (n, m) or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {np.dtype(dtype).name} array of shape {(n, m)}")
    itemsize = np.dtype(dtype).itemsize
    chunk = get_chunk_n_rows(kern.temp_bytes_per_row(X.shape[1], m, itemsize), n, working_memory)
    prepared = kern.prepare(Y, dtype)
    for rows in gen_row_slices(n, chunk):
        compute_block(kern, X[rows], prepared, out[rows])
        set_unit_diagonal(kern, out[rows], rows, same)
    return out
