"""The running top-``r`` selection of :mod:`kernelsketch.kernels.neighbors`, compiled by numba.

Imported only when numba is installed.  Module-level functions so numba's disk cache serves
every later process (see :mod:`kernelsketch.maps._cosine_numba`).
"""

from __future__ import annotations

import numba

from ..utils.numba_cache import _install_cache_locator

CACHE = _install_cache_locator(numba, __file__)


@numba.njit(nogil=True, cache=CACHE)
def smallest(G, l_sq, r, keys, idx):  # pragma: no cover - compiled
    """Row by row, the ``r`` smallest ``l_sq[j] - 2 G[i, j]`` and their ``j``, ascending.

    One read of each value: a value not below the current ``r``-th is dropped with one
    comparison; a smaller one is inserted into the row's sorted list.  Ties keep the lower
    index (strict comparisons), so the result is the lexicographic (key, index) order.
    """
    t, m = G.shape
    for i in range(t):
        n = 0
        for j in range(m):
            v = l_sq[j] - 2.0 * G[i, j]
            if n < r:
                p = n
                n += 1
            elif v < keys[i, r - 1]:
                p = r - 1
            else:
                continue
            while p > 0 and keys[i, p - 1] > v:
                keys[i, p] = keys[i, p - 1]
                idx[i, p] = idx[i, p - 1]
                p -= 1
            keys[i, p] = v
            idx[i, p] = j


@numba.njit(nogil=True, cache=CACHE)
def gram_add(indices, weights, G):  # pragma: no cover - compiled
    """``G += Z^T Z`` for the rows of a graph given as ``r`` (index, weight) pairs per row, in row order."""
    n, r = indices.shape
    for i in range(n):
        for a in range(r):
            ia = indices[i, a]
            wa = weights[i, a]
            for b in range(r):
                G[ia, indices[i, b]] += wa * weights[i, b]
