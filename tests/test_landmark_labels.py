"""Genie on the landmarks and the labeling of lower normalized cut (``assign_labels``): Genie against the reference
implementation and single linkage, the cut and the vote against dense computations, the default clustering's
choice on a pool set where the two labelings differ, and every assignment path giving the same labels."""

import gzip
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst
from scipy.spatial.distance import pdist, squareform
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import kernelsketch as ks
from kernelsketch.cluster.genie import genie_labels, minimum_spanning_tree
from kernelsketch.cluster.landmark_labels import (
    LabelingContext,
    choose_labeling,
    near_neighbor_dunn,
    normalized_cut,
    vote_labels,
)


def _choose(indices, weights, landmarks, kmeans_labels, k, rule="auto", rows=None):
    context = LabelingContext(indices, weights, landmarks, np.asarray(kmeans_labels), k, rows=rows)
    return choose_labeling(context, rule)


POOL = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "clustering-benchmarks"


def _random_sets(n_sets, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_sets):
        n, d, k = int(rng.integers(30, 400)), int(rng.integers(2, 6)), int(rng.integers(1, 9))
        X = rng.standard_normal((n, d)) * rng.random(d) + (rng.random((n, 1)) > 0.7) * 4.0
        yield X, k


def test_genie_gives_the_reference_implementations_labels():
    genieclust = pytest.importorskip("genieclust", reason="genieclust (pip install genieclust) is the reference")
    for i, (X, k) in enumerate(_random_sets(30)):
        g = (0.1, 0.3, 0.5, 1.0)[i % 4]
        ref = genieclust.Genie(n_clusters=k, gini_threshold=g).fit_predict(X)
        assert adjusted_rand_score(ref, genie_labels(X, k, gini_threshold=g)) == 1.0, (i, X.shape, k, g)


def test_the_compiled_merges_are_the_numpy_loops_including_ties(monkeypatch):
    """Genie's compiled merge loop (used where numba is loaded) makes the NumPy loop's merges, in its order: the same
    owners and sizes on random trees, with tied weights and every threshold; without numba loaded, the NumPy loop."""
    pytest.importorskip("numba")
    import kernelsketch.cluster.genie as genie
    from kernelsketch.cluster._genie_numba import merges

    rng = np.random.default_rng(5)
    for trial in range(120):
        m, d = int(rng.integers(2, 300)), int(rng.integers(1, 4))
        X = rng.normal(size=(m, d))
        if trial % 3 == 0:
            X = np.round(X, 1)  # tied edge weights and coincident rows
        k, g = int(rng.integers(1, m + 1)), float((0.0, 0.1, 0.3, 0.5, 1.0)[trial % 5])
        u, v, _ = minimum_spanning_tree(X)
        loops = [(np.arange(m), np.ones(m, dtype=np.int64)) for _ in range(2)]
        genie._merges(u, v, k, g, *loops[0])
        merges(u, v, k, g, *loops[1])
        for a, b in zip(*loops, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"trial {trial}: m={m}, k={k}, g={g}")
    X = rng.normal(size=(200, 3))
    assert genie._compiled_merges() is merges  # (numba is loaded here)
    compiled = genie_labels(X, 4)
    monkeypatch.delitem(sys.modules, "numba")
    assert genie._compiled_merges() is None
    np.testing.assert_array_equal(genie_labels(X, 4), compiled)


def test_genie_at_threshold_one_is_single_linkage():
    for X, k in _random_sets(20, seed=1):
        single = fcluster(linkage(X, method="single"), k, criterion="maxclust")
        assert adjusted_rand_score(single, genie_labels(X, k, gini_threshold=1.0)) == 1.0


def test_genie_merges_a_far_point_early_where_single_linkage_isolates_it():
    X, y = make_blobs(300, centers=[[0, 0], [6, 0]], cluster_std=0.6, random_state=0)
    X = np.vstack([X, [[0, 40]]])
    single = genie_labels(X, 2, gini_threshold=1.0)
    assert np.bincount(single).min() == 1  # the far point alone
    assert adjusted_rand_score(y, genie_labels(X, 2)[:300]) > 0.99


