"""The constants of the fast cos/sin method and where numba caches its compiled kernel.

Shared by :mod:`kernelsketch.maps.fast_cosine` (the numpy route) and
:mod:`kernelsketch.maps._cosine_numba` (the compiled route), so that neither imports the other.
"""

from __future__ import annotations

# where the compiled kernels are cached: one place for every compiled module of the package
from ..utils.numba_cache import _install_cache_locator, numba_cache_dir

__all__ = ["_install_cache_locator", "numba_cache_dir"]

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
