"""Chunk sizes from the working-memory budget (cf. ``sklearn.utils._chunking``)."""

from __future__ import annotations

from .._config import get_config


def get_chunk_n_rows(row_bytes: float, max_n_rows: int, working_memory: float | None = None) -> int:
    """Number of rows whose temporaries fit in the working-memory budget.

    Parameters
    ----------
    row_bytes : float
        Bytes of temporaries needed per row of the chunk.
    max_n_rows : int
        Never return more rows than this (the number of rows to process).
    working_memory : float, optional
        Budget in MiB; defaults to ``get_config()["working_memory"]``.

    Raises
    ------
    MemoryError
        If the budget cannot hold a single row.
    """
    if working_memory is None:
        working_memory = get_config()["working_memory"]
    budget = working_memory * 2**20
    n = int(budget // max(row_bytes, 1))
    if n < 1:
        raise MemoryError(
            f"working_memory={working_memory:g} MiB cannot hold one row of this computation "
            f"({row_bytes / 2**20:.3g} MiB per row); raise it with "
            "kernelsketch.config_context(working_memory=...)"
        )
    return max(1, min(n, int(max_n_rows)))


def gen_row_slices(n_rows: int, chunk_n_rows: int):
    """Yield ``slice`` objects covering ``range(n_rows)`` in chunks."""
    for start in range(0, n_rows, chunk_n_rows):
        yield slice(start, min(start + chunk_n_rows, n_rows))


def physical_memory_bytes() -> int | None:
    """Total physical memory of this machine, or None where the OS does not say."""
    import os

    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def check_allocation(nbytes: float, what: str, alternatives: str) -> None:
    """Refuse, before allocating, an array that cannot fit in this machine's memory.

    ``MemoryError`` naming the array, the bytes it needs, the machine's memory and
    what to use instead -- never numpy's "Unable to allocate ..." from deep inside
    a computation (or an OOM kill).
    """
    total = physical_memory_bytes()
    if total is not None and nbytes > total:
        raise MemoryError(
            f"{what} needs {nbytes / 2**30:.1f} GiB, more than this machine's "
            f"{total / 2**30:.1f} GiB of memory; {alternatives}"
        )
