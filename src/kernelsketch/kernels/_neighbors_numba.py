"""The compiled kernels of :mod:`kernelsketch.kernels.neighbors`: the running top-``r`` selection, the
coarse-to-fine approximate search and ``Z^T Z`` of a landmark graph.

Imported only when numba is installed.  Module-level functions so numba's disk cache serves
every later process (see :mod:`kernelsketch.maps._cosine_numba`).
"""

from __future__ import annotations

import numba
import numpy as np

from ..utils.numba_cache import _install_cache_locator, _load_without_refresh

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
def gram_add(indices, weights, G, degrees, lo, hi):  # pragma: no cover - compiled
    """``G[lo:hi] += (Z^T Z)[lo:hi]`` and ``degrees[lo:hi] += (Z^T 1)[lo:hi]`` for the rows of a graph given
    as ``r`` (index, weight) pairs per row, in row order: each entry is summed in row order, whatever the
    stripe ``[lo, hi)`` (so ``degrees`` is ``np.bincount``'s, bit for bit).

    Each row's pairs in the stripe are listed first, in order, without a branch (a stripe holds about half
    of a row's pairs, at random: a branch per pair would be mispredicted half the time), then added."""
    n, r = indices.shape
    mine = np.empty(r, dtype=np.int64)
    w = np.empty(r, dtype=np.float64)
    for i in range(n):
        k = 0
        for a in range(r):
            w[a] = np.float64(weights[i, a])  # (float32 weights: each product in float64)
            ia = indices[i, a]
            mine[k] = a
            k += (ia >= lo) & (ia < hi)
        for t in range(k):
            a = mine[t]
            ia = indices[i, a]
            wa = w[a]
            degrees[ia] += wa
            for b in range(r):
                G[ia, indices[i, b]] += wa * w[b]


@numba.njit(nogil=True, cache=CACHE)
def graph_embed(indices, weights, P, out):  # pragma: no cover - compiled
    """``out = Z @ P`` for the rows of a graph given as ``r`` (index, weight) pairs per row: each row's
    ``sum_a w_a P[j_a]``, added in pair order from 0 in float64 (scipy's CSR product's arithmetic)."""
    n, r = indices.shape
    k = P.shape[1]
    for i in range(n):
        for c in range(k):
            out[i, c] = 0.0
        for a in range(r):
            w = np.float64(weights[i, a])
            j = indices[i, a]
            for c in range(k):
                out[i, c] += w * P[j, c]


@numba.njit(nogil=True, cache=CACHE)
def graph_assign(indices, weights, P, C, c_sq, labels, sq, sums, counts):  # pragma: no cover - compiled
    """k-means' assignment of the rows of a graph's embedding without writing the embedding: each row's
    ``u = sum_a w_a P[j_a]`` (:func:`graph_embed`'s float64 arithmetic), rounded to ``C``'s dtype, its
    nearest row of ``C`` by ``c_sq - 2 c.u`` in that dtype (the first of equal keys) into ``labels``, its
    squared distance (float64, at least 0) into ``sq``, and ``u`` (float64 of the rounded values) added
    to its cluster's ``sums`` row and 1 to ``counts``, rows in order.

    Rows go 64 at a time: their rounded embeddings transposed (``k x 64``), so that each centre's keys of
    the 64 rows are one vectorized loop per coordinate (each row's dot product still summed in coordinate
    order, so the numbers of a row at a time)."""
    n, r = indices.shape
    k = P.shape[1]
    nc = C.shape[0]
    B = 64
    u = np.empty(k, dtype=np.float64)
    XT = np.empty((k, B), dtype=C.dtype)
    x_sq = np.empty(B, dtype=np.float64)
    dot = np.empty(B, dtype=C.dtype)
    best_v = np.empty(B, dtype=C.dtype)
    best = np.empty(B, dtype=np.int64)
    dot[0] = -2.0
    two = dot[0]  # -2 in C's dtype: every key is computed in C's dtype, as nearest_centre's array is
    for start in range(0, n, B):
        nb = min(B, n - start)
        for b in range(nb):
            i = start + b
            for c in range(k):
                u[c] = 0.0
            for a in range(r):
                w = np.float64(weights[i, a])
                j = indices[i, a]
                for c in range(k):
                    u[c] += w * P[j, c]
            q = 0.0
            for c in range(k):
                XT[c, b] = u[c]
                q += np.float64(XT[c, b]) * np.float64(XT[c, b])
            x_sq[b] = q
        for h in range(nc):
            ch = C[h, 0]
            for b in range(nb):
                dot[b] = ch * XT[0, b]
            for c in range(1, k):
                ch = C[h, c]
                for b in range(nb):
                    dot[b] += ch * XT[c, b]
            cs = c_sq[h]
            for b in range(nb):
                v = dot[b] * two
                v += cs
                less = h == 0 or v < best_v[b]
                best_v[b] = v if less else best_v[b]
                best[b] = h if less else best[b]
        for b in range(nb):
            i = start + b
            h = best[b]
            labels[i] = h
            sq[i] = max(np.float64(best_v[b]) + x_sq[b], 0.0)
            counts[h] += 1.0
            for c in range(k):
                sums[h, c] += np.float64(XT[c, b])


