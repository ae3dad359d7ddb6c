"""Ending a process that has finished its work without Python's teardown of every module it imported.

A command-line run or a Dask worker imports scikit-learn, SciPy and numba: about a million objects, which the
interpreter's finalization walks and frees one by one (0.4-0.7 s on the 2-core host, after the work is done and
its output closed).  :func:`end_without_teardown` asks that, at exit, every other exit handler runs first
(logging's flush, weak-reference finalizers such as temporary directories' removal, multiprocessing's children,
a coverage or profiling tool's save), stdio is flushed, and the process then ends with ``os._exit``.  Non-daemon
threads have been joined by then (the interpreter does that before the exit handlers).  A child of a fork server (a
forked Dask worker) ends with ``os._exit`` anyway, without exit handlers: there the handlers run as its last
multiprocessing finalizer.
"""

from __future__ import annotations

import atexit
import os
import sys

_code: int | None = None


def end_without_teardown(code: int = 0) -> None:
    """At exit, end this process with ``code`` after every other exit handler, without module teardown.

    Call it once the process's work is done and its outputs closed (the console script's return, a worker's
    normal close); until then nothing changes.  Without ``atexit._run_exitfuncs`` (another interpreter) the
    ordinary path is kept.
    """
    global _code
    if _code is None:
        atexit.register(_exit_now)
        _in_a_forked_child()
    _code = int(code)


def _in_a_forked_child() -> None:
    """A child of a fork or a fork server (a forked Dask worker) ends with ``os._exit`` once its run has returned and
    multiprocessing's finalizers have run: no module teardown, but no exit handler either.  So the last of those
    finalizers runs the exit handlers (this module's own taken off: the process's end is multiprocessing's)."""
    import multiprocessing
    from multiprocessing import util

    if multiprocessing.parent_process() is None or multiprocessing.get_start_method(allow_none=True) not in (
        "fork",
        "forkserver",
    ):
        return
    util.Finalize(None, _exit_handlers_only, exitpriority=-(2**31))


def _exit_handlers_only() -> None:
    run_others = getattr(atexit, "_run_exitfuncs", None)
    atexit.unregister(_exit_now)
    if run_others is not None:
        run_others()


def _exit_now() -> None:
    run_others = getattr(atexit, "_run_exitfuncs", None)
    if _code is None or run_others is None:
        return
    atexit.unregister(_exit_now)
    run_others()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(_code)
