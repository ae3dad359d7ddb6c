"""Searcher objects (kernels/search.py): ``build(points)`` then ``search(X, r)``, ours and a user's.

A user's searcher passed as ``search=`` is used by the fit, the k-means seeding and the assignment pass, and
gives the exact search's labels on well-separated data; a searcher that answers out of contract is refused by
name; faiss (when installed) is held to ARI >= .99 against the exact search.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import kernelsketch as ks
from kernelsketch.kernels.neighbors import nearest
from kernelsketch.kernels.search import ApproximateSearch, ExactSearch, FaissSearch, Searcher, checked_search


class BruteForce:
    """A user's searcher: every distance by differences, rows returned in *descending* order (unsorted input)."""

    def __init__(self):
        self.builds, self.searched_rows = 0, 0

    def build(self, points):
        self.points = np.asarray(points, dtype=np.float64)
        self.builds += 1
        return self

    def search(self, X, r):
        X = np.asarray(X, dtype=np.float64)
        D = ((X[:, None, :] - self.points[None, :, :]) ** 2).sum(axis=2)
        idx = np.argsort(D, axis=1, kind="stable")[:, :r][:, ::-1]
        self.searched_rows += X.shape[0]
        BruteForce.total_rows += X.shape[0]
        return np.take_along_axis(D, idx, axis=1), idx

    total_rows = 0


NO_FAISS = "faiss is optional (pip install faiss-cpu, or kernelsketch[faiss]; ./dev installs it)"


def _blobs(n=3000, seed=0):
    return make_blobs(n, centers=[[0, 0], [8, 0], [0, 8], [8, 8]], cluster_std=1.0, random_state=seed)


def test_our_searchers_follow_the_protocol_and_agree_with_nearest():
    rng = np.random.default_rng(0)
    L, X = rng.normal(size=(300, 3)), rng.normal(size=(1000, 3))
    d_ref, i_ref = nearest(X, L, 5)
    for s in (ExactSearch(), ApproximateSearch(), BruteForce()):
        assert isinstance(s, Searcher)
        d2, idx = checked_search(s.build(L), X, 5, 300, np.float64)
        recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(idx, i_ref, strict=True)])
        assert recall == 1.0 if not isinstance(s, ApproximateSearch) else recall > 0.9
        assert np.all(np.diff(d2, axis=1) >= 0)  # each row ascending, whatever the searcher returned
        if recall == 1.0:
            np.testing.assert_allclose(d2, d_ref, rtol=1e-9, atol=1e-12)


def test_a_users_searcher_is_used_by_fit_seeding_and_assignment_with_the_exact_labels(tmp_path):
    X, y = _blobs()
    exact = ks.LandmarkSpectralClustering(4, n_landmarks=200, search="exact", random_state=0).fit(X)
    BruteForce.total_rows = 0
    user = BruteForce()
    est = ks.LandmarkSpectralClustering(4, n_landmarks=200, search=user, random_state=0).fit(X)
    assert user.builds == 0 and user.searched_rows == 0  # the parameter itself is never built or changed
    assert BruteForce.total_rows >= 2 * X.shape[0]  # the fit pass and the assignment (transform) searched
    assert adjusted_rand_score(exact.labels_, est.labels_) > 0.99 and adjusted_rand_score(y, est.labels_) > 0.99
    # the k-means on the embedding takes it too: its centres' search is the user's
    assert est.kmeans_.search is user
    # cluster_file: the fit pass, the k-means seeding and the streamed assignment pass all search with it
    np.save(tmp_path / "X.npy", X)
    BruteForce.total_rows = 0
    emb = ks.LandmarkSpectralEmbedding(n_components=4, n_landmarks=200, search=BruteForce(), random_state=0)
    res = ks.cluster_file(str(tmp_path / "X.npy"), 4, embedding=emb, keep_graph=False, random_state=0)
    assert BruteForce.total_rows >= 2 * X.shape[0]
    assert adjusted_rand_score(y, res.labels) > 0.99