def test_the_spanning_tree_is_minimal_and_joins_coincident_rows():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 3))
    assert np.isclose(minimum_spanning_tree(X)[2].sum(), scipy_mst(squareform(pdist(X))).sum())
    X[10] = X[11]  # coincident rows: an edge of weight 0, the rest the tree of the other 199 rows
    u, v, w = minimum_spanning_tree(X)
    D = squareform(pdist(X))
    assert u.size == 199 and np.all(np.diff(w) >= 0) and w[0] == 0.0 and {u[0], v[0]} == {10, 11}
    assert np.allclose(D[u, v], w)
    assert np.isclose(w.sum(), scipy_mst(squareform(pdist(np.delete(X, 10, axis=0)))).sum())
    parent = np.arange(200)  # a spanning tree: one component

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for a, b in zip(u, v, strict=True):
        parent[root(a)] = root(b)
    assert len({root(a) for a in range(200)}) == 1


def _random_graph(n=80, m=15, r=4, seed=3):
    rng = np.random.default_rng(seed)
    idx = np.array([rng.choice(m, r, replace=False) for _ in range(n)])
    w = rng.random((n, r))
    w /= w.sum(axis=1, keepdims=True)
    Z = np.zeros((n, m))
    np.put_along_axis(Z, idx, w, axis=1)
    return idx, w, Z


def test_the_normalized_cut_and_the_vote_equal_dense_computations():
    idx, w, Z = _random_graph()
    W = Z @ np.diag(1.0 / Z.sum(axis=0)) @ Z.T
    labels = np.random.default_rng(4).integers(0, 3, Z.shape[0])
    dense = sum(W[labels == c][:, labels != c].sum() / W[labels == c].sum() for c in range(3))
    assert np.isclose(normalized_cut(idx, w, Z.shape[1], labels), dense)
    assert normalized_cut(idx, w, Z.shape[1], np.zeros(Z.shape[0])) == 0.0  # one cluster cuts nothing
    landmark_labels = np.random.default_rng(5).integers(0, 3, Z.shape[1])
    votes = Z @ np.eye(3)[landmark_labels]
    assert np.array_equal(vote_labels(idx, w, landmark_labels, 3), votes.argmax(axis=1))


def test_auto_keeps_the_partition_of_lower_cut():
    idx, w, Z = _random_graph(seed=6)
    L = np.random.default_rng(7).standard_normal((Z.shape[1], 2))
    km = np.random.default_rng(8).integers(0, 2, Z.shape[0])
    chosen, scores = _choose(idx, w, L, km, 2, "cut")
    cuts, filled = scores["cut"], scores["clusters"]
    assert set(cuts) == {"kmeans", "genie"} and filled == {"kmeans": 2, "genie": 2}
    assert chosen.name == min(cuts, key=lambda c: (cuts[c], c != "kmeans"))
    genie = _choose(idx, w, L, km, 2, "genie")[0]
    assert np.array_equal(genie.landmark_labels, genie_labels(L, 2))
    assert np.array_equal(genie.labels, vote_labels(idx, w, genie_labels(L, 2), 2))
    kmeans = _choose(idx, w, L, km, 2, "kmeans")[0]
    assert kmeans.name == "kmeans" and kmeans.landmark_labels is None and np.array_equal(kmeans.labels, km)
    with pytest.raises(ValueError, match="assign_labels"):
        _choose(idx, w, L, km, 2, "vote")


def _pool_set(group, name):
    path = POOL / group / f"{name}.data.gz"
    if not path.exists():
        pytest.skip(f"{path} missing: the clustering benchmark pool is in ../shared/datasets (see its SOURCE.md)")
    with gzip.open(path) as fh:
        X = np.loadtxt(fh, ndmin=2)
    with gzip.open(POOL / group / f"{name}.labels0.gz") as fh:
        y = np.loadtxt(fh, dtype=np.int64)
    return X, y


def test_the_default_follows_the_flame_where_k_means_on_the_embedding_cuts_it():
    """sipu/flame (a crescent around a blob, joined by a thin bridge): the embedding's k-means cuts across both
    (ARI .42 in the pool); Genie on the landmarks follows them, its partition has the lower cut, and the default
    keeps it."""
    X, y = _pool_set("sipu", "flame")
    res = ks.cluster_file(X, 2, random_state=0)
    assert res.clusterer.labeling_ == "genie"
    assert res.clusterer.normalized_cuts_["genie"] < res.clusterer.normalized_cuts_["kmeans"]
    assert adjusted_rand_score(y, res.labels) > 0.95
    kmeans = ks.cluster_file(X, 2, random_state=0, assign_labels="kmeans")
    assert kmeans.clusterer.labeling_ == "kmeans" and adjusted_rand_score(y, kmeans.labels) < 0.5
    # the in-memory estimator and its predict agree with the driver
    est = ks.LandmarkSpectralClustering(2, random_state=0).fit(X)
    assert np.array_equal(est.labels_, res.labels) and np.array_equal(est.predict(X), res.labels)


