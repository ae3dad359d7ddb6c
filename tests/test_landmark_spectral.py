"""Landmark spectral clustering: the exact dense graph, scikit-learn's SpectralClustering, every fitting path."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.datasets import make_blobs, make_circles, make_moons
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch as ks
from kernelsketch.cluster import LandmarkSpectralClustering
from kernelsketch.maps import LandmarkSpectralEmbedding
from kernelsketch.maps.landmark_graph import LandmarkGraph
from kernelsketch.maps.landmark_spectral import GraphWarning


@parametrize_with_checks(
    [
        LandmarkSpectralEmbedding(n_components=2, n_landmarks=20, n_neighbors=3, random_state=0),
        LandmarkSpectralClustering(n_clusters=3, n_landmarks=20, n_neighbors=3, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def dense_graph(X, r, bandwidth=None):
    """The rows-to-rows graph W = Z D^-1 Z^T, built densely from its definition (landmarks = all rows)."""
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    Z = np.zeros_like(D2)
    for i in range(X.shape[0]):
        near = np.argsort(D2[i], kind="stable")[:r]
        h2 = D2[i, near].max() if bandwidth is None else bandwidth**2
        Z[i, near] = np.exp(-D2[i, near] / h2) if h2 > 0 else 1.0
    Z /= Z.sum(axis=1, keepdims=True)
    return Z @ np.diag(1.0 / Z.sum(axis=0)) @ Z.T


@pytest.mark.parametrize("bandwidth", [None, 1.5])
def test_embedding_spans_the_exact_dense_eigenvectors(bandwidth):
    X, _ = make_blobs(120, centers=3, cluster_std=1.0, random_state=0)
    k, r = 3, 8
    W = dense_graph(X, r, bandwidth)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)  # already degree-normalized
    lam, V = np.linalg.eigh(W)
    exact = V[:, -k:]
    est = LandmarkSpectralEmbedding(
        n_components=k, n_landmarks=X.shape[0], n_neighbors=r, bandwidth="local" if bandwidth is None else bandwidth
    ).fit(X)
    np.testing.assert_allclose(est.eigenvalues_[:k], lam[::-1][:k], atol=1e-10)
    U = est.transform(X) / np.sqrt(X.shape[0])  # orthonormal columns
    np.testing.assert_allclose(U.T @ U, np.eye(k), atol=1e-8)
    # the same invariant subspace: the projectors agree
    np.testing.assert_allclose(U @ U.T, exact @ exact.T, atol=1e-8)


def test_same_partition_as_dense_spectral_clustering_when_landmarks_are_all_rows():
    X, _ = make_blobs(200, centers=4, cluster_std=1.5, random_state=3)
    W = dense_graph(X, 10)
    _, V = np.linalg.eigh(W)
    dense = KMeans(4, n_init=10, random_state=0).fit_predict(V[:, -4:])
    ours = LandmarkSpectralClustering(4, n_landmarks=200, random_state=0).fit_predict(X)
    assert adjusted_rand_score(dense, ours) == 1.0


@pytest.mark.parametrize(
    "make", [lambda: make_moons(800, noise=0.06, random_state=1), lambda: make_circles(800, noise=0.05, factor=0.5)]
)
def test_moons_and_circles_as_scikit_learns_spectral_clustering(make):
    X, y = make()
    ref = SpectralClustering(2, affinity="nearest_neighbors", n_neighbors=10, random_state=0).fit_predict(X)
    ours = LandmarkSpectralClustering(2, n_landmarks=300, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, ref) > 0.99
    assert adjusted_rand_score(y, ours) > 0.99
    assert adjusted_rand_score(ref, ours) > 0.99
    assert adjusted_rand_score(y, KMeans(2, n_init=10, random_state=0).fit_predict(X)) < 0.5


def test_predict_labels_new_rows_as_their_neighbours():
    X, y = make_moons(1200, noise=0.05, random_state=2)
    est = LandmarkSpectralClustering(2, n_landmarks=200, random_state=0).fit(X[:1000])
    np.testing.assert_array_equal(est.predict(X[:1000]), est.labels_)
    assert adjusted_rand_score(y[1000:], est.predict(X[1000:])) > 0.95


def test_same_seed_same_labels_and_float32_sparse_agree():
    X, _ = make_blobs(500, centers=3, random_state=0)
    a = LandmarkSpectralClustering(3, n_landmarks=100, random_state=7).fit(X)
    b = LandmarkSpectralClustering(3, n_landmarks=100, random_state=7).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    c = LandmarkSpectralClustering(3, n_landmarks=100, random_state=7).fit(sp.csr_matrix(X))
    assert adjusted_rand_score(a.labels_, c.labels_) == 1.0
    E32 = LandmarkSpectralEmbedding(n_components=3, n_landmarks=100, random_state=7).fit_transform(X.astype(np.float32))
    assert E32.dtype == np.float32


def test_out_of_core_file_equals_in_memory_fit(tmp_path):
    X, _ = make_blobs(3000, centers=5, n_features=6, random_state=1)
    path = tmp_path / "X.npy"
    np.save(path, X)
    for bandwidth in ("local", "median"):
        ref = LandmarkSpectralEmbedding(n_components=5, n_landmarks=300, bandwidth=bandwidth, random_state=0).fit(X)
        res = ks.fit_source(
            LandmarkSpectralEmbedding(n_components=5, n_landmarks=300, bandwidth=bandwidth, random_state=0),
            path,
            block_rows=700,
        )
        np.testing.assert_array_equal(res.estimator.landmark_indices_, ref.landmark_indices_)
        assert res.estimator.bandwidth_ == ref.bandwidth_
        np.testing.assert_allclose(res.estimator.eigenvalues_, ref.eigenvalues_, atol=1e-10)
        # the same eigenvectors up to a basis of each eigenspace: the same projector
        U, V = res.estimator.transform(X[:500]), ref.transform(X[:500])
        np.testing.assert_allclose(U @ U.T, V @ V.T, atol=1e-7)
    # the clusterer: cluster_file (the CLI's driver) gives the in-memory estimator's labels
    labels = LandmarkSpectralClustering(5, random_state=0).fit_predict(X)
    out = ks.cluster_file(path, 5, embedding="spectral", standardize=False, random_state=0, block_rows=700)
    assert adjusted_rand_score(labels, out.labels) == 1.0
    fitted = ks.fit_source(LandmarkSpectralClustering(5, random_state=0), path).estimator
    assert adjusted_rand_score(labels, fitted.predict(X)) == 1.0


def test_the_local_fit_pass_gives_dasks_statistics_bit_for_bit(tmp_path, monkeypatch):
    """The local fit pass adds each block's ``Z^T Z`` to one running matrix in place (beside the next block's
    search): the numbers of the left fold of per-block statistics that Dask's reduce makes of the same blocks,
    so a file read in 700-row blocks and the same rows in 700-row Dask chunks give the same eigenproblem
    exactly, kept graph or not, on the compiled route and on scipy's; the in-memory fit agrees to rounding."""
    distributed = pytest.importorskip("distributed")
    da = pytest.importorskip("dask.array")
    import kernelsketch.kernels.neighbors as nb

    X, _ = make_blobs(3000, centers=5, n_features=6, random_state=1)
    path = tmp_path / "X.npy"
    np.save(path, X)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as client:
        for route, min_products in (("compiled", 0), ("scipy", float("inf"))):
            monkeypatch.setattr(nb, "GRAM_NUMBA_MIN_PRODUCTS", min_products)
            for search in ("approximate", "exact"):
                params = dict(n_components=5, n_landmarks=300, search=search, random_state=0)
                on_dask = ks.fit_source(
                    LandmarkSpectralEmbedding(**params), da.from_array(X, chunks=(700, 6)), client=client
                ).estimator
                for keep in (False, True):
                    res = ks.fit_source(LandmarkSpectralEmbedding(**params), path, block_rows=700, keep_graph=keep)
                    assert (res.graphs is not None) == keep
                    if keep:
                        res.graphs.release()
                    local = res.estimator
                    np.testing.assert_array_equal(local.landmark_degrees_, on_dask.landmark_degrees_, err_msg=route)
                    np.testing.assert_array_equal(local.eigenvalues_, on_dask.eigenvalues_, err_msg=route)
                    np.testing.assert_array_equal(local.projection_, on_dask.projection_, err_msg=route)
                ref = LandmarkSpectralEmbedding(**params).fit(X)
                np.testing.assert_allclose(ref.eigenvalues_, local.eigenvalues_, rtol=1e-10, atol=1e-12)


