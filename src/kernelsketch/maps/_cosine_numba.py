"""The fused cos/sin kernel of :mod:`kernelsketch.maps.fast_cosine`, compiled by numba.

Imported only when numba is installed and a random-feature map first needs it.  Its
functions live at module level so that numba's disk cache (under
:func:`~kernelsketch.maps._cosine_constants.numba_cache_dir`) serves every later process: the
first process compiles, the next ones load the machine code.
"""

from __future__ import annotations

import numba
import numpy as np

from ..utils.numba_cache import _load_without_refresh
from ._cosine_constants import _COS, _INV_PI, _K_MAX, _PI_HI, _PI_LO, _SIN, _install_cache_locator

CACHE = _install_cache_locator(numba, __file__)
c0, c1, c2, c3, c4, c5, c6, c7, c8 = _COS
s0, s1, s2, s3, s4, s5, s6, s7, s8 = _SIN


@numba.njit(inline="always", cache=CACHE)
def reduce(tv):  # pragma: no cover - compiled
    k = np.rint(tv * _INV_PI)
    r = (tv - k * _PI_HI) - k * _PI_LO
    # (-1)^k as a float, branch-free so the loop vectorises
    sgn = 1.0 - 2.0 * (np.int64(k) & 1)
    return r, sgn


@numba.njit(inline="always", cache=CACHE)
def cos_r(u):  # pragma: no cover - compiled
    return c0 + u * (c1 + u * (c2 + u * (c3 + u * (c4 + u * (c5 + u * (c6 + u * (c7 + u * c8)))))))


@numba.njit(inline="always", cache=CACHE)
def sin_r(r, u):  # pragma: no cover - compiled
    return r * (s0 + u * (s1 + u * (s2 + u * (s3 + u * (s4 + u * (s5 + u * (s6 + u * (s7 + u * s8))))))))


@numba.njit(parallel=True, cache=CACHE)
def kernel(t, shift, has_shift, cos_out, do_cos, sin_out, do_sin, scale):  # pragma: no cover - compiled
    n, m = t.shape
    for i in numba.prange(n):
        if has_shift:  # t <- t + shift (documented side effect)
            for j in range(m):
                t[i, j] += shift[j]
        amax = 0.0
        for j in range(m):
            amax = max(amax, abs(t[i, j]))
        if amax * _INV_PI >= _K_MAX:  # rare (heavy-tailed frequencies): libm for the whole row
            for j in range(m):
                tv = t[i, j]
                if do_sin:
                    sin_out[i, j] = scale * np.sin(tv)
                if do_cos:
                    cos_out[i, j] = scale * np.cos(tv)
        elif do_sin and do_cos:
            for j in range(m):
                r, sgn = reduce(t[i, j])
                u = r * r
                sin_out[i, j] = (scale * sgn) * sin_r(r, u)
                cos_out[i, j] = (scale * sgn) * cos_r(u)
        elif do_cos:
            for j in range(m):
                r, sgn = reduce(t[i, j])
                cos_out[i, j] = (scale * sgn) * cos_r(r * r)
        else:
            for j in range(m):
                r, sgn = reduce(t[i, j])
                sin_out[i, j] = (scale * sgn) * sin_r(r, r * r)


@numba.njit(nogil=True, cache=CACHE)
def shifted_cos_rows(t, shift, scale):  # pragma: no cover - compiled
    """``t <- scale * cos(t + shift)`` row by row, in place, on the calling thread (no ``prange``): the
    tile function of a fused GEMM + cosine, where the tiles are already spread over the cores.  The
    numbers of :func:`kernel` with ``cos_out = t`` (the same sum, reduction and polynomial per element)."""
    n, m = t.shape
    for i in range(n):
        row = t[i]
        amax = 0.0
        for j in range(m):
            v = row[j] + shift[j]
            row[j] = v
            amax = max(amax, abs(v))
        if amax * _INV_PI >= _K_MAX:  # rare (heavy-tailed frequencies): libm for the whole row
            for j in range(m):
                row[j] = scale * np.cos(row[j])
        else:
            for j in range(m):
                r, sgn = reduce(row[j])
                row[j] = (scale * sgn) * cos_r(r * r)


_load_without_refresh(globals())  # (the cached kernels above load without numba's registry refresh)
