"""The landmark spectral embedding's statistics summed over a uniform sample of rows (``statistics_rows``), and the
assignment that labels the rows of settled cells from the approximate search's first sweep alone."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import kernelsketch as ks
from kernelsketch.cluster import LandmarkSpectralClustering, StreamingKMeans
from kernelsketch.kernels.neighbors import _numba_kernel
from kernelsketch.maps import LandmarkSpectralEmbedding
from kernelsketch.maps.landmark_spectral import uniform_sorted_indices

needs_numba = pytest.mark.skipif(_numba_kernel() is None, reason="the settled search is numba's")


def _blobs(n, d=4, k=5, std=2.0, seed=1, dtype=np.float32):
    X, y = make_blobs(n, n_features=d, centers=k, cluster_std=std, random_state=seed)
    return X.astype(dtype), y


def test_uniform_sorted_indices_are_a_uniform_sample_without_replacement():
    rng = np.random.default_rng(0)
    for n_rows, n, chunk in [(10, 3, 4), (1000, 1000, 64), (10_000, 5000, 1000), (7, 0, 3)]:
        idx = uniform_sorted_indices(rng, n_rows, n, chunk=chunk)
        assert idx.size == n and (np.diff(idx) > 0).all() and (idx.size == 0 or (idx[0] >= 0 and idx[-1] < n_rows))
    # each index equally likely (3 of 10, chunks of 4: the chunks' counts and the draws inside them together)
    hits = np.zeros(10)
    for _ in range(20_000):
        hits[uniform_sorted_indices(rng, 10, 3, chunk=4)] += 1
    p = hits / 20_000
    assert np.abs(p - 0.3).max() < 0.015  # (sd of each frequency 0.0032)


def test_the_statistics_of_more_rows_than_statistics_rows_are_a_samples(dtype):
    X, _ = _blobs(30_000, dtype=dtype)
    full = LandmarkSpectralEmbedding(n_components=5, n_landmarks=300, random_state=0, statistics_rows=None).fit(X)
    part = LandmarkSpectralEmbedding(n_components=5, n_landmarks=300, random_state=0, statistics_rows=10_000).fit(X)
    assert full.n_samples_seen_ == 30_000 and part.n_samples_seen_ == 10_000
    np.testing.assert_array_equal(part.landmarks_, full.landmarks_)  # (the same landmarks: the sample comes after)
    assert part.landmark_degrees_.sum() == pytest.approx(10_000, rel=1e-6)  # (each row's weights sum to 1)
    # a uniform third of the rows: the normalized graph's spectrum as the whole data's, to sampling noise
    np.testing.assert_allclose(part.eigenvalues_[:5], full.eigenvalues_[:5], atol=0.02)
    assert not np.array_equal(part.landmark_degrees_ * 3, full.landmark_degrees_)
    # the statistics are exactly those of some 10,000 distinct rows: Z^T 1 of the sample
    idx = uniform_sorted_indices(np.random.default_rng([_bandwidth_seed(part), 0x5354]), 30_000, 10_000)
    np.testing.assert_allclose(part.landmark_degrees_, part.statistics(X[idx]).degrees, rtol=1e-12)
    # at most statistics_rows rows: every row, as before
    same = LandmarkSpectralEmbedding(n_components=5, n_landmarks=300, random_state=0, statistics_rows=30_000).fit(X)
    np.testing.assert_array_equal(same.landmark_degrees_, full.landmark_degrees_)


def _bandwidth_seed(emb):
    """The first seed the embedding's plan draws (the statistics' sample is seeded from it)."""
    from kernelsketch.utils.validation import check_random_state, derive_seed

    return derive_seed(check_random_state(emb.random_state))


@needs_numba
@pytest.mark.parametrize("std", [0.8, 2.0])
def test_rows_of_settled_cells_get_the_labels_of_the_full_assignment(dtype, std):
    """Settled cells (a convex combination of rows whose nearest centre is one, by a margin) give each row the
    label the full search and assignment give it; overlapping blobs leave many cells unsettled."""
    X, _ = _blobs(60_000, d=3, k=6, std=std, dtype=dtype)
    emb = LandmarkSpectralEmbedding(n_components=6, n_landmarks=400, random_state=0).fit(X)
    C = StreamingKMeans(6, random_state=0).fit(emb.transform(X[:20_000])).cluster_centers_
    settled = emb.settled_cells(C)
    assert 0.05 < (settled >= 0).mean() < 1.0  # (both kinds of cell, so both paths are tested)
    labels, sq, sums, counts = emb.assign_rows(X, C, dtype, settled)
    ref = emb.assign_graph(*emb.graph(X), C, dtype)
    np.testing.assert_array_equal(labels, ref[0])
    np.testing.assert_array_equal(counts, ref[3])
    assert 0 < sq.size < X.shape[0]  # (the settled rows' embeddings were never formed)
    # the votes' assigner (one-hot rows, the identity's centres) settles cells of one landmark label
    clusterer = LandmarkSpectralClustering(6, n_landmarks=400, random_state=0, assign_labels="genie").fit(X)
    votes, km = clusterer.assigner()
    cells = votes.settled_cells(km.cluster_centers_)
    assert (cells >= 0).any()
    np.testing.assert_array_equal(votes.assign_rows(X, km.cluster_centers_, dtype, cells)[0], clusterer.labels_)


@needs_numba
def test_a_settled_cell_needs_every_candidate_inside_one_centres_cell():
    """A landmark is settled to ``h`` only when the rows of all its candidates are nearest to centre ``h``; one whose
    candidates straddle two centres' cells is not (its rows near the boundary could take either label)."""
    X, _ = _blobs(20_000, d=2, k=3, std=2.5)
    emb = LandmarkSpectralEmbedding(n_components=3, n_landmarks=300, random_state=0).fit(X)
    C = StreamingKMeans(3, random_state=0).fit(emb.transform(X)).cluster_centers_
    settled = emb.settled_cells(C)
    P = emb.projection_
    side = (((P[:, None, :] - C[None]) ** 2).sum(axis=2)).argmin(axis=1)
    candidates = emb._searcher_of("approximate").index(emb.n_neighbors).candidates
    mixed = np.array([np.unique(side[c]).size > 1 for c in candidates])
    assert mixed.any() and (settled[mixed] == -1).all()
    kept = settled >= 0
    assert kept.any() and (side[candidates[kept]] == settled[kept, None]).all()