def test_dask_engine_gives_the_same_labels():
    da = pytest.importorskip("dask.array")
    X, _ = make_blobs(2000, centers=4, n_features=3, random_state=5)
    local = ks.cluster_file(X, 4, random_state=0)
    on_dask = ks.cluster_file(da.from_array(X, chunks=(450, 3)), 4, random_state=0)
    np.testing.assert_array_equal(local.labels, on_dask.labels)


def test_standardize_auto_follows_the_units():
    rng = np.random.default_rng(0)
    same_units = rng.normal(size=(400, 3)) * [1.0, 2.0, 3.0]
    mixed = same_units * [0.01, 1.0, 1000.0]
    assert ks.cluster_file(same_units, 2, random_state=0).scaler is None
    res = ks.cluster_file(mixed, 2, random_state=0)
    assert res.scaler is not None
    np.testing.assert_allclose(res.scaler.scale_, mixed.std(axis=0))
    # (one rule for every named method and raw k-means, issue 62; an estimator object is taken as given)
    assert ks.cluster_file(mixed, 2, embedding="kjl", random_state=0).scaler is not None
    assert ks.cluster_file(mixed, 2, embedding=None, random_state=0).scaler is not None
    assert ks.cluster_file(mixed, 2, embedding=ks.KernelJL(n_components=4, random_state=0)).scaler is None