def test_a_users_searcher_in_the_kmeans_landmark_selection_and_streaming_kmeans():
    X, y = _blobs()
    BruteForce.total_rows = 0
    est = ks.LandmarkSpectralClustering(4, n_landmarks=100, landmarks="kmeans", search=BruteForce(), random_state=0)
    assert adjusted_rand_score(y, est.fit_predict(X)) > 0.99
    ref = ks.StreamingKMeans(4, random_state=0).fit(X)
    km = ks.StreamingKMeans(4, search=BruteForce(), random_state=0).fit(X)
    assert adjusted_rand_score(ref.labels_, km.labels_) > 0.99
    np.testing.assert_allclose(km.inertia_, ref.inertia_, rtol=1e-6)
    np.testing.assert_array_equal(km.predict(X[:50]), km.labels_[:50])


class _Bad:
    def __init__(self, answer):
        self.answer = answer

    def build(self, points):
        self.m = len(points)
        return self

    def search(self, X, r):
        return self.answer(X.shape[0], r, self.m)


@pytest.mark.parametrize(
    "answer,match",
    [
        (lambda n, r, m: (np.zeros((n, r + 1)), np.zeros((n, r + 1), int)), "must return two"),
        (lambda n, r, m: (np.zeros((n, r)), np.full((n, r), -1)), "outside"),
        (lambda n, r, m: (np.zeros((n, r)), np.full((n, r), m)), "outside"),
        (lambda n, r, m: (np.full((n, r), np.nan), np.zeros((n, r), int)), "non-finite"),
        (lambda n, r, m: (-np.ones((n, r)), np.zeros((n, r), int)), "negative"),
        (lambda n, r, m: (np.zeros((n, r)), np.zeros((n, r))), "integers"),
    ],
    ids=["shape", "minus-one", "past-m", "nan", "negative", "float-indices"],
)
def test_a_searcher_out_of_contract_is_refused_by_name(answer, match):
    X, _ = _blobs(500)
    with pytest.raises((ValueError, TypeError), match=match):
        ks.LandmarkSpectralClustering(4, n_landmarks=50, search=_Bad(answer), random_state=0).fit(X)


def test_a_non_searcher_is_refused():
    with pytest.raises((ValueError, TypeError), match="search"):
        ks.LandmarkSpectralClustering(4, search=object()).fit(_blobs(200)[0])


def test_saving_a_model_with_a_users_searcher_says_why_not(tmp_path):
    est = ks.LandmarkSpectralClustering(4, n_landmarks=50, search=BruteForce(), random_state=0).fit(_blobs(400)[0])
    with pytest.raises(TypeError, match="search"):
        ks.save(est, tmp_path / "m.ksm")


def test_faiss_gives_the_exact_searchs_labels():
    pytest.importorskip("faiss", reason=NO_FAISS)
    import pickle

    X, y = _blobs()
    rng = np.random.default_rng(0)
    L = X[rng.choice(len(X), 300, replace=False)]
    _, i_ref = nearest(X, L, 10)
    _, idx = checked_search(FaissSearch().build(L), X, 10, 300, np.float64)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(idx, i_ref, strict=True)])
    assert recall > 0.999, f"faiss recall {recall:.4f}"
    exact = ks.LandmarkSpectralClustering(4, n_landmarks=200, search="exact", random_state=0).fit(X)
    est = ks.LandmarkSpectralClustering(4, n_landmarks=200, search=FaissSearch(), random_state=0).fit(X)
    assert adjusted_rand_score(exact.labels_, est.labels_) > 0.99
    copy = pickle.loads(pickle.dumps(est.embedding_))  # a Dask worker gets it pickled: the index is rebuilt
    np.testing.assert_array_equal(copy.transform(X[:100]), est.embedding_.transform(X[:100]))


def test_cli_search_faiss_saves_a_model_that_predicts_the_same_labels(tmp_path, capsys):
    """``--search faiss``: every search of the run in faiss, the model saved with it (the index rebuilt on load)."""
    pytest.importorskip("faiss", reason=NO_FAISS)
    from kernelsketch.cli.main import main

    X, y = _blobs()
    path, out, model = tmp_path / "X.npy", tmp_path / "labels.npy", tmp_path / "m.ksm"
    np.save(path, X)
    assert main(["cluster", str(path), "-k", "4", "--search", "faiss", "-o", str(out), "--save", str(model)]) == 0
    assert adjusted_rand_score(y, np.load(out)) > 0.99
    loaded = ks.load(model)
    assert isinstance(loaded[-1].embedding_.search, FaissSearch)
    np.testing.assert_array_equal(loaded.predict(X), np.load(out))
