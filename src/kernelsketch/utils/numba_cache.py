"""numba's disk cache for the package's compiled kernels, outside the installed package."""

from __future__ import annotations

import os

#: the source files whose compiled functions are cached under :func:`numba_cache_dir`
_SOURCES: set[str] = set()


def numba_cache_dir() -> str:
    """Where the compiled kernel is cached: ``$KERNELSKETCH_CACHE_DIR/numba``, else the user's cache folder.

    Never inside the installed package (which may be read-only, shared between users,
    or removed by ``pip uninstall`` without its caches).  ``$NUMBA_CACHE_DIR``, when set,
    still wins: numba's own setting for every library.
    """
    root = os.environ.get("KERNELSKETCH_CACHE_DIR")
    if not root:
        from numba.misc.appdirs import AppDirs

        root = AppDirs(appname="kernelsketch", appauthor=False).user_cache_dir
    return os.path.join(os.path.expanduser(root), "numba")


def _install_cache_locator(numba, source):
    """Make numba cache the compiled code of the module ``source`` under :func:`numba_cache_dir`.

    Returns False if this numba lacks the (private) hook: the kernel is then compiled in every process.
    """
    try:
        from numba.core import caching

        base, classes = caching.UserWideCacheLocator, caching.CacheImpl._locator_classes
    except (ImportError, AttributeError):  # a numba without this (private) hook: compile per process
        return False
    _SOURCES.add(os.path.abspath(source))
    if any(getattr(c, "_kernelsketch", False) for c in classes):
        return True  # installed by an earlier module: it serves every registered source

    class KernelsketchCacheLocator(base):
        _kernelsketch = True

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(numba_cache_dir(), self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.abspath(py_file) not in _SOURCES:
                return None  # another library's function: numba's own locators
            return super().from_function(py_func, py_file)

    # after numba's user-provided location ($NUMBA_CACHE_DIR), before its in-tree one
    provided = [i for i, c in enumerate(classes) if c.__name__ == "UserProvidedCacheLocator"]
    classes.insert(provided[0] + 1 if provided else 0, KernelsketchCacheLocator)
    return True


def _load_without_refresh(namespace) -> bool:
    """Make the disk-cached kernels among ``namespace``'s numba dispatchers load without numba's registry refresh.

    numba's ``FunctionCache.load_overload`` refreshes the typing and target contexts before it unpickles a cached
    function: it imports and registers every built-in implementation (``numba.cpython``, ``numba.np``, ...), about
    0.3 s of a process's first kernel load, all of it for compiling, none for linking machine code that is already
    compiled.  A cached kernel needs only the runtime's symbols (``rtsys.initialize``: what the refresh would have
    installed first); the registries are loaded as before by the first real compile (numba's compiler refreshes the
    contexts itself).  Only this package's dispatchers are changed, not numba's class.

    Returns False, changing nothing, when this numba lacks the (private) names: its own loads then apply.
    """
    try:
        from numba.core.caching import FunctionCache
        from numba.core.dispatcher import Dispatcher
        from numba.core.runtime import rtsys
    except ImportError:
        return False
    if not all(hasattr(FunctionCache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors")):
        return False

    class QuickLoadCache(FunctionCache):
        def load_overload(self, sig, target_context):
            rtsys.initialize(target_context)  # (NRT's symbols: a kernel allocating arrays links against them)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            return None  # (an I/O error swallowed by the guard: compiled instead, as numba's own load does)

    for obj in list(namespace.values()):
        cache = getattr(obj, "_cache", None) if isinstance(obj, Dispatcher) else None
        if type(cache) is FunctionCache:  # (not a subclass of another library's, not NullCache: cache=False)
            cache.__class__ = QuickLoadCache
    return True


def numba_installed() -> bool:
    """Whether numba can be imported, without importing it (a process that only plans compiled work, such as a Dask
    client whose workers run it, need not pay numba's import)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def compiled_kernels_cached() -> bool | None:
    """Whether numba's disk cache already holds compiled kernels of this package (None: numba is not installed).

    False on a first run: the kernels compile then (seconds, once), and later runs load them.  The command
    line says so before a job that uses them, so that a slow first run is not mistaken for the program's speed.
    """
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        return None
    root = os.environ.get("NUMBA_CACHE_DIR") or numba_cache_dir()
    for _dirpath, _dirs, files in os.walk(root):
        if any(f.endswith(".nbi") for f in files):
            return True
    return False


#: callables told once, before the first compiled kernel is loaded while the cache is empty (the command line's)
_FIRST_COMPILE_LISTENERS: list = []
_announced = False


def on_first_compile(listener):
    """Call ``listener()`` once, just before this process loads a compiled kernel that is not cached yet.

    ``kernelsketch`` on the command line registers one that says "compiling the numba kernels (once ...)":
    a first run spends seconds there, later runs load the kernels from the cache.  Returns a function that
    unregisters it (a command run in-process removes its own when it ends).
    """
    _FIRST_COMPILE_LISTENERS.append(listener)

    def remove():
        if listener in _FIRST_COMPILE_LISTENERS:
            _FIRST_COMPILE_LISTENERS.remove(listener)

    return remove


def announce_compile() -> None:
    """Tell the listeners (:func:`on_first_compile`) when a kernel is about to be compiled rather than loaded."""
    global _announced
    if _announced or not _FIRST_COMPILE_LISTENERS:
        return
    _announced = True
    if compiled_kernels_cached() is False:
        for listener in list(_FIRST_COMPILE_LISTENERS):
            listener()