@numba.njit(nogil=True, cache=CACHE)
def _dots(x, P, rows, first, last, acc):  # pragma: no cover - compiled
    """``acc[q] = x . P[rows[first + q]]``, each summed in coordinate order from ``x[0] P[., 0]`` (numpy's order)."""
    d = x.shape[0]
    for q in range(last - first):
        acc[q] = x[0] * P[rows[first + q], 0]
    for k in range(1, d):
        xk = x[k]
        for q in range(last - first):
            acc[q] += xk * P[rows[first + q], k]


@numba.njit(nogil=True, cache=CACHE)
def _dots_columns(x, PT, lo, hi, acc):  # pragma: no cover - compiled
    """``acc[q - lo] = x . PT[:, q]`` for ``lo <= q < hi``, summed in coordinate order (vectorized over ``q``)."""
    d = x.shape[0]
    x0 = x[0]
    for q in range(lo, hi):
        acc[q - lo] = x0 * PT[0, q]
    for k in range(1, d):
        xk = x[k]
        for q in range(lo, hi):
            acc[q - lo] += xk * PT[k, q]


@numba.njit(nogil=True, cache=CACHE)
def _dots_columns2(x, y, PT, lo, hi, acc, acc2):  # pragma: no cover - compiled
    """:func:`_dots_columns` of two rows ``x`` and ``y`` against the same ``PT`` (one read of each of its values
    for both): ``acc`` for ``x``, ``acc2`` for ``y``, each sum in coordinate order as for one row."""
    d = x.shape[0]
    x0 = x[0]
    y0 = y[0]
    for q in range(lo, hi):
        acc[q - lo] = x0 * PT[0, q]
        acc2[q - lo] = y0 * PT[0, q]
    for k in range(1, d):
        xk = x[k]
        yk = y[k]
        for q in range(lo, hi):
            acc[q - lo] += xk * PT[k, q]
            acc2[q - lo] += yk * PT[k, q]


#: bytes of the transposed tile of rows :func:`_nearest_columns` compares with every column at once (in L1 cache)
_COLUMN_TILE_BYTES = 16384


