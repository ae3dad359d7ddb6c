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
}
_local = threading.local()


def _get_threadlocal_config() -> dict:
    if not hasattr(_local, "config"):
        _local.config = _global_config.copy()
    return _local.config


def get_config() -> dict:
    """Return a copy of the current (thread-local) configuration."""
    return _get_threadlocal_config().copy()


def set_config(*, working_memory: float | None = None, show_progress: bool | None = None) -> None:
    """Set configuration values for the current thread.

    Parameters
    ----------
    working_memory : float, optional
        Memory budget in MiB for the temporaries of one chunked computation.
        Must be positive.
    show_progress : bool, optional
        Force progress bars on (True) or off (False).
    """
    cfg = _get_threadlocal_config()
    if working_memory is not None:
        if not isinstance(working_memory, (int, float)) or isinstance(working_memory, bool):
            raise TypeError(f"working_memory must be a number of MiB, got {type(working_memory).__name__}")
        if not (working_memory > 0 and working_memory < float("inf")):
            raise ValueError(f"working_memory must be a finite number of MiB > 0, got {working_memory}")
        cfg["working_memory"] = float(working_memory)
    if show_progress is not None:
        cfg["show_progress"] = bool(show_progress)


@contextmanager
def config_context(*, working_memory: float | None = None, show_progress: bool | None = None):
    """Context manager to change the configuration for the current thread.

    Examples
    --------
    >>> import kernelsketch
    >>> with kernelsketch.config_context(working_memory=64):
    ...     kernelsketch.get_config()["working_memory"]
    64.0
    """
    old = get_config()
    set_config(working_memory=working_memory, show_progress=show_progress)
    try:
        yield
    finally:
        _get_threadlocal_config().clear()
        _get_threadlocal_config().update(old)