def test_cluster_file_with_a_statistics_sample_labels_as_the_estimator_and_estimates_inertia(tmp_path):
    X, y = _blobs(40_000)
    path = tmp_path / "X.npy"
    np.save(path, X)
    emb = LandmarkSpectralEmbedding(statistics_rows=15_000)
    res = ks.cluster_file(str(path), 5, embedding=emb, random_state=0, init_size=8000)
    model = LandmarkSpectralClustering(5, random_state=0, statistics_rows=15_000, init_size=8000).fit(X)
    np.testing.assert_array_equal(res.labels, model.labels_)
    assert res.statistics_rows == 15_000 and res.center_shift is None and res.to_dict()["statistics_rows"] == 15_000
    # the inertia estimated from k-means' sample: the exact one of every row to within sampling noise
    U = res.clusterer.embedding_.transform(X)
    exact = float(((U - res.kmeans.cluster_centers_[res.labels]) ** 2).sum())
    assert res.inertia == pytest.approx(exact, rel=0.05)
    full = ks.cluster_file(str(path), 5, random_state=0, init_size=8000)
    assert full.statistics_rows is None and full.center_shift is not None
    # k-means' sample is every row: the rows assigned in memory, the inertia exact, the sample still reported
    whole = ks.cluster_file(str(path), 5, embedding=emb, random_state=0, init_size=40_000)
    assert whole.statistics_rows == 15_000 and whole.center_shift is not None
    U = whole.clusterer.embedding_.transform(X)
    exact = float(((U - whole.kmeans.cluster_centers_[whole.labels]) ** 2).sum())
    assert whole.inertia == pytest.approx(exact, rel=1e-4)
    assert adjusted_rand_score(full.labels, res.labels) > 0.99


def test_pieces_of_rows_from_a_text_file_are_collected_in_one_pass(tmp_path):
    """A text file's ``take`` is a pass: the pieces of a sample are collected in one pass, with the rows ``take``
    gives, where a pass per piece would read the file again and again; a memory map takes each piece by index."""
    from kernelsketch.out_of_core.engine import open_engine

    X = np.random.default_rng(3).normal(size=(5000, 3)).round(4)
    path = tmp_path / "X.csv"
    np.savetxt(path, X, delimiter=",", fmt="%.4f")
    np.save(tmp_path / "X.npy", X)
    idx = np.sort(np.random.default_rng(4).choice(5000, 1200, replace=False))
    pieces = [idx[:100], idx[100:700], idx[700:701], idx[701:]]
    engine = open_engine(str(path), block_rows=256)
    assert not engine.source.random_access
    before = engine.stats["passes"]
    got = engine.gather_mapped_pieces(pieces, lambda R, s: (R, s), "state")
    assert engine.stats["passes"] == before + 1
    for (R, s), piece in zip(got, pieces, strict=True):
        assert s == "state"
        np.testing.assert_array_equal(R, X[piece])
    npy = open_engine(str(tmp_path / "X.npy"))
    assert npy.source.random_access
    for R, piece in zip(npy.gather_mapped_pieces(pieces, lambda R, s: R), pieces, strict=True):
        np.testing.assert_array_equal(R, X[piece])
    with pytest.raises(ValueError, match="out of range"):
        open_engine(str(path), block_rows=256).gather_mapped_pieces([np.array([4999, 5000])], lambda R, s: R)


def test_the_next_piece_is_read_while_the_current_one_is_worked_on():
    """A memory map's pieces: each piece's rows are read on a thread while the piece before is searched
    (:func:`~kernelsketch.utils.threads.iter_prefetched` over ``map(gather, pieces)``), the results in order, an
    error from either side raised."""
    import threading

    from kernelsketch.utils.threads import iter_prefetched

    loaded = [threading.Event() for _ in range(4)]

    def load(i):
        loaded[i].set()
        return i, threading.get_ident()

    def work(item):
        i, reader = item
        if i + 1 < len(loaded):  # (read one after the other, this wait would time out)
            assert loaded[i + 1].wait(5), f"piece {i + 1} was not read while piece {i} was worked on"
        return 10 * i, reader

    out = [work(x) for x in iter_prefetched(map(load, range(4)))]
    assert [o[0] for o in out] == [0, 10, 20, 30]
    assert all(o[1] != threading.get_ident() for o in out)  # (read on the other thread)

    def unreadable(i):
        if i == 2:
            raise ValueError("row 2 is unreadable")
        return i

    with pytest.raises(ValueError, match="row 2 is unreadable"):
        list(iter_prefetched(map(unreadable, range(4))))
    with pytest.raises(ZeroDivisionError):
        [1 / (x - 1) for x in iter_prefetched(map(int, range(4)))]
    assert [x + 1 for x in iter_prefetched(map(int, [5]))] == [6]
