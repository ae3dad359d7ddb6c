"""Fused ``func(A @ B)`` (and ``func(A @ B) @ P``) over cache-sized row tiles, on threads.

The Gaussian block is one GEMM followed by an elementwise ``exp``.  Done as
two passes over an ``N x m`` result (the "GEMM + exp" floor), the block
travels through main memory three times: written by the GEMM, read and
written again by ``exp``.  With a rank-``d + 2`` GEMM (``d`` small) both passes
are memory-bound, so the floor is set by memory traffic, not arithmetic.

Here the rows are cut into tiles of ~``get_config()["tile_kib"]`` KiB (a fraction
of a core's L2 cache; :func:`kernelsketch.set_config`): each tile's GEMM, ``exp``
and -- for a feature map -- the product with the projection ``P`` run while the
tile is in cache, so the block is
written to memory once (or, with ``P``, never).  Tiles are handed out to
``blas_num_threads()`` threads (the calling thread is one of them) while BLAS
is pinned to one thread, so the elementwise work runs on every core too.
numpy releases the GIL inside ``matmul`` and ufunc loops; the Python
overhead is a few microseconds a tile against tens of microseconds of work.

It beats the unfused GEMM + exp floor (``benchmarks/results/design-measurements.md``,
``benchmarks/kernel_block.py``).
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from .._config import get_config
from ..utils.threads import blas_num_threads, run_claim_loops, single_threaded_blas

MIN_TILE_ROWS = 16


def tile_bytes() -> int:
    """Output bytes of one tile: small enough that the tile, its slice of ``A`` and the hot
    part of ``B`` / ``P`` stay in a core's L2 cache, large enough that the GEMM runs at speed
    (``get_config()["tile_kib"]``, 1 MiB by default)."""
    return int(get_config()["tile_kib"]) * 1024


def tile_rows(n_cols: int, itemsize: int) -> int:
    """Rows per tile for an output of ``n_cols`` columns of ``itemsize`` bytes."""
    return max(MIN_TILE_ROWS, tile_bytes() // max(1, n_cols * itemsize))


def gemm_map(A, B, func=None, out=None, *, project=None, project_out=None, n_threads=None):
    """``out = func(A @ B)`` or ``project_out = func(A @ B) @ project``, tile by tile.

    Parameters
    ----------
    A : ndarray (n, k)
    B : ndarray (k, m), same dtype as A
    func : callable or None
        Applied in place to each ``(rows, m)`` tile of ``A @ B`` (``func(T)``
        must write into ``T``); None for the bare product.
    out : ndarray (n, m), optional
        Receives ``func(A @ B)`` (cast to its dtype).  Exactly one of ``out``
        and ``project`` is given.
    project : ndarray (m, p), optional
        Multiply each tile by it; ``func(A @ B)`` is then never stored whole.
    project_out : ndarray (n, p)
        Receives ``func(A @ B) @ project`` (required with ``project``).
    n_threads : int, optional
        Default: the number of threads BLAS may use now.
    """
    if (out is None) == (project is None):
        raise ValueError("give exactly one of out and project")
    n, m = A.shape[0], B.shape[1]
    gemm_dtype = B.dtype
    direct = out is not None and out.dtype == gemm_dtype
    R = tile_rows(m, gemm_dtype.itemsize)
    n_tiles = -(-n // R) if n else 0
    if n_threads is None:
        n_threads = blas_num_threads()
    n_workers = max(1, min(int(n_threads), n_tiles))
    if project is not None:
        project = np.asarray(project, dtype=gemm_dtype)

    def scratch():
        return None if direct else np.empty((R, m), dtype=gemm_dtype)

    def tile(t, buf):
        lo, hi = t * R, min(n, (t + 1) * R)
        T = out[lo:hi] if direct else buf[: hi - lo]
        np.matmul(A[lo:hi], B, out=T)
        if func is not None:
            func(T)
        if project is not None:
            if project_out.dtype == gemm_dtype:
                np.matmul(T, project, out=project_out[lo:hi])
            else:
                project_out[lo:hi] = T @ project
        elif not direct:
            out[lo:hi] = T

    # BLAS is pinned only while tiles run on several threads
    with single_threaded_blas() if n_workers > 1 else nullcontext():
        run_claim_loops(tile, n_tiles, n_workers, setup=scratch)
    return out if project is None else project_out
