"""The nearest-landmark search against brute force, on every backend."""

import numpy as np
import pytest
import scipy.sparse as sp

import kernelsketch.kernels.neighbors as nb
from kernelsketch.kernels.neighbors import nearest, resolve_backend

BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(nb._numba_kernel() is None, reason="no numba"))]


def brute(X, L, r):
    D = ((np.asarray(X, dtype=np.float64)[:, None, :] - np.asarray(L, dtype=np.float64)[None]) ** 2).sum(-1)
    idx = np.argsort(D, axis=1, kind="stable")[:, :r]
    return np.take_along_axis(D, idx, axis=1), idx


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("r", [1, 7, 40])
def test_same_neighbours_as_brute_force(backend, r, dtype):
    rng = np.random.default_rng(r)
    X, L = rng.normal(size=(900, 6)).astype(dtype), rng.normal(size=(40, 6)).astype(dtype)
    d2, idx = nearest(X, L, r, backend=backend)
    d_ref, i_ref = brute(X, L, r)
    assert idx.dtype == np.int32 and d2.dtype == dtype and d2.shape == (900, r)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(d2, d_ref, rtol=tol, atol=tol)
    if dtype == np.float64:  # float32 rounding may swap two near-equal candidates
        np.testing.assert_array_equal(idx, i_ref)
    else:
        assert (idx == i_ref).mean() > 0.999


@pytest.mark.parametrize("backend", BACKENDS)
def test_duplicated_points_tie_in_distance_not_in_validity(backend):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(20, 3))
    L = np.vstack([base, base])  # every landmark twice: every neighbour ties with its copy
    X = np.vstack([base[:5], rng.normal(size=(200, 3))])
    d2, idx = nearest(X, L, 4, backend=backend)
    d_ref, _ = brute(X, L, 4)
    np.testing.assert_allclose(d2, d_ref, atol=1e-10)
    D = ((X[:, None, :] - L[None]) ** 2).sum(-1)
    np.testing.assert_allclose(np.take_along_axis(D, idx.astype(np.int64), axis=1), d2, atol=1e-10)
    assert all(len(set(row)) == 4 for row in idx.tolist())  # four distinct landmarks a row
    assert (d2[:5, 0] < 1e-12).all() and (d2[:5, 1] < 1e-12).all()  # a point and its copy, both at 0
    _, i_ref = brute(X, L, 4)  # ties go to the lower index: exactly a stable sort's choice
    np.testing.assert_array_equal(idx, i_ref)


