"""Thread-local configuration read by every chunked computation.

Modelled on :func:`sklearn.config_context`: a global default, overridden per
thread by :func:`config_context` (a context manager) or :func:`set_config`.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

_global_config = {
    # Working memory, in MiB, that one chunked computation may use for its
    # temporaries (kernel blocks, augmented copies).  Outputs the caller asked
    # for are not counted: they are the result, not scratch space.
    "working_memory": 256,
    # Show progress bars for long steps.  None: only when stderr is a terminal.
    "show_progress": None,
    # KiB of output in one tile of the fused GEMM + elementwise + projection route (and of
    # the k-means distance tiles): the tile, its slice of A and the hot part of B / P should
    # stay in one core's L2 cache.  1024 suits cores with >= 1 MiB of L2 (benchmarks/results/design-measurements.md,
    # benchmarks/kernel_block.py).
    "tile_kib": 1024,
    # MiB of a kernel block that stays in the last-level cache between the kernel pass and
    # the GEMM reading it (landmark maps of kernels without a GEMM form; benchmarks/results/design-measurements.md).
    "cache_block_mib": 16,
}
_local = threading.local()


def _get_threadlocal_config() -> dict:
    if not hasattr(_local, "config"):
        _local.config = _global_config.copy()
    return _local.config


def get_config() -> dict:
    """Return a copy of the current (thread-local) configuration."""
    return _get_threadlocal_config().copy()


def set_config(
    *,
    working_memory: float | None = None,
    show_progress: bool | str | None = None,
    tile_kib: int | None = None,
    cache_block_mib: float | None = None,
) -> None:
    """Set configuration values for the current thread.

    Parameters
    ----------
    working_memory : float, optional
        Memory budget in MiB for the temporaries of one chunked computation.
        Must be positive.
    show_progress : bool or "lines", optional
        Force progress bars on (True) or off (False); ``"lines"``: one line on stderr per
        finished pass over the data, on stdout (what the command line does off a terminal).
    tile_kib : int, optional
        KiB of output per tile of the fused kernel routes (default 1024: a core's L2
        cache on the benchmark machine). Tune it to your CPU's L2 with
        ``benchmarks/kernel_block.py``; results are the same for any value.
    cache_block_mib : float, optional
        MiB of a kernel block kept cache-resident before its projection (default 16).
    """
    cfg = _get_threadlocal_config()
    if tile_kib is not None:
        if isinstance(tile_kib, bool) or not isinstance(tile_kib, int) or not 4 <= tile_kib <= 2**20:
            raise ValueError(f"tile_kib must be an int between 4 and 1048576 KiB, got {tile_kib!r}")
        cfg["tile_kib"] = int(tile_kib)
    if cache_block_mib is not None:
        if isinstance(cache_block_mib, bool) or not isinstance(cache_block_mib, (int, float)):
            raise TypeError(f"cache_block_mib must be a number of MiB, got {type(cache_block_mib).__name__}")
        if not 0 < cache_block_mib < float("inf"):
            raise ValueError(f"cache_block_mib must be a finite number of MiB > 0, got {cache_block_mib}")
        cfg["cache_block_mib"] = float(cache_block_mib)
    if working_memory is not None:
        if not isinstance(working_memory, (int, float)) or isinstance(working_memory, bool):
            raise TypeError(f"working_memory must be a number of MiB, got {type(working_memory).__name__}")
        if not (working_memory > 0 and working_memory < float("inf")):
            raise ValueError(f"working_memory must be a finite number of MiB > 0, got {working_memory}")
        cfg["working_memory"] = float(working_memory)
    if show_progress is not None:
        cfg["show_progress"] = "lines" if show_progress == "lines" else bool(show_progress)


@contextmanager
def config_context(
    *,
    working_memory: float | None = None,
    show_progress: bool | str | None = None,
    tile_kib: int | None = None,
    cache_block_mib: float | None = None,
):
    """Context manager to change the configuration for the current thread.

    Examples
    --------
    >>> import kernelsketch
    >>> with kernelsketch.config_context(working_memory=64):
    ...     kernelsketch.get_config()["working_memory"]
    64.0
    """
    old = get_config()
    set_config(
        working_memory=working_memory, show_progress=show_progress, tile_kib=tile_kib, cache_block_mib=cache_block_mib
    )
    try:
        yield
    finally:
        _get_threadlocal_config().clear()
        _get_threadlocal_config().update(old)
