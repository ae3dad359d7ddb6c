"""Fast float64 cosine and sine for random Fourier features, accurate to a few ulps.

numpy's float64 ``cos`` is a scalar libm call per element, while its float32
``cos`` is SIMD-vectorised, an order of magnitude faster
(``benchmarks/results/design-measurements.md``).  A random Fourier feature transform
of ``n`` points into ``m`` features spends almost all of its time in that
cosine, so :func:`fast_cos` evaluates it with vectorised numpy ufuncs
instead, tile by tile so the temporaries stay in cache.

Method (measured numbers in the module's tests and the ``Notes`` below)
---------------------------------------------------------------------
1. **Range reduction** (Cody & Waite, 1980): ``k = rint(t / pi)`` through the
   ``1.5 * 2**52`` "magic number" addition (which also leaves the parity of
   ``k`` in the lowest mantissa bit), then ``r = (t - k*C1) - k*C2`` with
   ``pi = C1 + C2 + O(2**-85)``, ``C1`` having 32 significant bits so that
   ``k*C1`` is exact for ``|k| < 2**21`` and ``t - k*C1`` is exact
   (Sterbenz).  ``r`` lies in ``[-pi/2, pi/2]``.
2. **Polynomial**: ``cos(r) = P(r^2)`` and ``sin(r) = r Q(r^2)`` with degree-8
   polynomials, Chebyshev-interpolation (near-minimax) fits on
   ``[0, (pi/2)^2]`` computed in extended precision; their own maximum error is
   2.7e-16 (cos) and 2.7e-16 (sin).  The result is scaled by folding the
   scale into the coefficients (no extra pass).
3. **Sign**: ``cos(t) = (-1)^k cos(r)``: the parity bit of ``k`` is shifted to
   the sign position and XOR-ed into the result (two integer passes).

Elements whose ``|k|`` reaches ``2**20`` (``|t| > 3.3e6``; it happens with
the heavy-tailed Cauchy frequencies of the Laplacian kernel) are recomputed
with ``np.cos`` (only those elements), so the error bound holds for every
finite input.

float32 arrays use ``np.cos``/``np.sin`` directly: numpy already vectorises
them, and their error is float32-level anyway.

When numba is installed (the ``fast`` extra), the same method runs as one
compiled, vectorised loop over the rows in parallel (see ``USE_NUMBA``): a
row holding a huge argument goes to libm as a whole, every other row through
the polynomial.  Same error bound.  :func:`shifted_cos_tiles` is the same loop
on one thread, for a GEMM whose tiles are already spread over the cores.
"""

from __future__ import annotations

import numpy as np

# the method's constants, shared with the compiled route; numba_cache_dir is part of this module's API
from ._cosine_constants import _COS, _INV_PI, _K_MAX, _MAGIC, _PI_HI, _PI_LO, _SIN, numba_cache_dir

__all__ = ["fast_cos", "fast_cos_sin", "fast_sin", "numba_cache_dir"]

# Number of elements per tile: 3 float64 temporaries of 32768 values (768 KiB)
# plus the tile itself stay in L2; smaller tiles pay numpy's per-call overhead
# (about 1 us for each of the ~28 ufunc calls of a tile: 8192 was 10 % slower
# here), larger ones spill to L3.
TILE_ELEMENTS = 32768

# -- compiled path ----------------------------------------------------------
# The same method (range reduction, polynomials, sign, libm fallback for
# |k| >= _K_MAX) as one fused loop: numba compiles it to SIMD code and spreads
# the rows over the cores, so each element is read and written once instead of
# the ~28 cache-tile passes of the numpy route (100,000 x 1,000 features:
# 0.17 s vs 0.46 s here).  Used when numba is installed (``pip install
# 'kernelsketch[fast]'``); set ``USE_NUMBA = False`` to force the numpy route.
USE_NUMBA = True
#: a call this large loads the compiled kernel (importing numba and loading it from the disk
#: cache costs once per process what it saves over millions of elements;
#: benchmarks/results/design-measurements.md): smaller calls use
#: the numpy route until some call has loaded it, so a short script never pays the import
NUMBA_MIN_ELEMENTS = 2**22
_numba_kernel = None


def _get_numba_kernel():
    """The compiled kernel, or None when numba is unavailable (compiled once, then loaded from the disk cache).

    The kernel is a module-level function of :mod:`kernelsketch.maps._cosine_numba`: numba's
    cache finds a module-level function again in the next process, not a closure (a closure
    missed the cache in every process, recompiled for 2.3 s and added one more file to it).
    """
    global _numba_kernel
    if _numba_kernel is None:
        try:
            import numba  # noqa: F401
        except ImportError:
            _numba_kernel = False
            return None
        from ..utils.numba_cache import announce_compile

        announce_compile()
        from . import _cosine_numba

        _numba_kernel = _cosine_numba.kernel
    return _numba_kernel or None