def test_disconnected_graph_warns():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.01, size=(30, 2)) for c in (0, 10, 20, 30)])  # 4 far-apart groups
    with pytest.warns(GraphWarning, match="4 disconnected parts"):
        LandmarkSpectralClustering(2, n_landmarks=120, n_neighbors=5, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphWarning)
        est = LandmarkSpectralClustering(4, n_landmarks=120, n_neighbors=5, random_state=0).fit(X)
    assert est.embedding_.n_connected_components_ == 4
    assert sorted(np.bincount(est.labels_)) == [30, 30, 30, 30]


def test_a_tiny_global_bandwidth_joins_each_row_to_its_nearest_landmark_instead_of_vanishing():
    # exp(-d^2 / h^2) underflows to 0 for every landmark of a row; the weights, scaled to sum 1, have a limit:
    # all of the row's weight on its nearest landmark -- computed as exp(-(d^2 - d_1^2) / h^2), it is reached
    Y, _ = make_blobs(100, random_state=0)
    emb = LandmarkSpectralEmbedding(n_components=2, n_landmarks=20, bandwidth=1e-8, random_state=0).fit(Y + 0.5)
    Z = emb._affinity(Y + 0.5).toarray()
    nearest_landmark = np.argmin((((Y + 0.5)[:, None, :] - emb.landmarks_[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_allclose(Z[np.arange(100), nearest_landmark], 1.0)
    np.testing.assert_allclose(Z.sum(axis=1), 1.0)
    wide = LandmarkSpectralEmbedding(n_components=2, n_landmarks=20, bandwidth=3.0, random_state=0).fit(Y)
    Zw = wide._affinity(Y)
    d2 = ((Y[:, None, :] - wide.landmarks_[None]) ** 2).sum(-1)
    ref = np.zeros_like(d2)
    for i in range(100):  # the textbook weights, where nothing underflows
        j = np.argsort(d2[i])[:10]
        ref[i, j] = np.exp(-d2[i, j] / 9.0) / np.exp(-d2[i, j] / 9.0).sum()
    np.testing.assert_allclose(Zw.toarray(), ref, rtol=1e-12, atol=1e-15)


def test_bad_input_is_named():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 20, axis=0)  # two distinct points
    with pytest.raises(ValueError, match="too few distinct rows"):
        LandmarkSpectralClustering(3, n_landmarks=40, random_state=0).fit(X)
    Y, _ = make_blobs(100, random_state=0)
    with pytest.raises(ValueError, match="n_clusters=200 must be <= n_samples=100"):
        LandmarkSpectralClustering(200, random_state=0).fit(Y)
    Y[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LandmarkSpectralClustering(2, random_state=0).fit(Y)
    with pytest.raises(ValueError, match="needs 'n_components'"):
        LandmarkSpectralEmbedding().fit(np.ones((5, 2)))


def test_score_stability_chooses_k_without_labels():
    from kernelsketch.cluster.stability import estimator_stability

    X, y = make_blobs(900, centers=[[0, 0], [8, 0], [0, 8], [8, 8]], cluster_std=0.8, random_state=4)
    search = GridSearchCV(
        LandmarkSpectralClustering(n_landmarks=200, random_state=0), {"n_clusters": [2, 3, 4, 5, 6]}, cv=3
    ).fit(X)
    assert search.best_params_["n_clusters"] == 4
    est = LandmarkSpectralClustering(4, n_landmarks=200, random_state=0).fit(X)
    score = est.score(X)
    assert score == estimator_stability(est, X, n_pairs=3, random_state=0) and score > 0.99
    # the spectrum's score is still there, and a sample too small to halve is refused
    assert 0.0 < est.eigengap_score(X) <= 1.0
    with pytest.raises(ValueError, match="two halves of more than n_clusters=4 rows"):
        est.score(X[:9])


def test_cli_cluster_spectral_matches_the_library(tmp_path):
    from kernelsketch.cli.main import main

    X, y = make_moons(1500, noise=0.06, random_state=0)
    np.save(tmp_path / "X.npy", X)
    rc = main(["cluster", str(tmp_path / "X.npy"), "-k", "2", "-o", str(tmp_path / "labels.npy"), "--quiet"])
    assert rc == 0
    labels = np.load(tmp_path / "labels.npy").ravel()
    assert adjusted_rand_score(y, labels) > 0.99
    ref = LandmarkSpectralClustering(2, random_state=0).fit_predict(X)
    assert adjusted_rand_score(ref, labels) == 1.0


def test_the_threaded_nearest_landmark_search_gives_the_single_threaded_graph(monkeypatch):
    # the affinity search runs row tiles on every core; each row depends on itself alone, so the
    # statistics (and the labels) are those of one thread, bit for bit
    import kernelsketch.kernels.neighbors as nb
    import kernelsketch.maps.landmark_spectral as ls

    X = np.random.default_rng(3).normal(size=(6000, 5))
    emb = ls.LandmarkSpectralEmbedding(n_components=4, n_landmarks=300, random_state=0).fit(X[:2000])
    monkeypatch.setattr(nb, "MAX_TILE_ROWS", 256)
    monkeypatch.setattr(nb, "blas_num_threads", lambda: 3)  # many tiles on three threads
    G3, d3, n3 = emb.statistics(X)
    monkeypatch.setattr(nb, "blas_num_threads", lambda: 1)
    G1, d1, n1 = emb.statistics(X)
    assert n3 == n1 == 6000
    assert (G3 != G1).nnz == 0
    np.testing.assert_array_equal(d3, d1)


def test_a_file_clustered_on_one_or_two_threads_gets_the_same_labels(tmp_path):
    """The search's row tiles, the weights' rows and Z^T Z beside the next block's search run on as many threads as
    BLAS has (./dev's test workers have one): the labels and the graph statistics are the same on one and on two."""
    from threadpoolctl import threadpool_limits

    import kernelsketch as ks

    X, _ = make_blobs(30_000, centers=4, n_features=6, random_state=2)
    np.save(tmp_path / "X.npy", X)
    runs = []
    for n in (1, 2):
        with threadpool_limits(n, user_api="blas"):
            runs.append(ks.cluster_file(tmp_path / "X.npy", 4, init_size=5000, block_rows=4096, random_state=0))
    np.testing.assert_array_equal(runs[0].labels, runs[1].labels)
    a, b = (r.clusterer.embedding_.graph_statistics_ for r in runs)
    assert (a.gram != b.gram).nnz == 0 and np.array_equal(a.degrees, b.degrees)


def test_the_approximate_search_gives_the_same_labels_on_every_engine_and_after_saving(tmp_path):
    """`search="approximate"` (issue #38): a row's neighbours depend on that row alone, so in memory, on a
    file read in blocks, on a dask array and through a saved model the labels are the same; and on
    well-separated blobs they are the exact search's clusters."""
    da = pytest.importorskip("dask.array")
    X, y = make_blobs(4000, centers=5, n_features=4, cluster_std=1.0, random_state=8)
    X = X.astype(np.float32)
    np.save(tmp_path / "X.npy", X)

    def emb():
        return LandmarkSpectralEmbedding(n_components=5, n_landmarks=400, search="approximate", random_state=0)

    memory = ks.cluster_file(X, 5, embedding=emb(), random_state=0)
    on_file = ks.cluster_file(tmp_path / "X.npy", 5, embedding=emb(), random_state=0, block_rows=700)
    on_dask = ks.cluster_file(da.from_array(X, chunks=(900, 4)), 5, embedding=emb(), random_state=0)
    np.testing.assert_array_equal(memory.labels, on_file.labels)
    np.testing.assert_array_equal(memory.labels, on_dask.labels)
    ks.save(memory.model, tmp_path / "model.ks")
    loaded = ks.load(tmp_path / "model.ks")
    assert "_searcher_cache" not in vars(loaded[-1].embedding_)  # never saved: rebuilt from the landmarks
    np.testing.assert_array_equal(loaded.predict(X), memory.labels)
    exact = ks.cluster_file(X, 5, embedding=emb().set_params(search="exact"), random_state=0)
    assert adjusted_rand_score(exact.labels, memory.labels) == 1.0
    assert adjusted_rand_score(y, memory.labels) > 0.99
    # the neighbours differ from the exact ones only where the candidate neighbourhood misses one
    fitted = memory.model[-1].embedding_
    g_a = fitted.graph(X)[0]
    g_e = fitted.set_params(search="exact").graph(X)[0]
    assert 0.95 < (np.sort(g_a, 1)[:, :, None] == np.sort(g_e, 1)[:, None, :]).any(2).mean() <= 1.0


def test_the_search_index_is_rebuilt_not_pickled():
    import pickle

    X, _ = make_blobs(2000, centers=3, n_features=3, random_state=9)
    emb = LandmarkSpectralEmbedding(n_components=3, n_landmarks=300, random_state=0).fit(X)
    U = emb.transform(X)  # (3 columns: the approximate search, its index cached)
    assert "_searcher_cache" in vars(emb)
    copy = pickle.loads(pickle.dumps(emb))
    assert "_searcher_cache" not in vars(copy)
    np.testing.assert_array_equal(copy.transform(X), U)


@pytest.mark.parametrize("n_columns", [64, 20])  # the exact search (64 columns), the approximate one (20)
def test_float32_rows_give_float32_weights_and_the_float64_clusters(n_columns):
    from sklearn.datasets import load_digits

    X, _ = load_digits(return_X_y=True)
    X = X[:, :n_columns] + np.random.default_rng(0).normal(0, 0.01, (X.shape[0], n_columns))  # (no exact ties)
    a = LandmarkSpectralClustering(10, random_state=3).fit(X)
    b = LandmarkSpectralClustering(10, random_state=3).fit(X.astype(np.float32))
    assert adjusted_rand_score(a.labels_, b.labels_) > 0.99
    i64, w64 = a.embedding_.graph(X)
    i32, w32 = b.embedding_.graph(X.astype(np.float32))
    assert w64.dtype == np.float64 and w32.dtype == np.float32
    same = (i64 == i32).all(axis=1)  # rows whose neighbours are the same (in the same order)
    assert same.mean() > 0.99
    np.testing.assert_allclose(w32[same], w64[same], rtol=2e-4, atol=1e-6)


# -- the embedding function and the kept statistics (one eigenproblem, k re-solved without a pass) ------------
def _projector(U):
    Q, _ = np.linalg.qr(U)
    return Q @ Q.T


@pytest.mark.parametrize("trivial", ["keep", "drop"])
def test_landmark_embedding_gives_the_dense_affinitys_top_eigenvectors(trivial):
    from kernelsketch.maps.landmark_eigen import GraphStatistics, landmark_embedding

    rng = np.random.default_rng(0)
    n, m, r, k = 200, 30, 4, 3
    Z = np.zeros((n, m))
    for i in range(n):  # a random landmark graph: r landmarks a row, weights summing to 1
        Z[i, rng.choice(m, r, replace=False)] = rng.dirichlet(np.ones(r))
    D = Z.sum(axis=0)
    W = Z @ np.diag(1.0 / D) @ Z.T  # the N x N normalized row affinity
    lam, V = np.linalg.eigh(W)
    lam, V = lam[::-1], V[:, ::-1]
    P, eig, parts = landmark_embedding(GraphStatistics(Z.T @ Z, D, n), k, trivial=trivial)
    U = Z @ P
    np.testing.assert_allclose(U.T @ U / n, np.eye(k), atol=1e-9)  # columns of mean square 1, orthogonal
    top = V[:, 1 : k + 1] if trivial == "drop" else V[:, :k]  # V[:, 0] is the constant (trivial) vector
    np.testing.assert_allclose(_projector(U), _projector(top), atol=1e-8)
    np.testing.assert_allclose(eig, lam[: eig.size], atol=1e-10)
    assert parts == 1


@pytest.mark.parametrize("search", ["exact", "approximate"])
def test_with_components_equals_a_refit_without_a_pass(search, monkeypatch):
    X, _ = make_blobs(1500, centers=5, cluster_std=1.0, random_state=1)
    base = LandmarkSpectralEmbedding(n_components=2, n_landmarks=200, search=search, random_state=0).fit(X)
    for k, trivial in [(5, "keep"), (4, "drop"), (2, "drop")]:
        refit = LandmarkSpectralEmbedding(
            n_components=k, n_landmarks=200, trivial=trivial, search=search, random_state=0
        ).fit(X)
        # no pass over the data: the search is never called
        monkeypatch.setattr(LandmarkGraph, "graph", lambda *a, **kw: pytest.fail("searched"))
        derived = base.with_components(k, trivial=trivial)
        monkeypatch.undo()
        assert derived.n_components == k and derived.trivial == trivial and base.n_components == 2
        np.testing.assert_allclose(derived.eigenvalues_, refit.eigenvalues_, atol=1e-12)
        U, V = derived.transform(X), refit.transform(X)
        np.testing.assert_allclose(_projector(U), _projector(V), atol=1e-8)
    assert base.transform(X).shape == (1500, 2)  # the original is untouched


def test_the_kept_statistics_are_the_graphs_sums_and_survive_saving(tmp_path):
    X, _ = make_blobs(800, centers=3, random_state=0)
    est = LandmarkSpectralEmbedding(n_components=3, n_landmarks=100, search="exact", random_state=0).fit(X)
    Z = est._affinity(X)
    G, degrees, n = est.graph_statistics_
    np.testing.assert_allclose(G.toarray(), (Z.T @ Z).toarray(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(degrees, np.asarray(Z.sum(axis=0)).ravel(), rtol=1e-12)
    assert n == 800 and sp.issparse(G)
    ks.save(est, tmp_path / "emb.ksm")
    loaded = ks.load(tmp_path / "emb.ksm")
    np.testing.assert_array_equal(loaded.graph_gram_.toarray(), est.graph_gram_.toarray())
    np.testing.assert_allclose(loaded.with_components(5).transform(X), est.with_components(5).transform(X))


def test_with_components_refuses_what_the_graph_cannot_carry():
    X = np.repeat(np.arange(4.0)[:, None], 50, axis=0)  # four distinct rows
    est = LandmarkSpectralEmbedding(n_components=2, n_landmarks=20, random_state=0).fit(X)
    with pytest.raises(ValueError, match="rank"):
        est.with_components(8)
    with pytest.raises(ValueError, match="n_components"):
        est.with_components(0)