@numba.njit(nogil=True, cache=CACHE)
def _nearest_columns(X, rows, PT, sq, z, out):  # pragma: no cover - compiled
    """``out[a]``: the first ``h < z`` with the smallest ``sq[h] - (x . PT[:, h] + x . PT[:, h])``, ``x`` the row
    ``X[rows[a]]``.

    Many rows at a time: a tile of rows is transposed (its ``d x t`` values in L1 cache), then each column
    ``h`` of ``PT`` is compared with every row of the tile at once, the products summed in coordinate order
    for each row and the running smallest kept per row, so that the compiled loops run across rows (vector
    lanes) and no row waits on its own chain of comparisons.  The same arithmetic, each row's sum in the
    same order, as one row against the columns (:func:`_dots_columns`, then the first smallest key).
    """
    n = rows.shape[0]
    d = X.shape[1]
    t = max(16, min(256, (_COLUMN_TILE_BYTES // max(1, d * X.itemsize)) // 16 * 16))
    XT = np.zeros((d, t), dtype=X.dtype)  # (a last tile's unused columns: the tile before's, finite)
    acc = np.empty(t, dtype=X.dtype)
    best = np.empty(t, dtype=X.dtype)
    arg = np.empty(t, dtype=np.int64)
    for s in range(0, n, t):
        e = min(n, s + t)
        for i in range(e - s):
            x = X[rows[s + i]]
            for k in range(d):
                XT[k, i] = x[k]
        for h in range(z):
            p0 = PT[0, h]
            for i in range(t):
                acc[i] = XT[0, i] * p0
            for k in range(1, d):
                pk = PT[k, h]
                for i in range(t):
                    acc[i] += XT[k, i] * pk
            sh = sq[h]
            if h == 0:
                for i in range(t):
                    best[i] = sh - (acc[i] + acc[i])
                    arg[i] = 0
            else:
                for i in range(t):
                    v = sh - (acc[i] + acc[i])
                    less = v < best[i]
                    arg[i] = h if less else arg[i]
                    best[i] = v if less else best[i]
        for i in range(e - s):
            out[s + i] = arg[i]


@numba.njit(nogil=True, cache=CACHE)
def coarse_to_fine(  # pragma: no cover - compiled
    X,
    L,
    l_sq,
    CT,
    c_sq,
    groupT,
    members,
    offsets,
    candidates,
    candT,
    cand_sq,
    r,
    keys,
    idx,
    settled,
    group_settled,
    nearest_p,
):
    """U-SPEC's approximate ``r`` nearest landmarks of each row of ``X``, ascending by (key, index).

    ``CT`` (d, z): the group centres, transposed, and ``c_sq`` their squared norms; ``groupT`` (z, d, w): each
    group's landmarks (``members[offsets[g]:offsets[g + 1]]``), transposed and padded to the largest group;
    ``candidates`` (m, c'): each landmark's candidates, padded to a multiple of 32 with ``cand_sq`` ``+inf``
    (never kept); ``candT`` (m, d, c'): their coordinates (or empty: gathered from ``L`` instead, for large
    ``d``).  Widths that are multiples of 32 keep every dot product with the candidates in the compiled vector
    loop.

    Two sweeps: each row's nearest group centre (:func:`_nearest_columns`, many rows at a time) and that
    group's nearest landmark ``p``; then the rows in order of ``p`` (a counting sort), so that rows sharing
    ``p`` read its candidate block while it is in cache: the keys ``l_sq[j] - 2 x.l_j`` of ``p``'s candidates
    and the ``r`` smallest by :func:`_select`.  The order only changes when a row is visited, never its answer.
    Two rows of the same ``p`` go together: :func:`_dots_columns2` reads each value of the block once for both,
    and sums each row's products as for one row.  Ties keep the lower index at every step, as the numpy
    version does.

    ``nearest_p`` (n,) int64 receives each row's ``p``.  ``settled`` (m,) int64, or empty: a row whose ``p`` has
    ``settled[p] >= 0`` skips the second sweep (its ``keys`` and ``idx`` are left as they were), for a caller
    whose answer for such a row follows from ``p`` alone; ``group_settled`` (z,) int64: a group whose landmarks are
    all settled alike (``>= 0``) is not scanned, its first landmark standing for the nearest (``settled`` the same).
    """
    n = X.shape[0]
    groups = np.empty(n, dtype=np.int64)
    _nearest_columns(X, np.arange(n), CT, c_sq, CT.shape[1], groups)
    pending = _group_sweep(X, l_sq, groupT, members, offsets, groups, settled, group_settled, nearest_p)
    if pending:
        _candidate_sweep(X, L, candidates, candT, cand_sq, r, keys, idx, settled, nearest_p)


@numba.njit(nogil=True, cache=CACHE)
def _counting_sort(keys, n_keys):  # pragma: no cover - compiled
    """``(start, order)``: the positions ``i`` in order of ``keys[i]`` (each in ``[0, n_keys)``), ties in position
    order, and where each key's run begins (``start[k]:start[k + 1]``; ``n_keys + 1`` entries)."""
    n = keys.shape[0]
    start = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(n):
        start[keys[i] + 1] += 1
    for k in range(n_keys):
        start[k + 1] += start[k]
    order = np.empty(n, dtype=np.int64)
    fill = start[:-1].copy()
    for i in range(n):
        order[fill[keys[i]]] = i
        fill[keys[i]] += 1
    return start, order


@numba.njit(nogil=True, cache=CACHE)
def _group_sweep(X, l_sq, groupT, members, offsets, groups, settled, group_settled, nearest_p):
    """:func:`coarse_to_fine`'s first sweep after the groups: each row's nearest landmark ``p`` in its group
    ``groups[i]`` (into ``nearest_p``), the rows of a group together (:func:`_nearest_columns`); returns how many
    rows the second sweep searches (those whose ``p`` is not settled)."""
    n = X.shape[0]
    z = offsets.shape[0] - 1
    skip = settled.shape[0] > 0
    start, order = _counting_sort(groups, z)  # rows by group
    sq = np.empty(groupT.shape[2], dtype=X.dtype)
    found = np.empty(n, dtype=np.int64)
    pending = 0
    for g in range(z):
        a, b = start[g], start[g + 1]
        if b == a:
            continue
        lo, hi = offsets[g], offsets[g + 1]
        rows = order[a:b]
        if skip and group_settled[g] >= 0:  # (every landmark of the group settled alike: any one answers)
            for i in rows:
                nearest_p[i] = members[lo]
            continue
        for q in range(hi - lo):
            sq[q] = l_sq[members[lo + q]]
        _nearest_columns(X, rows, groupT[g], sq, hi - lo, found[a:b])
        for t in range(b - a):
            p = members[lo + found[a + t]]
            nearest_p[rows[t]] = p
            pending += not skip or settled[p] < 0
    return pending


@numba.njit(nogil=True, cache=CACHE)
def _candidate_sweep(X, L, candidates, candT, cand_sq, r, keys, idx, settled, nearest_p):
    """:func:`coarse_to_fine`'s second sweep: the rows in order of ``p``, each one's ``r`` smallest keys among
    ``p``'s candidates (rows of a settled ``p`` skipped)."""
    n = X.shape[0]
    m = L.shape[0]
    c = candidates.shape[1]
    acc = np.empty(c, dtype=X.dtype)
    acc2 = np.empty(c, dtype=X.dtype)
    buf_keys = np.empty(c, dtype=keys.dtype)
    buf_idx = np.empty(c, dtype=idx.dtype)
    probe = np.empty(1, dtype=X.dtype)
    blocks = candT.shape[0] > 0
    skip = settled.shape[0] > 0
    _, order = _counting_sort(nearest_p, m)  # rows by p
    t = 0
    while t < n:
        i = order[t]
        p = nearest_p[i]
        if skip and settled[p] >= 0:  # (rows in order of p: a settled p's rows are skipped together)
            t += 1
            continue
        x = X[i]
        cand = candidates[p]
        csq = cand_sq[p]
        if blocks and t + 1 < n and nearest_p[order[t + 1]] == p:  # two rows of the same p: its block read once
            i2 = order[t + 1]
            _dots_columns2(x, X[i2], candT[p], 0, c, acc, acc2)
            for q in range(c):
                acc[q] = csq[q] - (acc[q] + acc[q])
                acc2[q] = csq[q] - (acc2[q] + acc2[q])
            _select(acc, cand, c, r, keys[i], idx[i], buf_keys, buf_idx, probe)
            _select(acc2, cand, c, r, keys[i2], idx[i2], buf_keys, buf_idx, probe)
            t += 2
            continue
        if blocks:  # the candidates' coordinates as one contiguous (d, c) block: vectorized
            _dots_columns(x, candT[p], 0, c, acc)
        else:
            _dots(x, L, cand, 0, c, acc)
        for q in range(c):  # the keys, vectorized: the same arithmetic as l_sq[j] - (x.l_j + x.l_j)
            acc[q] = csq[q] - (acc[q] + acc[q])
        _select(acc, cand, c, r, keys[i], idx[i], buf_keys, buf_idx, probe)
        t += 1


@numba.njit(nogil=True, cache=CACHE, inline="always")
def _count_at_most(v, c, t):  # pragma: no cover - compiled
    """How many of ``v[:c]`` are ``<= t`` (vectorized: a compare and an add per value, no branch)."""
    n = 0
    for q in range(c):
        n += v[q] <= t
    return n


@numba.njit(nogil=True, cache=CACHE)
def _select(v, cand, c, r, kk, ii, buf_keys, buf_idx, probe):  # pragma: no cover - compiled
    """The ``r`` smallest ``(v[q], cand[q])`` of ``q < c`` in (key, index) order, into ``kk`` / ``ii``.

    A threshold ``hi`` with at least ``r`` keys at or below it is narrowed by bisection (each
    step one vectorized count) until exactly ``r`` remain or it cannot move; the keys at or below
    it (every one of the ``r`` smallest among them) are collected, and each is written at its
    rank in (key, index) order.  The same answer as inserting every candidate into a sorted list
    of ``r``, without a mispredicted branch per candidate.  ``probe``: one value of ``v``'s dtype, so the midpoints
    compared are values of that dtype.
    """
    hi = v[0]
    lo = v[0]
    for q in range(1, r):
        hi = v[q] if v[q] > hi else hi
    for q in range(1, c):
        lo = v[q] if v[q] < lo else lo
    n_hi = _count_at_most(v, c, hi)  # >= r: the first r keys are <= hi
    if _count_at_most(v, c, lo) >= r:  # the smallest key is tied r times or more
        hi = lo
        n_hi = r + 1
    steps = 0
    while n_hi > r and steps < 64:  # invariant: fewer than r keys <= lo (or lo is the minimum), >= r keys <= hi
        probe[0] = lo + (hi - lo) * 0.5
        mid = probe[0]
        if not (lo < mid < hi):
            break
        n_mid = _count_at_most(v, c, mid)
        if n_mid >= r:
            hi = mid
            n_hi = n_mid
        else:
            lo = mid
        steps += 1
    k = 0
    for q in range(c):  # collect the keys <= hi (branch-free: write, then advance when kept)
        buf_keys[k] = v[q]
        buf_idx[k] = cand[q]
        k += v[q] <= hi
    for a in range(k):  # each collected pair to its rank in (key, index) order (branch-free: ranks are distinct)
        key = buf_keys[a]
        j = buf_idx[a]
        rank = 0
        for b in range(k):
            rank += (buf_keys[b] < key) | ((buf_keys[b] == key) & (buf_idx[b] < j))
        if rank < r:
            kk[rank] = key
            ii[rank] = j


_load_without_refresh(globals())  # (the cached kernels above load in milliseconds, not a third of a second)