def shifted_cos_tiles(shift, scale, dtype, n_elements):
    """A tile function ``f(T)``: ``T <- scale * cos(T + shift)`` in place on the calling thread, for a fused
    GEMM + cosine (:func:`~kernelsketch.kernels.tiled_gemm.gemm_map` spreads the tiles over the cores), with
    :func:`fast_cos_sin`'s numbers for ``T``'s dtype; or None where :func:`fast_cos_sin` would run numpy's
    float64 route (no numba, ``USE_NUMBA`` off, or a call of ``n_elements`` too small to load the kernel).

    The whole ``t`` written by one GEMM and then read and written again by the cosine travels through main
    memory three times; tile by tile it is written once (``benchmarks/results/rff-intel-host.md``).
    """
    shift = np.asarray(shift, dtype=dtype)
    if np.dtype(dtype) == np.float32:  # numpy's vectorised float32 cos: fast_cos_sin's float32 route, per tile

        def cos32(T):
            T += shift
            np.cos(T, out=T)
            if scale != 1.0:
                T *= scale

        return cos32
    if not USE_NUMBA or (_numba_kernel is None and n_elements < NUMBA_MIN_ELEMENTS) or _get_numba_kernel() is None:
        return None
    from ._cosine_numba import shifted_cos_rows

    scale = float(scale)
    return lambda T: shifted_cos_rows(T, shift, scale)


