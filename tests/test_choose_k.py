"""``n_clusters="auto"`` / ``-k auto``: k chosen without labels from one fit, the embedding re-solved from its
kept statistics (no second pass), the choice reported; impossible combinations refused by name."""

import json

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import kernelsketch as ks
from kernelsketch.cli.main import main
from kernelsketch.cluster.choose_k import AUTO_CRITERION, STABILITY_SAMPLE, choose_n_clusters
from kernelsketch.maps import LandmarkSpectralEmbedding
from kernelsketch.maps.landmark_graph import LandmarkGraph
from kernelsketch.maps.landmark_spectral import graph_warnings_deferred


def _blobs(k, n=4000, seed=0):
    centres = np.array([[0, 0], [10, 0], [0, 10], [10, 10], [20, 20], [20, 0]])[:k]
    return make_blobs(n, centers=centres, cluster_std=1.0, random_state=seed)


@pytest.mark.parametrize("k", [3, 4, 5])
def test_auto_finds_the_number_of_well_separated_clusters(k):
    X, y = _blobs(k)
    est = ks.LandmarkSpectralClustering("auto", n_landmarks=300, random_state=0).fit(X)
    assert est.n_clusters_ == k and est.k_choice_.k == k and est.k_choice_.criterion == AUTO_CRITERION
    assert est.embedding_.n_components == k and est.kmeans_.n_clusters == k
    assert adjusted_rand_score(y, est.labels_) > 0.99
    assert est.k_scores_[:, 0].tolist() == list(range(2, 21))  # every candidate scored
    assert str(est.k_choice_).startswith(f"k = {k}: the ")


def test_auto_makes_no_second_pass_over_the_data_and_matches_the_fit_with_k_given(monkeypatch):
    X, _ = _blobs(4)
    calls = []
    graph = LandmarkGraph.graph

    def counting(self, rows, also=()):
        calls.append(rows.shape[0])
        return graph(self, rows, also)

    monkeypatch.setattr(LandmarkGraph, "graph", counting)
    auto = ks.LandmarkSpectralClustering("auto", n_landmarks=300, search="exact", random_state=0).fit(X)
    searched_auto, calls[:] = sum(calls), []
    given = ks.LandmarkSpectralClustering(4, n_landmarks=300, search="exact", random_state=0).fit(X)
    # the data searched as often as with k given (the fit pass and the embedding); the criterion's own work is on
    # halves of a sample of at most STABILITY_SAMPLE rows (3 splits: 5 searches of a half each), whatever N
    assert 0 <= searched_auto - sum(calls) <= 8 * STABILITY_SAMPLE
    np.testing.assert_allclose(auto.embedding_.eigenvalues_, given.embedding_.eigenvalues_, atol=1e-12)
    assert adjusted_rand_score(given.labels_, auto.labels_) == 1.0


def test_cluster_file_auto_on_a_file_and_the_model_saved(tmp_path):
    X, y = _blobs(5, n=20_000)
    np.save(tmp_path / "X.npy", X)
    res = ks.cluster_file(str(tmp_path / "X.npy"), "auto", random_state=0)
    assert res.n_clusters == 5 and res.k_choice.k == 5 and len(res.cluster_sizes) == 5
    assert adjusted_rand_score(y, res.labels) > 0.99
    assert res.to_dict()["k_choice"]["k"] == 5
    ks.save(res.model, tmp_path / "m.ksm")
    np.testing.assert_array_equal(ks.load(tmp_path / "m.ksm").predict(X[:200]), res.labels[:200])
    fitted = ks.fit_source(ks.LandmarkSpectralClustering("auto", random_state=0), str(tmp_path / "X.npy"))
    assert fitted.estimator.n_clusters_ == 5


def test_auto_needs_the_spectral_embedding():
    X, _ = _blobs(3, n=500)
    with pytest.raises(ValueError, match="auto"):
        ks.cluster_file(X, "auto", embedding="kjl")
    with pytest.raises(ValueError, match="auto"):
        ks.cluster_file(X, "auto", embedding=None)
    with pytest.raises(ValueError, match="n_clusters"):
        ks.cluster_file(X, "many")


def test_the_cli_prints_the_k_chosen_and_why(tmp_path, capsys):
    X, _ = _blobs(4, n=3000)
    np.save(tmp_path / "X.npy", X)
    code = main(["cluster", str(tmp_path / "X.npy"), "-k", "auto", "-o", str(tmp_path / "l.npy"), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["k"] == 4 and out["k_choice"]["criterion"] == AUTO_CRITERION and len(out["cluster_sizes"]) == 4
    code = main(["cluster", str(tmp_path / "X.npy"), "-k", "auto", "-o", str(tmp_path / "m.npy")])
    assert code == 0 and "-k auto chose k = 4: the " in capsys.readouterr().out
    assert main(["cluster", str(tmp_path / "X.npy"), "-k", "auto", "--method", "kmeans", "-o", "x.npy"]) == 2
    assert "spectral" in capsys.readouterr().err


def test_the_other_criteria_and_their_refusals():
    X, _ = _blobs(3, n=3000)
    with graph_warnings_deferred():
        emb = LandmarkSpectralEmbedding(n_components=1, n_landmarks=300, random_state=0).fit(X)
    assert choose_n_clusters(emb, criterion="two").k == 2
    assert choose_n_clusters(emb, X, criterion="stability", k_max=6).k == 3
    assert choose_n_clusters(emb, criterion="eigengap").k == 3
    with pytest.raises(ValueError, match="criterion"):
        choose_n_clusters(emb, criterion="silhouette")
    with pytest.raises(ValueError, match="sample"):
        choose_n_clusters(emb, criterion="stability")
    with pytest.raises(ValueError, match="k_max"):
        choose_n_clusters(emb, k_max=1)


def test_the_stability_sample_and_splits_are_the_callers(monkeypatch):
    """``stability_sample`` / ``stability_splits`` reach the criterion (the cheaper variants the pool protocol
    compared); the defaults are what ``"auto"`` ships; impossible values are refused by name."""
    import kernelsketch.cluster.stability as stability

    X, _ = _blobs(4, n=3000)
    seen = []
    real = stability.clustering_stability

    def spy(S, ks, *, n_pairs, random_state):
        seen.append((S.shape[0], n_pairs))
        return real(S, ks, n_pairs=n_pairs, random_state=random_state)

    monkeypatch.setattr(stability, "clustering_stability", spy)
    assert choose_n_clusters(None, X, k_max=8).k == 4
    cheap = choose_n_clusters(None, X, k_max=8, stability_sample=1000, stability_splits=1)
    assert sorted(cheap.scores) == list(range(2, 9))  # (one split can rate a wrong k as stable: the protocol's point)
    assert seen == [(STABILITY_SAMPLE, 3), (1000, 1)]
    for bad in ({"stability_sample": 2}, {"stability_splits": 0}):
        with pytest.raises(ValueError, match="stability_s"):
            choose_n_clusters(None, X, **bad)
