"""The constants of the fast cos/sin method and where numba caches its compiled kernel.

Shared by :mod:`kernelsketch.maps.fast_cosine` (the numpy route) and
:mod:`kernelsketch.maps._cosine_numba` (the compiled route), so that neither imports the other.
"""

from __future__ import annotations

import os

_MAGIC = 6755399441055744.0  # 1.5 * 2**52: x + MAGIC rounds x to an integer
_INV_PI = 0.3183098861837907  # float64(1 / pi); its error only moves r by O(eps * |k|)
_PI_HI = 3.1415926534682512  # pi truncated to 32 significant bits: k * _PI_HI exact for |k| < 2**21
_PI_LO = 1.2154201013012384e-10  # float64(pi - _PI_HI); pi - _PI_HI - _PI_LO = 7e-27
_K_MAX = 2.0**20  # above this, fall back to np.cos for the tile

# cos(r) ~= sum_i _COS[i] r^(2i) and sin(r) ~= r sum_i _SIN[i] r^(2i) on |r| <= pi/2
# (Chebyshev interpolation in u = r^2 at 200 nodes, 80-bit arithmetic).
_COS = (
    1.0,
    -0.4999999999999997,
    0.04166666666666388,
    -0.0013888888888772828,
    2.4801587277376708e-05,
    -2.755731638715154e-07,
    2.087656163814358e-09,
    -1.1462896616976136e-11,
    4.60892186960228e-14,
)
_SIN = (
    1.0,
    -0.16666666666666666,
    0.00833333333333319,
    -0.00019841269841206727,
    2.755731921070716e-06,
    -2.5052106834549156e-08,
    1.6058937858959503e-10,
    -7.642945513445522e-13,
    2.7207127033978593e-15,
)


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
    if any(getattr(c, "_kernelsketch", False) for c in classes):
        return True
    source = os.path.abspath(source)

    class KernelsketchCacheLocator(base):
        _kernelsketch = True

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(numba_cache_dir(), self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.abspath(py_file) != source:
                return None  # another library's function: numba's own locators
            return super().from_function(py_func, py_file)

    # after numba's user-provided location ($NUMBA_CACHE_DIR), before its in-tree one
    provided = [i for i, c in enumerate(classes) if c.__name__ == "UserProvidedCacheLocator"]
    classes.insert(provided[0] + 1 if provided else 0, KernelsketchCacheLocator)
    return True