def test_backends_agree_and_threads_do_not_change_the_answer(monkeypatch):
    rng = np.random.default_rng(1)
    X, L = rng.normal(size=(5000, 8)), rng.normal(size=(300, 8))
    monkeypatch.setattr(nb, "MAX_TILE_ROWS", 128)
    a = nearest(X, L, 10, backend="numpy", n_threads=1)
    b = nearest(X, L, 10, backend="numpy", n_threads=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    if nb._numba_kernel() is not None:
        c = nearest(X, L, 10, backend="numba", n_threads=3)
        np.testing.assert_array_equal(a[0], c[0])
        np.testing.assert_array_equal(a[1], c[1])


def test_sparse_rows_search_as_their_dense_copy():
    rng = np.random.default_rng(2)
    X = sp.random(300, 12, density=0.3, random_state=3, format="csr")
    L = rng.normal(size=(25, 12))
    d_s, i_s = nearest(X, L, 5)
    d_d, i_d = nearest(X.toarray(), L, 5)
    np.testing.assert_allclose(d_s, d_d, atol=1e-12)
    np.testing.assert_array_equal(i_s, i_d)


def test_refuses_what_it_cannot_search():
    X, L = np.zeros((3, 2)), np.ones((4, 2))
    with pytest.raises(ValueError, match=r"r must be in \[1, 4\]"):
        nearest(X, L, 5)
    with pytest.raises(ValueError, match="columns"):
        nearest(np.zeros((3, 3)), L, 1)
    with pytest.raises(ValueError, match="backend"):
        resolve_backend("faiss-gpu")


def test_graph_gram_is_z_transpose_z_on_both_routes(monkeypatch):
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    n, r, m = 3000, 6, 40
    indices = np.argsort(rng.random((n, m)), axis=1)[:, :r].astype(np.int32)
    weights = rng.random((n, r))
    weights /= weights.sum(axis=1, keepdims=True)
    Z = sp.csr_matrix((weights.ravel(), indices.ravel(), np.arange(0, n * r + 1, r)), shape=(n, m)).toarray()
    bincount = np.bincount(indices.ravel(), weights=weights.ravel(), minlength=m)
    for weights_in in (weights, weights.astype(np.float32)):
        monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", 0)  # the compiled route where numba is installed
        degrees = np.zeros(m)  # Z^T 1 is added into what the caller passes
        dense = nb.graph_gram(indices, weights_in, m, degrees)
        np.testing.assert_allclose(sp.csr_matrix(dense).toarray(), Z.T @ Z, rtol=1e-6, atol=1e-9)
        degrees_scipy = np.zeros(m)
        monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", float("inf"))  # scipy's sparse product
        G = nb.graph_gram(indices, weights_in, m, degrees_scipy).toarray()
        np.testing.assert_allclose(G, Z.T @ Z, rtol=1e-6, atol=1e-9)
        # the degrees are np.bincount's in both routes (summed in the same order: equal, not just close)
        expected = np.bincount(indices.ravel(), weights=weights_in.ravel(), minlength=m)
        np.testing.assert_array_equal(degrees, expected)
        np.testing.assert_array_equal(degrees_scipy, expected)
    np.testing.assert_allclose(nb.graph_gram(indices, weights, m, None).toarray(), Z.T @ Z, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(bincount, Z.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("index_dtype", [np.int16, np.int32])
@pytest.mark.parametrize("weight_dtype", [np.float32, np.float64])
def test_graph_embed_is_scipys_csr_product_bit_for_bit_on_both_routes(monkeypatch, index_dtype, weight_dtype):
    """The kept graph's embedding (the assignment pass) gives the numbers of ``transform``'s CSR product."""
    rng = np.random.default_rng(4)
    n, r, m, k = 20_001, 7, 300, 5
    indices = rng.integers(0, m, size=(n, r)).astype(index_dtype)
    weights = rng.random((n, r)).astype(weight_dtype)
    P = rng.normal(size=(m, k))
    Z = sp.csr_matrix((weights.ravel(), indices.ravel(), np.arange(0, n * r + 1, r)), shape=(n, m))
    expected = np.asarray(Z @ P)
    monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", 0)  # compiled where numba is installed
    np.testing.assert_array_equal(nb.graph_embed(indices, weights, P), expected)
    monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", float("inf"))  # scipy's, on row ranges
    np.testing.assert_array_equal(nb.graph_embed(indices, weights, P), expected)
    np.testing.assert_allclose(expected, Z.astype(np.float64).toarray() @ P, rtol=1e-12, atol=1e-12)


# -- the approximate (coarse-to-fine) search -------------------------------------------------------
def reference_coarse_to_fine(X, L, r, index):
    """The algorithm written plainly in float64 (the kernel's steps by brute force)."""
    X, L = np.asarray(X, dtype=np.float64), np.asarray(L, dtype=np.float64)
    out_d, out_i = [], []
    for x in X:
        g = int(np.argmin(((index.centres - x) ** 2).sum(1)))
        members = index.members[index.offsets[g] : index.offsets[g + 1]]
        p = members[np.argmin(((L[members] - x) ** 2).sum(1))]
        cand = np.asarray(index.candidates[p], dtype=np.int64)
        d = ((L[cand] - x) ** 2).sum(1)
        order = np.lexsort((cand, d))[:r]
        out_d.append(d[order])
        out_i.append(cand[order])
    return np.array(out_d), np.array(out_i)


@pytest.mark.parametrize("backend", BACKENDS)
def test_approximate_search_is_the_coarse_to_fine_algorithm(backend, dtype):
    rng = np.random.default_rng(4)
    centres = rng.normal(scale=6, size=(6, 5))
    L = (centres[rng.integers(0, 6, 300)] + rng.normal(size=(300, 5))).astype(dtype)
    X = (centres[rng.integers(0, 6, 700)] + rng.normal(size=(700, 5))).astype(dtype)
    index = nb.build_search_index(L, 4)
    assert index.candidates.shape == (300, nb.CANDIDATE_FACTOR * 4 + 1) and index.offsets[-1] == 300
    assert sorted(index.members.tolist()) == list(range(300))
    d2, idx = nb.approximate_nearest(X, L, 4, index, backend=backend)
    d_ref, i_ref = reference_coarse_to_fine(X, L, 4, index)
    assert d2.dtype == dtype and idx.dtype == np.int32 and d2.shape == (700, 4)
    tol = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(d2, d_ref, rtol=tol, atol=tol)
    if dtype == np.float64:
        np.testing.assert_array_equal(idx, i_ref)
    else:  # float32 rounding may pick another group or landmark at a near-tie
        assert (idx == i_ref).mean() > 0.99
    # what it returns are true distances of distinct landmarks, ascending
    D = ((np.asarray(X, np.float64)[:, None] - np.asarray(L, np.float64)[None]) ** 2).sum(-1)
    np.testing.assert_allclose(np.take_along_axis(D, idx.astype(np.int64), axis=1), d2, rtol=tol, atol=tol)
    assert all(len(set(row)) == 4 for row in idx.tolist()) and (np.diff(d2, axis=1) >= 0).all()
    # on clustered data it finds nearly all of the exact nearest
    _, exact = brute(X, L, 4)
    recall = (np.sort(exact, 1)[:, :, None] == np.sort(idx, 1)[:, None, :]).any(2).mean()
    assert recall > 0.95


def test_approximate_search_is_exact_when_the_candidates_are_every_landmark(dtype):
    rng = np.random.default_rng(5)
    X, L = rng.normal(size=(500, 3)).astype(dtype), rng.normal(size=(30, 3)).astype(dtype)
    r = 6
    assert nb.CANDIDATE_FACTOR * r + 1 >= 30  # every one of the 30 landmarks is a candidate
    index = nb.build_search_index(L, r)
    _, idx = nb.approximate_nearest(X, L, r, index)
    _, i_ref = brute(X, L, r)
    if dtype == np.float64:
        np.testing.assert_array_equal(idx, i_ref)
    else:
        assert (idx == i_ref).mean() > 0.999


@pytest.mark.parametrize("blocks", [True, False])
@pytest.mark.parametrize(("m", "r"), [(400, 6), (32, 7), (1000, 3)])
def test_approximate_backends_agree_bit_for_bit_whatever_the_tiles_and_threads(monkeypatch, dtype, blocks, m, r):
    """Both kernel routes (candidate blocks / gathers) against both numpy routes (one gather / rows by landmark).

    Candidate lists of 31, 32 (every landmark) and 16 and groups of every size: the kernel pads each
    width to 32 with never-chosen entries, and visits a tile's rows in order of their nearest landmark.
    """
    if nb._numba_kernel() is None:
        pytest.skip("no numba")
    rng = np.random.default_rng(6)
    X, L = rng.normal(size=(3000, 7)).astype(dtype), rng.normal(size=(m, 7)).astype(dtype)
    dup = m // 20
    L[m // 2 : m // 2 + dup] = L[:dup]  # duplicated landmarks, and rows on a landmark: ties everywhere
    X[:50] = L[np.arange(50) % m]
    index = nb.build_search_index(L, r)
    if not blocks:  # the kernel's gather route and the numpy rows-by-landmark route (large d)
        monkeypatch.setattr(nb, "_CANDIDATE_BLOCKS_BYTES", 0)
        monkeypatch.setattr(nb, "_GATHER_MAX_VALUES", 0)
    a = nb.approximate_nearest(X, L, r, index, backend="numpy")
    b = nb.approximate_nearest(X, L, r, index, backend="numba", n_threads=2)
    monkeypatch.setattr(nb, "APPROXIMATE_TILE_ROWS", 64)
    b64 = nb.approximate_nearest(X, L, r, index, backend="numba", n_threads=3)
    c = nb.approximate_nearest(X[1000:], L, r, index, backend="numba", n_threads=1)
    for got in (b, b64):
        np.testing.assert_array_equal(a[1], got[1])
        np.testing.assert_array_equal(a[0], got[0])
    np.testing.assert_array_equal(a[1][1000:], c[1])  # a row's answer depends on that row alone
    # a row on a landmark finds it (or its copy)
    on = np.arange(50) % m
    twin = {**{j: j + m // 2 for j in range(dup)}, **{j + m // 2: j for j in range(dup)}}
    copies = {int(j): {int(j), twin.get(int(j), int(j))} for j in on}
    assert all(int(b[1][i, 0]) in copies[int(on[i])] for i in range(50))
    assert (b[0][:50, 0] < (1e-4 if dtype == np.float32 else 1e-12)).all()  # at distance 0, up to rounding


@pytest.mark.parametrize("tile", [64, 4096])
def test_the_settled_search_answers_the_rows_it_does_not_skip_as_the_full_search(monkeypatch, tile):
    """``approximate_nearest_settled``: a row whose first-sweep landmark is not settled gets the full search's
    distances and neighbours, bit for bit, whatever the tiles, and a skipped row's neighbours are landmark 0
    (defined indices: a caller may index with them before masking; its distances are left undefined)."""
    if nb._numba_kernel() is None:
        pytest.skip("no numba")
    rng = np.random.default_rng(12)
    X, L = rng.normal(size=(5000, 5)).astype(np.float32), rng.normal(size=(300, 5)).astype(np.float32)
    index = nb.build_search_index(L, 6)
    monkeypatch.setattr(nb, "APPROXIMATE_TILE_ROWS", tile)
    full = nb.approximate_nearest(X, L, 6, index, backend="numba", n_threads=2)
    settled = np.where(rng.random(300) < 0.5, 0, -1).astype(np.int64)
    empty = np.empty

    def dirty_empty(*args, **kwargs):  # (np.empty's memory holds anything: here 7s, so nothing may rely on it)
        out = empty(*args, **kwargs)
        out.fill(7)
        return out

    monkeypatch.setattr(np, "empty", dirty_empty)
    d2, idx, p = nb.approximate_nearest_settled(X, L, 6, index, settled, n_threads=2)
    monkeypatch.setattr(np, "empty", empty)
    searched = settled[p] < 0
    assert 0 < searched.sum() < X.shape[0]
    np.testing.assert_array_equal(idx[searched], full[1][searched])
    np.testing.assert_array_equal(d2[searched], full[0][searched])
    assert (idx[~searched] == 0).all()


def test_the_settled_search_with_every_row_settled_ends_after_the_first_sweep():
    """Every landmark settled: no row is searched in full (indices 0, distances 0), and each row's ``p`` is the full
    first sweep's (landmarks settled with distinct values), or its nearest group's first landmark (all alike: the
    group is not scanned); the nearest group is the one numpy's coordinate-order sums find."""
    if nb._numba_kernel() is None:
        pytest.skip("no numba")
    rng = np.random.default_rng(3)
    X, L = rng.normal(size=(3000, 6)).astype(np.float32), rng.normal(size=(400, 6)).astype(np.float32)
    index = nb.build_search_index(L, 5)
    _, _, p_full = nb.approximate_nearest_settled(X, L, 5, index, np.full(400, -1), n_threads=2)
    d2, idx, p = nb.approximate_nearest_settled(X, L, 5, index, np.arange(400), n_threads=2)
    np.testing.assert_array_equal(p, p_full)
    assert not idx.any() and not d2.any()
    _, _, p_alike = nb.approximate_nearest_settled(X, L, 5, index, np.zeros(400, dtype=np.int64), n_threads=2)
    C = index.centres.astype(np.float32)
    S = nb._seq_dots(X, np.ascontiguousarray(C.T))
    groups = np.argmin((C * C).sum(axis=1)[None, :] - (S + S), axis=1)
    np.testing.assert_array_equal(p_alike, index.members[index.offsets[groups]])
    assert (p_alike != p_full).any()  # (the group's first landmark is not always the nearest)


def test_the_search_index_is_the_same_in_every_process_and_refuses_others():
    rng = np.random.default_rng(7)
    L = rng.normal(size=(200, 4))
    a, b = nb.build_search_index(L, 3), nb.build_search_index(L.copy(), 3)
    for x, y in zip(a[:4], b[:4], strict=True):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(TypeError, match="dense"):
        nb.approximate_nearest(sp.csr_matrix(L[:5]), L, 3, a)
    with pytest.raises(ValueError, match="other landmarks"):
        nb.approximate_nearest(L[:5], L[:100], 3, a)
    with pytest.raises(ValueError, match="candidate neighbourhood"):
        nb.approximate_nearest(L[:5], L, 40, a)
    with pytest.raises(ValueError, match=r"r must be in"):
        nb.build_search_index(L, 0)


def test_graph_gram_split_by_landmark_is_the_unsplit_sum_bit_for_bit(monkeypatch):
    if nb._numba_kernel() is None:
        pytest.skip("no numba")
    rng = np.random.default_rng(8)
    n, r, m = 5001, 5, 31
    indices = np.argsort(rng.random((n, m)), axis=1)[:, :r].astype(np.int32)
    weights = rng.random((n, r))
    Z = sp.csr_matrix((weights.ravel(), indices.ravel(), np.arange(0, n * r + 1, r)), shape=(n, m)).toarray()
    monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", 0)
    monkeypatch.setattr(nb, "GRAM_SPLIT_ROWS", 1000)  # split: a half of the landmarks a thread
    monkeypatch.setattr(nb, "blas_num_threads", lambda: 2)
    d_two, d_one, d_unsplit = np.zeros(m), np.zeros(m), np.zeros(m)
    two = nb.graph_gram(indices, weights, m, d_two)
    monkeypatch.setattr(nb, "blas_num_threads", lambda: 1)
    one = nb.graph_gram(indices, weights, m, d_one)
    monkeypatch.setattr(nb, "GRAM_SPLIT_ROWS", n + 1)  # not split
    unsplit = nb.graph_gram(indices, weights, m, d_unsplit)
    np.testing.assert_array_equal(one, two)  # every entry summed in row order: bit for bit
    np.testing.assert_array_equal(unsplit, two)
    for d in (d_two, d_one, d_unsplit):  # each landmark's degree too, and it is np.bincount's
        np.testing.assert_array_equal(d, np.bincount(indices.ravel(), weights=weights.ravel(), minlength=m))
    np.testing.assert_allclose(two, Z.T @ Z, rtol=1e-12, atol=1e-15)


def test_nearest_centre_is_the_brute_force_argmin_dense_and_sparse(dtype):
    rng = np.random.default_rng(9)
    X, C = rng.normal(size=(3000, 6)).astype(dtype), rng.normal(size=(7, 6))
    labels, dist = np.empty(3000, dtype=np.int64), np.empty(3000, dtype=dtype)
    nb.nearest_centre(X, C, labels, dist)
    D = ((np.asarray(X, np.float64)[:, None] - C[None]) ** 2).sum(-1)
    agree = labels == D.argmin(1)
    assert agree.mean() > (0.999 if dtype == np.float32 else 1.0 - 1e-12)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(dist + (np.asarray(X, np.float64) ** 2).sum(1), D.min(1), rtol=tol, atol=tol)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1, X, 0))
    nb.nearest_centre(Xs, C, labels)
    ref = (((np.asarray(Xs.toarray(), np.float64)[:, None] - C[None]) ** 2).sum(-1)).argmin(1)
    assert (labels == ref).mean() > (0.999 if dtype == np.float32 else 1.0 - 1e-12)
    lab2, d1, d2 = nb.two_nearest_centres(np.asarray(X, np.float64), C, (np.asarray(X, np.float64) ** 2).sum(1))
    S = np.sort(D, axis=1)
    np.testing.assert_allclose(d1, np.sqrt(S[:, 0]), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(d2, np.sqrt(S[:, 1]), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_selection_is_the_sorted_r_smallest_by_key_then_index(dtype):
    """The approximate search's selection (a bisected threshold, then a sort of the few kept) returns the
    ``r`` smallest (key, index) pairs, ties broken by the lower index: heavy ties, all keys equal, the
    minimum tied more than ``r`` times, distinct keys, ``r`` equal to the number of candidates."""
    pytest.importorskip("numba")
    from kernelsketch.kernels._neighbors_numba import _select

    rng = np.random.default_rng(0)
    c = 101
    cases = [rng.integers(0, 4, c), np.zeros(c), np.r_[np.zeros(15), rng.random(c - 15)], rng.normal(size=c)]
    cases += [rng.normal(size=c) * 1e-30, np.r_[rng.normal(size=c - 1), -1e30]]
    for v in cases:
        v = np.asarray(v, dtype=dtype)
        cand = rng.permutation(1000)[:c].astype(np.int32)
        for r in (1, 10, c):
            kk, ii = np.empty(r, dtype=dtype), np.empty(r, dtype=np.int32)
            _select(v, cand, c, r, kk, ii, np.empty(c, dtype), np.empty(c, np.int32), np.empty(1, dtype))
            order = np.lexsort((cand, v))[:r]  # by key, then by index
            np.testing.assert_array_equal(ii, cand[order])
            np.testing.assert_array_equal(kk, v[order])


# -- k-means' assignment straight from a graph ------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int16, np.int32])
def test_graph_assignment_is_the_nearest_centre_of_the_stored_embedding(monkeypatch, dtype, index_dtype):
    """``assign_graph_with_statistics`` = the nearest centre of ``graph_embed``'s rows rounded to ``dtype``
    (exact distances, near-ties aside), their sums, counts and squared distances; the same on one thread or
    two (pieces summed in order) and on the route without numba."""
    from kernelsketch.kernels import lloyd

    rng = np.random.default_rng(7)
    n, r, m, k, n_clusters = 20_001, 6, 300, 4, 5  # three pieces of GRAPH_ASSIGN_PIECE_ROWS
    indices = rng.integers(0, m, size=(n, r)).astype(index_dtype)
    weights = rng.random((n, r))
    weights /= weights.sum(axis=1, keepdims=True)
    P = rng.normal(size=(m, k))
    C = rng.normal(scale=0.3, size=(n_clusters, k))
    U = nb.graph_embed(indices, weights, P).astype(dtype).astype(np.float64)
    Cd = C.astype(dtype).astype(np.float64)
    D = ((U[:, None, :] - Cd[None, :, :]) ** 2).sum(axis=2)
    exact = D.argmin(axis=1)
    two = np.sort(D, axis=1)[:, :2]
    clear = (two[:, 1] - two[:, 0]) > 1e-4 * (1.0 + two[:, 0])  # rows whose rounding cannot flip the label

    labels, sq, sums, counts = lloyd.assign_graph_with_statistics(indices, weights, P, C, dtype)
    assert clear.mean() > 0.99
    np.testing.assert_array_equal(labels[clear], exact[clear])
    np.testing.assert_array_equal(counts, np.bincount(labels, minlength=n_clusters))
    onehot = np.zeros((n, n_clusters))
    onehot[np.arange(n), labels] = 1.0
    np.testing.assert_allclose(sums, onehot.T @ U, rtol=1e-12, atol=1e-9)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(sq, D[np.arange(n), labels], rtol=tol, atol=tol)

    monkeypatch.setattr(lloyd, "blas_num_threads", lambda: 1)
    one = lloyd.assign_graph_with_statistics(indices, weights, P, C, dtype)
    for a, b in zip(one, (labels, sq, sums, counts), strict=True):
        np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(nb, "_numba_kernel", lambda: None)  # the route without numba: embed, then assign
    plain = lloyd.assign_graph_with_statistics(indices, weights, P, C, dtype)
    np.testing.assert_array_equal(plain[0][clear], exact[clear])
    np.testing.assert_allclose(plain[2], sums, rtol=1e-12, atol=1e-9)


def test_graph_gram_added_call_by_call_is_one_call_bit_for_bit(monkeypatch):
    """``out=``: rows added block by block give one call's ``Z^T Z`` and ``Z^T 1`` exactly (each entry's sum
    goes on in row order), split across threads or not; scipy's route adds its product (to rounding)."""
    rng = np.random.default_rng(11)
    n, r, m = 50_000, 6, 200
    indices = rng.integers(0, m, size=(n, r)).astype(np.int32)
    weights = rng.random((n, r)).astype(np.float32)
    monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", 0)
    whole_deg = np.zeros(m)
    whole = nb.graph_gram(indices, weights, m, whole_deg)
    G, deg = np.full((m, m), 0.0), np.zeros(m)
    for s in (slice(0, 7), slice(7, 30_000), slice(30_000, n)):  # under and over GRAM_SPLIT_ROWS
        assert nb.graph_gram(indices[s], weights[s], m, deg, out=G) is G
    np.testing.assert_array_equal(G, whole)
    np.testing.assert_array_equal(deg, whole_deg)
    monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", float("inf"))
    G2 = np.zeros((m, m))
    for s in (slice(0, 20_000), slice(20_000, n)):
        nb.graph_gram(indices[s], weights[s], m, None, out=G2)
    np.testing.assert_allclose(G2, whole, rtol=1e-12)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_the_work_run_beside_the_search_runs_once_and_changes_nothing(backend):
    """``approximate_nearest(also=...)``: each call runs exactly once, on the search's threads, and the
    neighbours are those of the search alone; ``graph_gram_pieces`` run in any order give ``graph_gram``."""
    if backend == "numba" and resolve_backend(None) != "numba":
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(5)
    L, X = rng.normal(size=(300, 4)), rng.normal(size=(9000, 4))
    index = nb.build_search_index(L, 5)
    indices = rng.integers(0, 300, size=(30_000, 5)).astype(np.int32)
    weights = rng.random((30_000, 5))
    G, degrees = np.zeros((300, 300)), np.zeros(300)
    pieces = nb.graph_gram_pieces(indices, weights, 300, degrees, G)
    calls = []
    also = [lambda p=p: (calls.append(p), p()) for p in reversed(pieces)]
    ref = nb.approximate_nearest(X, L, 5, index, backend=backend)
    got = nb.approximate_nearest(X, L, 5, index, backend=backend, also=also)
    assert sorted(map(id, calls)) == sorted(map(id, pieces))  # each once
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    whole_deg = np.zeros(300)
    whole = nb.graph_gram(indices, weights, 300, whole_deg)
    np.testing.assert_allclose(G, sp.csr_matrix(whole).toarray(), rtol=1e-12)
    np.testing.assert_allclose(degrees, whole_deg, rtol=1e-12)