def test_every_assignment_path_gives_the_votes(tmp_path):
    """With the votes chosen: a file larger than k-means' sample (the streamed pass, kept graph or searched again),
    predict, and a saved and loaded model give the same labels."""
    X, y = make_blobs(6000, centers=[[0, 0], [8, 0], [0, 8]], cluster_std=1.0, random_state=1)
    np.save(tmp_path / "X.npy", X)
    kept = ks.cluster_file(tmp_path / "X.npy", 3, init_size=2000, assign_labels="genie", random_state=0)
    again = ks.cluster_file(
        tmp_path / "X.npy", 3, init_size=2000, assign_labels="genie", keep_graph=False, lloyd_passes=2, random_state=0
    )
    assert kept.clusterer.labeling_ == "genie" and again.passes == 0  # (no centres to move)
    assert np.array_equal(kept.labels, again.labels) and adjusted_rand_score(y, kept.labels) > 0.99
    assert np.array_equal(kept.model.predict(X), kept.labels)
    ks.save(kept.model, tmp_path / "m.ksm")
    loaded = ks.load(tmp_path / "m.ksm")
    assert loaded[-1].labeling_ == "genie" and np.array_equal(loaded.predict(X), kept.labels)


def test_assign_labels_is_refused_by_name():
    with pytest.raises(ValueError, match="assign_labels"):
        ks.LandmarkSpectralClustering(2, assign_labels="vote").fit(np.random.default_rng(0).normal(size=(50, 2)))
    with pytest.raises(ValueError, match="assign_labels"):
        ks.cluster_file(np.random.default_rng(0).normal(size=(50, 2)), 2, assign_labels="vote")


def _survey_rows():
    """Survey-like answers: three combinations of two yes/no questions 5,000 times each, the fourth 10 times."""
    return np.repeat(np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]), [5000, 5000, 5000, 10], axis=0)


def test_a_partition_with_an_empty_cluster_is_not_kept_while_the_other_has_k():
    # Genie's vote leaves the fourth (10-row) group without a cluster, and its cut is the lower: an empty cluster
    # has no term in the cut.  The rule keeps the partition with all four.
    X = _survey_rows()
    est = ks.cluster.LandmarkSpectralClustering(4, random_state=0).fit(X)
    assert est.labeling_ == "kmeans" and est.normalized_cuts_["genie"] < est.normalized_cuts_["kmeans"]
    assert np.bincount(est.labels_, minlength=4).min() > 0 and est.n_clusters_ == 4
    res = ks.cluster_file(X, 4, random_state=0)
    assert adjusted_rand_score(est.labels_, res.labels) == 1.0 and res.cluster_sizes.min() > 0


def test_the_rule_counts_non_empty_clusters_before_cuts():
    indices = np.array([[0, 1], [1, 0], [2, 3], [3, 2]])
    weights = np.array([[0.9, 0.1], [0.9, 0.1], [0.5, 0.5], [0.5, 0.5]])
    landmarks = np.array([[0.0], [1.0], [5.0], [5.1]])
    # k-means' labels with one of three clusters empty: Genie's three-way split of the landmarks is kept,
    # though its cut (two rows cut apart) is higher
    chosen, scores = _choose(indices, weights, landmarks, [0, 0, 1, 1], 3, "cut")
    assert scores["cut"]["kmeans"] < scores["cut"]["genie"] and scores["clusters"] == {"kmeans": 2, "genie": 3}
    assert chosen.name == "genie" and np.unique(chosen.labels).size == 3


def test_fewer_clusters_than_asked_warns_naming_the_labeling_and_counts_them():
    X = _survey_rows()
    with pytest.warns(ks.out_of_core.EmptyClusterWarning, match=r"1 of 4 clusters are empty.*Genie's partition"):
        est = ks.cluster.LandmarkSpectralClustering(4, assign_labels="genie", random_state=0).fit(X)
    assert est.n_clusters_ == np.unique(est.labels_).size == 3
    assert adjusted_rand_score(est.labels_, est.predict(X)) == 1.0  # predict still reads the four-column vote
    with pytest.warns(ks.out_of_core.EmptyClusterWarning, match="assign_labels='kmeans'"):
        res = ks.cluster_file(X, 4, assign_labels="genie", random_state=0)
    assert res.clusterer.n_clusters_ == 3 and (res.cluster_sizes == 0).sum() == 1