def _tiles(shape):
    """Yield (row slice, column slice) tiles of about TILE_ELEMENTS values."""
    n_rows, n_cols = shape
    if n_cols >= TILE_ELEMENTS:
        for i in range(n_rows):
            for j in range(0, n_cols, TILE_ELEMENTS):
                yield slice(i, i + 1), slice(j, min(j + TILE_ELEMENTS, n_cols))
    else:
        step = max(1, TILE_ELEMENTS // max(n_cols, 1))
        for i in range(0, n_rows, step):
            yield slice(i, min(i + step, n_rows)), slice(0, n_cols)


def _horner(u, coefs, scale, out):
    """out <- scale * sum_i coefs[i] u^i (the scale folded into the coefficients)."""
    c = [scale * ci for ci in coefs]
    np.multiply(u, c[-1], out=out)
    out += c[-2]
    for ci in c[-3::-1]:
        out *= u
        out += ci
    return out


def _cos_sin_tile(t, cos_out, sin_out, scale, tmp, _checked=False):
    """cos/sin of a float64 tile ``t`` into ``cos_out``/``sin_out`` (either may be None or alias t)."""
    k, sign, u = tmp
    np.multiply(t, _INV_PI, out=sign)
    sign += _MAGIC
    np.subtract(sign, _MAGIC, out=k)
    if not _checked and k.size and max(k.max(), -k.min()) >= _K_MAX:
        # k * _PI_HI is no longer exact for these few elements (heavy-tailed
        # frequencies): keep their arguments, run the fast path on the whole
        # tile, then redo just them with libm's full range reduction.
        big = np.abs(k) >= _K_MAX
        t_big = t[big]
        with np.errstate(all="ignore"):
            _cos_sin_tile(t, cos_out, sin_out, scale, tmp, _checked=True)
        if sin_out is not None:
            sin_out[big] = scale * np.sin(t_big)
        if cos_out is not None:
            cos_out[big] = scale * np.cos(t_big)
        return
    isign = sign.view(np.int64)
    np.left_shift(isign, 63, out=isign)  # parity of k -> sign bit
    # r = (t - k * PI_HI) - k * PI_LO, kept in u for now
    np.multiply(k, _PI_HI, out=u)
    np.subtract(t, u, out=u)
    k *= _PI_LO
    u -= k
    r = u
    if sin_out is not None:
        # sin needs r itself; keep it in k while u becomes r^2
        np.copyto(k, r)
        r = k
        np.multiply(r, r, out=u)
        _horner(u, _SIN, scale, sin_out)
        sin_out *= r
        view = sin_out.view(np.int64)
        np.bitwise_xor(view, isign, out=view)
    else:
        np.multiply(r, r, out=u)
    if cos_out is not None:
        _horner(u, _COS, scale, cos_out)
        view = cos_out.view(np.int64)
        np.bitwise_xor(view, isign, out=view)


def _as_2d(a):
    if a.ndim not in (1, 2):
        raise ValueError(f"expected a 1-D or 2-D array, got {a.ndim} dimensions")
    return a.reshape(1, -1) if a.ndim == 1 else a


def fast_cos_sin(t, cos_out=None, sin_out=None, *, shift=None, scale=1.0):
    r"""``scale * cos(t + shift)`` and/or ``scale * sin(t + shift)``, elementwise.

    Parameters
    ----------
    t : ndarray of shape (n,) or (n_rows, n_cols), float64 or float32
        Arguments.  Left unchanged unless an output aliases it.
    cos_out, sin_out : ndarray of t's shape and dtype, or None
        Where to write the cosine and the sine; ``cos_out`` may be ``t``
        itself (in place).  ``sin_out`` must not alias ``t`` when ``cos_out``
        is also requested.  At least one must be given.
    shift : ndarray of shape (n_cols,), optional
        Added to every row of ``t`` first (in place in ``t``, tile by tile, so
        ``t`` holds ``t + shift`` afterwards when it is not an output).
    scale : float, default=1.0

    Returns
    -------
    (cos_out, sin_out)

    Notes
    -----
    Error (float64): at most about 4e-16 absolute against ``np.cos``/``np.sin``
    for any finite input (measured on 1e7 uniform points: max 3.6e-16 on
    [-10, 10], 3.7e-16 on [-1e4, 1e4] and [-1e7, 1e7]; tested with a 5e-16
    bound).  Several times faster than float64 ``np.cos``
    (``benchmarks/results/design-measurements.md``).  Cost: about 28
    vectorised passes over each cache-resident tile.

    References
    ----------
    W. J. Cody, W. Waite. Software Manual for the Elementary Functions.
    Prentice-Hall, 1980 (the two-constant range reduction).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps.fast_cosine import fast_cos
    >>> t = np.linspace(-100.0, 100.0, 1001)
    >>> bool(np.max(np.abs(fast_cos(t) - np.cos(t))) < 1e-15)
    True
    """
    if cos_out is None and sin_out is None:
        raise ValueError("fast_cos_sin needs cos_out or sin_out")
    if not isinstance(t, np.ndarray) or t.dtype not in (np.float64, np.float32):
        raise TypeError("t must be a float32 or float64 ndarray")
    for name, o in (("cos_out", cos_out), ("sin_out", sin_out)):
        if o is not None and (o.shape != t.shape or o.dtype != t.dtype):
            raise ValueError(f"{name} must have t's shape {t.shape} and dtype {t.dtype}")
    if sin_out is not None and cos_out is not None and np.shares_memory(sin_out, t):
        raise ValueError("sin_out must not alias t when cos_out is also requested")
    t2 = _as_2d(t)
    c2 = None if cos_out is None else _as_2d(cos_out)
    s2 = None if sin_out is None else _as_2d(sin_out)
    if shift is not None:
        shift = np.asarray(shift, dtype=t.dtype)
        if shift.shape != (t2.shape[1],):
            raise ValueError(f"shift must have shape ({t2.shape[1]},), got {shift.shape}")
    fast = t.dtype == np.float64
    kernel = None
    if fast and USE_NUMBA and (_numba_kernel is not None or t2.size >= NUMBA_MIN_ELEMENTS):
        kernel = _get_numba_kernel()
    if kernel is not None:
        dummy = np.empty((1, 1))
        kernel(
            t2,
            shift if shift is not None else np.zeros(t2.shape[1]),
            shift is not None,
            c2 if c2 is not None else dummy,
            c2 is not None,
            s2 if s2 is not None else dummy,
            s2 is not None,
            float(scale),
        )
        return cos_out, sin_out
    if fast:
        tmp = [np.empty(TILE_ELEMENTS, dtype=np.float64) for _ in range(3)]
    for rows, cols in _tiles(t2.shape):
        tt = t2[rows, cols]
        if shift is not None:
            tt += shift[cols]
        co = None if c2 is None else c2[rows, cols]
        so = None if s2 is None else s2[rows, cols]
        if fast:
            n = tt.size
            views = [b[:n].reshape(tt.shape) for b in tmp]
            _cos_sin_tile(tt, co, so, float(scale), views)
        else:
            if so is not None:
                np.sin(tt, out=so)
                if scale != 1.0:
                    so *= scale
            if co is not None:
                np.cos(tt, out=co)
                if scale != 1.0:
                    co *= scale
    return cos_out, sin_out


def fast_cos(t, out=None, *, shift=None, scale=1.0):
    """``scale * cos(t + shift)``; see :func:`fast_cos_sin`.  ``out=t`` works in place.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps.fast_cosine import fast_cos
    >>> float(fast_cos(np.array([np.pi]))[0])
    -1.0
    """
    if out is None:
        out = np.empty_like(t)
    return fast_cos_sin(t, cos_out=out, shift=shift, scale=scale)[0]


def fast_sin(t, out=None, *, shift=None, scale=1.0):
    """``scale * sin(t + shift)``; see :func:`fast_cos_sin`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps.fast_cosine import fast_sin
    >>> float(fast_sin(np.array([np.pi / 2]))[0])
    1.0
    """
    if out is None:
        out = np.empty_like(t)
    return fast_cos_sin(t, sin_out=out, shift=shift, scale=scale)[1]
