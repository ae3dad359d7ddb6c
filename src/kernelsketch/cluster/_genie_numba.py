"""The merge loop of :func:`kernelsketch.cluster.genie.genie_labels`, compiled by numba.

Imported only where numba is already loaded (:func:`kernelsketch.cluster.genie._compiled_merges`).  The same
merges, in the same order, with the same arithmetic as the NumPy loop: the Gini numerator is kept from exact
integer sums, so the labels are equal bit for bit.  A module-level function, so numba's disk cache serves every
later process (see :mod:`kernelsketch.maps._cosine_numba`).
"""

from __future__ import annotations

import numba
import numpy as np

from ..utils.numba_cache import _install_cache_locator, _load_without_refresh

CACHE = _install_cache_locator(numba, __file__)


@numba.njit(nogil=True, cache=CACHE)
def merges(u, v, n_clusters, gini_threshold, owner, size):  # pragma: no cover - compiled
    """Genie's ``m - n_clusters`` merges of the tree ``(u, v)`` (lightest edge first) into ``owner`` and ``size``
    (``(m,)`` int64: each point's cluster id, each id's size, 0 once merged away), as the NumPy loop of
    :func:`~kernelsketch.cluster.genie.genie_labels` makes them."""
    m = owner.shape[0]
    used = np.zeros(u.shape[0], dtype=np.bool_)
    clusters = m
    pairs = 0.0  # the Gini numerator sum_{i<j} |c_i - c_j| over the current sizes
    nxt = 0
    for _ in range(m - n_clusters):
        gini = pairs / ((clusters - 1) * m) if clusters > 1 else 0.0
        if gini > gini_threshold:  # the lightest unused edge that touches a cluster of the smallest size
            smallest = m + 1
            for c in range(m):
                if 0 < size[c] < smallest:
                    smallest = size[c]
            e = -1
            for t in range(u.shape[0]):
                if not used[t] and (size[owner[u[t]]] == smallest or size[owner[v[t]]] == smallest):
                    e = t
                    break
        else:
            while used[nxt]:
                nxt += 1
            e = nxt
        used[e] = True
        a, b = owner[u[e]], owner[v[e]]
        if size[a] < size[b] or (size[a] == size[b] and b < a):
            a, b = b, a
        sa, sb = size[a], size[b]
        to_a, to_b, to_ab = 0, 0, 0  # sum |c - sa|, |c - sb|, |c - (sa + sb)| over the clusters alive
        for c in range(m):
            sc = size[c]
            if sc > 0:
                to_a += abs(sc - sa)
                to_b += abs(sc - sb)
                to_ab += abs(sc - (sa + sb))
        pairs -= to_a + to_b - abs(sa - sb)
        pairs += to_ab - sb - sa  # (the merged pair's own terms |sa - (sa + sb)| and |sb - (sa + sb)| left out)
        for i in range(m):
            if owner[i] == b:
                owner[i] = a
        size[a], size[b] = sa + sb, 0
        clusters -= 1


_load_without_refresh(globals())  # (the cached kernel loads in milliseconds)
