"""StreamingKMeans: Lloyd's fixed points (scikit-learn's), block passes, mini-batch updates, estimator checks."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelsketch.cluster import StreamingKMeans
from kernelsketch.datasets import load_dataset
from kernelsketch.datasets._testing import require_shared_data
from kernelsketch.kernels.lloyd import _lloyd_in_memory, assign_with_statistics, lloyd_statistics
from kernelsketch.maps import KernelJL


@parametrize_with_checks(
    [StreamingKMeans(3, random_state=0), StreamingKMeans(2, init_size=20, max_iter=5, random_state=0)]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _blobs(n=3000, k=5, d=6, seed=0, std=1.0):
    X, y = make_blobs(n_samples=n, centers=k, n_features=d, cluster_std=std, random_state=seed)
    return X, y


def test_lloyd_statistics_add_up_over_any_blocking():
    X, _ = _blobs(n=1000)
    C = X[:5]
    whole = lloyd_statistics(X, C)
    parts = [lloyd_statistics(X[a:b], C) for a, b in [(0, 7), (7, 500), (500, 1000)]]
    np.testing.assert_allclose(sum(p[0] for p in parts), whole[0], rtol=1e-12)
    np.testing.assert_array_equal(sum(p[1] for p in parts), whole[1])
    assert sum(p[2] for p in parts) == pytest.approx(whole[2], rel=1e-12)
    # against a direct computation
    D = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    lab = D.argmin(axis=1)
    np.testing.assert_array_equal(whole[1], np.bincount(lab, minlength=5))
    np.testing.assert_allclose(whole[0], np.array([X[lab == j].sum(axis=0) for j in range(5)]), rtol=1e-12)
    assert whole[2] == pytest.approx(D.min(axis=1).sum(), rel=1e-10)
    labels, dist, _, _ = assign_with_statistics(X, C)
    np.testing.assert_array_equal(labels, lab)
    np.testing.assert_allclose(dist, D.min(axis=1), rtol=1e-9, atol=1e-9)


def test_sparse_statistics_equal_dense():
    X, _ = _blobs(n=400, d=5)
    X[X < 0] = 0.0
    C = X[:4]
    dense, sparse = lloyd_statistics(X, C), lloyd_statistics(sp.csr_matrix(X), C)
    np.testing.assert_allclose(sparse[0], dense[0], rtol=1e-12)
    np.testing.assert_array_equal(sparse[1], dense[1])


def _sklearn_same_init(X, k, seed):
    init, _ = kmeans_plusplus(X, k, random_state=seed)
    ref = KMeans(k, init=init, n_init=1, max_iter=300, tol=1e-4).fit(X)
    tol = 1e-4 * np.mean(np.var(X, axis=0))
    centers, inertia, n_iter = _lloyd_in_memory(X, init, max_iter=300, tol_abs=tol)
    labels, _, _, _ = assign_with_statistics(X, centers)
    return ref, labels, centers, inertia


@pytest.mark.parametrize(("seed", "k"), [(0, 8), (1, 8), (2, 8), (3, 8), (0, 150)])
def test_lloyd_with_bounds_reaches_sklearns_fixed_point(seed, k):
    # Hamerly's bounds only skip distance computations: same iterates as plain Lloyd (k = 150: the
    # centres' separations from one GEMM, lowered by its rounding bound, as for k-means landmarks)
    X, _ = _blobs(n=4000, k=8, d=10, seed=seed, std=3.0)  # overlapping blobs: many iterations
    ref, labels, centers, inertia = _sklearn_same_init(X, k, seed)
    assert adjusted_rand_score(ref.labels_, labels) == 1.0
    np.testing.assert_allclose(centers, ref.cluster_centers_, rtol=1e-9, atol=1e-9)
    assert inertia == pytest.approx(ref.inertia_, rel=1e-10)


@pytest.mark.data
@pytest.mark.parametrize("name", ["banknote", "avila", "cpu"])
def test_same_fixed_point_as_sklearn_on_shared_data_embeddings(name):
    # k-means local optima depend on the start: from the same k-means++ start,
    # Lloyd here and in scikit-learn must end in the same partition
    if name != "banknote":
        require_shared_data(name)
    X, y = load_dataset(name)
    X = StandardScaler().fit_transform(X)
    k = 12 if name == "avila" else (2 if name == "banknote" else 8)
    Z = KernelJL(n_components=10 * k, random_state=0).fit_transform(X)
    for seed in (0, 1):
        ref, labels, _, inertia = _sklearn_same_init(Z, k, seed)
        assert adjusted_rand_score(ref.labels_, labels) >= 0.999
        assert inertia == pytest.approx(ref.inertia_, rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_fit_agrees_with_sklearn_kmeans_on_blobs(seed):
    X, y = _blobs(n=5000, k=6, d=8, seed=seed)
    ref = KMeans(6, n_init=10, random_state=seed).fit(X)
    km = StreamingKMeans(6, random_state=seed).fit(X)
    assert adjusted_rand_score(ref.labels_, km.labels_) >= 0.99
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-3)
    np.testing.assert_array_equal(km.predict(X), km.labels_)
    assert km.score(X) == pytest.approx(-km.inertia_, rel=1e-10)


def test_sample_seeding_then_block_passes_equal_full_lloyd():
    # fit with a sample smaller than X: the passes are exact Lloyd iterations, so the
    # result is the full-data fixed point reached from the sample's centres
    X, _ = _blobs(n=6000, k=7, d=5, seed=3, std=2.5)
    km = StreamingKMeans(7, init_size=600, max_iter=300, tol=0.0, random_state=0)
    km.fit(X)
    start = StreamingKMeans(7, init_size=600, random_state=0)
    rng = np.random.default_rng(0)
    start.seed(X[start.sample_indices(len(X), rng)], rng)
    ref = KMeans(7, init=start.cluster_centers_, n_init=1, max_iter=300, tol=0.0).fit(X)
    assert adjusted_rand_score(ref.labels_, km.labels_) >= 0.999
    np.testing.assert_allclose(km.cluster_centers_, ref.cluster_centers_, rtol=1e-7, atol=1e-9)


def test_partial_fit_is_a_running_mean_and_finds_blobs():
    X, y = _blobs(n=6000, k=4, d=3, seed=1, std=0.5)
    order = np.random.default_rng(0).permutation(len(X))
    km = StreamingKMeans(4, random_state=0)
    for block in np.array_split(X[order], 30):
        km.partial_fit(block)
    assert km.n_steps_ == 30 and km.counts_.sum() == len(X)
    assert adjusted_rand_score(y, km.predict(X)) >= 0.99
    # each centre is the mean of what it absorbed when nothing changes cluster
    km2 = StreamingKMeans(2, random_state=0)
    A = np.vstack([np.zeros((5, 2)), np.full((5, 2), 10.0)])
    km2.partial_fit(A)
    km2.partial_fit(np.array([[1.0, 1.0], [11.0, 11.0]]))
    got = km2.cluster_centers_[np.argsort(km2.cluster_centers_[:, 0])]
    np.testing.assert_allclose(got, [[1 / 6, 1 / 6], [10 + 1 / 6, 10 + 1 / 6]], rtol=1e-12)


def test_float32_kept():
    X, _ = _blobs(n=500)
    km = StreamingKMeans(3, random_state=0).fit(X.astype(np.float32))
    assert km.transform(X.astype(np.float32)).dtype == np.float32
    np.testing.assert_array_equal(km.predict(X.astype(np.float32)), km.labels_)


def test_same_seed_same_result():
    X, _ = _blobs(n=3000, std=3.0)
    a = StreamingKMeans(5, init_size=300, random_state=7).fit(X)
    b = StreamingKMeans(5, init_size=300, random_state=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_bad_input():
    X, _ = _blobs(n=10)
    with pytest.raises(ValueError, match="n_clusters=20 must be <="):
        StreamingKMeans(20).fit(X)
    with pytest.raises(ValueError, match="at least n_clusters"):
        StreamingKMeans(5).partial_fit(X[:3])
    with pytest.raises(ValueError, match="NaN"):
        StreamingKMeans(2).fit(np.array([[0.0, np.nan], [1.0, 1.0], [2.0, 2.0]]))


def test_pipeline_in_a_grid_search():
    # make_pipeline(StandardScaler(), KernelJL(...), StreamingKMeans(...)) is one estimator:
    # an unsupervised grid search scores it by -inertia
    X, y = _blobs(n=1200, k=3, d=4, seed=2, std=0.7)
    pipe = make_pipeline(
        StandardScaler(), KernelJL(n_components=30, random_state=0), StreamingKMeans(3, random_state=0)
    )
    search = GridSearchCV(pipe, {"kerneljl__n_landmarks": [50, 200]}, cv=3).fit(X)
    labels = search.best_estimator_.predict(X)
    assert adjusted_rand_score(y, labels) >= 0.95
    assert search.best_estimator_.fit_predict(X).shape == (1200,)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 60), d=st.integers(1, 5), k=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_in_memory_lloyd_matches_sklearn_on_random_data(n, d, k, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d)
    k = min(k, n)
    init = X[rng.choice(n, k, replace=False)]
    ref = KMeans(k, init=init, n_init=1, max_iter=300, tol=0.0).fit(X)
    centers, inertia, _ = _lloyd_in_memory(X, init, max_iter=300, tol_abs=0.0)
    assert inertia == pytest.approx(ref.inertia_, rel=1e-8, abs=1e-10)