def test_the_command_line_shows_empty_clusters_under_quiet_and_in_json(tmp_path):
    import json
    import subprocess
    import sys

    path = tmp_path / "survey.csv"
    np.savetxt(path, _survey_rows(), delimiter=",", header="a,b", comments="", fmt="%g")
    argv = [sys.executable, "-m", "kernelsketch.cli", "cluster", str(path), "-k", "4", "--assign-labels", "genie"]
    out = subprocess.run([*argv, "-q", "--json"], capture_output=True, text=True, check=True)
    assert "EmptyClusterWarning" in out.stderr and "1 of 4 clusters are empty" in out.stderr
    (warned,) = [w for w in json.loads(out.stdout)["warnings"] if w["category"] == "EmptyClusterWarning"]
    assert "Genie's partition" in warned["message"]
    quiet = subprocess.run([*argv, "-q"], capture_output=True, text=True, check=True)
    assert "1 of 4 clusters are empty" in quiet.stderr and not quiet.stdout
    default = subprocess.run(argv[:-2], capture_output=True, text=True, check=True)  # (the default rule)
    assert "labels: k-means on the spectral embedding (normalized cut" in default.stdout
    assert "Genie left a cluster empty)" in default.stdout  # why the higher cut was kept


def test_the_near_neighbour_dunn_index_is_the_reference_implementations():
    genieclust = pytest.importorskip("genieclust", reason="genieclust (pip install genieclust) is the reference")
    from genieclust.cluster_validity import dunnowa_index

    for i, (X, k) in enumerate(_random_sets(20, seed=3)):
        y = np.random.default_rng(i).integers(0, max(k, 2), X.shape[0]) if i % 2 else genie_labels(X, max(k, 2))
        y = np.unique(y, return_inverse=True)[1]
        ref = dunnowa_index(np.ascontiguousarray(X), y, M=25, owa_numerator="Min", owa_denominator="Max")
        assert np.isclose(near_neighbor_dunn(X, y, 25), ref), (i, X.shape)
    del genieclust


def test_the_dunn_index_against_a_dense_computation():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((120, 3)) + (rng.random((120, 1)) > 0.5) * 4
    y = (X[:, 0] > 2).astype(int)
    D = squareform(pdist(X))
    np.fill_diagonal(D, np.inf)
    nn = np.argsort(D, axis=1)[:, :10]  # (no ties in continuous data)
    near = np.take_along_axis(D, nn, axis=1)
    cross = y[nn] != y[:, None]
    assert np.isclose(near_neighbor_dunn(X, y, 10), near[cross].min() / near[~cross].max())
    assert near_neighbor_dunn(X, np.zeros(120, int), 10) == np.inf  # nothing crosses


def test_every_rule_gives_labels_the_assignment_reproduces():
    # whichever partition a rule keeps, predict and the file path give the same labels as the fit
    X, y = make_blobs(3000, centers=[[0, 0], [6, 0], [0, 6], [6, 6]], cluster_std=0.8, random_state=0)
    for rule in ("cut", "dunn", "dunn_sample", "genie"):
        est = ks.cluster.LandmarkSpectralClustering(4, assign_labels=rule, random_state=0).fit(X)
        assert adjusted_rand_score(y, est.labels_) > 0.95, rule
        assert np.array_equal(est.predict(X), est.labels_), rule
        res = ks.cluster_file(X, 4, assign_labels=rule, random_state=0)
        assert res.clusterer.labeling_ == est.labeling_ and adjusted_rand_score(est.labels_, res.labels) == 1.0, rule
        assert set(est.labeling_scores_["clusters"]) == set(est.normalized_cuts_), rule


def test_genie_on_a_sample_labels_each_landmark_by_its_nearest_sample_row():
    from kernelsketch.cluster.landmark_labels import CANDIDATES, JUDGED_ROWS

    X, _ = make_blobs(JUDGED_ROWS + 700, centers=3, random_state=1)
    est = ks.LandmarkSpectralEmbedding(n_components=3, n_landmarks=200, random_state=0).fit(X)
    _, (indices, weights) = est.transform_with_graph(X)
    context = LabelingContext(indices, weights, est.landmarks_, np.zeros(X.shape[0], int), 3, rows=X, random_state=4)
    judged = context.judged
    assert judged.size == JUDGED_ROWS and np.all(np.diff(judged) > 0)  # a bounded, sorted uniform subsample
    labeling = CANDIDATES["genie_sample"](context)
    sample = genie_labels(X[judged], 3)
    nearest = np.argmin(((est.landmarks_[:, None, :] - X[judged][None]) ** 2).sum(-1), axis=1)
    assert np.array_equal(labeling.landmark_labels, sample[nearest])
    assert np.array_equal(labeling.labels, vote_labels(indices, weights, sample[nearest], 3))
