"""Atomic output files: write to a temporary file beside the target, then rename.

``os.replace`` within one directory is atomic on POSIX and Windows, so a
reader sees either the previous file or the complete new one, never a half
written file; an exception (including ``KeyboardInterrupt`` from Ctrl-C)
removes the temporary file and leaves any previous output untouched.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path

from ..utils.warnings import warn as _warn

__all__ = ["AtomicPath", "OutputExistsError", "SameFileError", "check_output_path", "remove_stale_parts"]


class OutputExistsError(FileExistsError):
    """The output exists and overwriting it was not allowed (``force=False``)."""


class SameFileError(ValueError):
    """The output path is one of the inputs (after resolving symlinks)."""


def _inside(path: Path, folder: Path) -> bool:
    """``path`` lies in ``folder`` or below it (symlinks resolved)."""
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _same_file(a: Path, b: Path) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_output_path(path, *, force=False, protect=()) -> Path:
    """Check that ``path`` may be written; return it as a ``Path``.

    Raises
    ------
    SameFileError
        ``path`` is (a symlink to, or a hard link of) one of ``protect``, or lies
        inside a protected directory (a directory of shards: every file there may be
        read as input, and a new one would be read by the next run): an input is
        never overwritten, even with ``force``.
    OutputExistsError
        ``path`` exists and ``force`` is False.
    FileNotFoundError
        The folder that would hold ``path`` does not exist.
    IsADirectoryError
        ``path`` is a directory.
    """
    path = Path(os.fspath(path)).expanduser()
    for other in protect:
        if other is None:
            continue
        other_path = Path(os.fspath(other)).expanduser()
        if other_path.is_dir() and _inside(path, other_path):
            raise SameFileError(
                f"output {str(path)!r} is inside the input directory {str(other)!r}: its files are the "
                "input (and a new file there would be read as input by the next run); write it elsewhere"
            )
        if _same_file(path, other_path):
            raise SameFileError(
                f"output {str(path)!r} is the input file {str(other)!r}; refusing to write over an input"
            )
    if path.is_dir():
        raise IsADirectoryError(f"output {str(path)!r} is a directory")
    if (path.exists() or path.is_symlink()) and not force:
        raise OutputExistsError(f"output {str(path)!r} exists; pass --force (force=True) to overwrite it")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(f"folder {str(parent)!r} of output {str(path)!r} does not exist")
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: the temporary file of an output: ``.NAME.PID.RANDOM.part`` beside it
_PART = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.part$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_own_parts(path) -> None:
    """Delete the temporary files of output ``path`` that this process made: a writer interrupted (Ctrl-C) while it
    was being opened, before its caller held it to abort."""
    path = Path(os.fspath(path))
    folder = path.parent if str(path.parent) else Path(".")
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            m = _PART.match(entry.name)
            if m and m["name"] == path.name and int(m["pid"]) == os.getpid():
                with contextlib.suppress(OSError):
                    entry.unlink()


def remove_stale_parts(path) -> list[Path]:
    """Delete the temporary files a killed run left for output ``path``; return them.

    A part file is stale when the process that wrote it (its name carries the pid)
    is no longer running: SIGKILL, a power cut.  Parts of a live process are kept.
    """
    path = Path(os.fspath(path))
    folder = path.parent if str(path.parent) else Path(".")
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _PART.match(entry.name)
        if m and m["name"] == path.name and int(m["pid"]) != os.getpid() and not _pid_alive(int(m["pid"])):
            try:
                entry.unlink()
                removed.append(entry)
            except OSError:
                pass
    if removed:
        _warn(
            f"removed {len(removed)} partial file(s) of an interrupted earlier run writing {str(path)!r}: "
            + ", ".join(p.name for p in removed),
            UserWarning,
        )
    return removed


class AtomicPath:
    """A temporary file beside ``path`` that replaces ``path`` on :meth:`commit`.

    Used as a context manager, the temporary file is renamed over ``path``
    when the block succeeds and deleted when it raises (``KeyboardInterrupt``
    included), so the previous content of ``path`` survives any failure.

    Parameters
    ----------
    path : path-like
        Final location.
    force : bool, default=False
        Allow replacing an existing ``path``.
    protect : iterable of path-like
        Inputs that must never be overwritten, even with ``force``.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> target = os.path.join(folder, "out.txt")
    >>> with AtomicPath(target) as tmp:
    ...     with open(tmp, "w") as f:
    ...         _ = f.write("done")
    >>> open(target).read(), os.listdir(folder)
    ('done', ['out.txt'])
    """

    def __init__(self, path, *, force=False, protect=()):
        path = check_output_path(path, force=force, protect=protect)
        if path.is_symlink():
            # --force onto a symlink writes through to the file it points to: the link stays
            path = Path(os.path.realpath(path))
            check_output_path(path, force=force, protect=protect)
        self.path = path
        self.force = force
        remove_stale_parts(self.path)
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.{os.getpid()}.", suffix=".part")
        except OSError as exc:  # named by the output the user gave, not by the temporary file beside it
            raise OSError(exc.errno, f"cannot write output {str(self.path)!r} (its folder): {exc.strerror}") from None
        try:  # (a Ctrl-C from here on removes the temporary file: nothing is left behind)
            os.close(fd)
            # mkstemp creates the file 0600; give the output the permissions a plain open() would,
            # or those of the file it replaces (a private model stays private)
            try:
                mode = stat.S_IMODE(os.stat(self.path).st_mode)
            except FileNotFoundError:
                mode = 0o666 & ~_umask()
            os.chmod(tmp, mode)
            self.tmp = Path(tmp)
            self._done = False
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def commit(self) -> Path:
        """Rename the temporary file over the target (re-checking ``force``)."""
        if self._done:
            return self.path
        # The target may have appeared while we were writing.
        if not self.force and (self.path.exists() or self.path.is_symlink()):
            self.abort()
            raise OutputExistsError(f"output {str(self.path)!r} appeared while writing; not overwritten")
        os.replace(self.tmp, self.path)
        self._done = True
        return self.path

    def abort(self) -> None:
        """Delete the temporary file; the target is left as it was."""
        if not self._done:
            self._done = True
            try:
                self.tmp.unlink()
            except FileNotFoundError:
                pass

    def __enter__(self) -> Path:
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.abort()
        return False
