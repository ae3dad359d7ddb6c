"""NystroemKernelKMeans: the K_(N,n) K_(d)^+ K_(N,n)^T embedding, its objective, concentric rings."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.metrics import rand_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch.cluster import NystroemKernelKMeans
from kernelsketch.kernels import pairwise_kernel


@parametrize_with_checks(
    [NystroemKernelKMeans(random_state=0), NystroemKernelKMeans(n_clusters=3, n_landmarks=8, n_init=2, random_state=0)]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def rings(n, seed):
    """Two concentric rings (radii 1 and 3): same mean, not linearly separable."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    r = np.where(y == 0, 1.0, 3.0) + rng.normal(0, 0.1, n)
    t = rng.uniform(0, 2 * np.pi, n)
    return np.c_[r * np.cos(t), r * np.sin(t)], y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rings_separated_where_kmeans_fails(seed):
    X, y = rings(1000, seed)
    labels = NystroemKernelKMeans(n_clusters=2, random_state=seed).fit_predict(X)
    assert rand_score(y, labels) > 0.99
    assert rand_score(y, KMeans(n_clusters=2, n_init=10, random_state=seed).fit_predict(X)) < 0.6


def test_embedding_and_objective_match_dense_kernel_kmeans():
    X, _ = rings(300, 0)
    est = NystroemKernelKMeans(n_clusters=3, n_components=15, n_landmarks=60, bandwidth=1.0, random_state=0).fit(X)
    L = X[est.nystroem_.landmark_indices_]
    # K_tilde_N = K_(N,n) K_(d)^+ K_(N,n)^T with the rank-d pseudo-inverse
    lam, U = np.linalg.eigh(pairwise_kernel(L, bandwidth=1.0))
    lam, U = lam[::-1][:15], U[:, ::-1][:, :15]
    Kb = pairwise_kernel(X, L, bandwidth=1.0)
    Kt = Kb @ (U / lam) @ U.T @ Kb.T
    E = est.transform(X)
    np.testing.assert_allclose(E @ E.T, Kt, atol=1e-10)
    # kernel k-means objective: sum_i Kt_ii - sum_c (1/|c|) sum_{i,j in c} Kt_ij
    obj = np.trace(Kt) - sum(
        Kt[np.ix_(c, c)].sum() / len(c) for c in (np.flatnonzero(est.labels_ == k) for k in range(3))
    )
    np.testing.assert_allclose(est.inertia_, obj, rtol=1e-6)
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    assert est.n_components_ == 15 and est.cluster_centers_.shape == (3, 15)


def test_defaults_seeds_dtype_sparse_memory():
    X, _ = rings(400, 1)
    est = NystroemKernelKMeans(n_clusters=2, random_state=3).fit(X)
    assert est.nystroem_.landmarks_.shape[0] == 200 and est.n_components_ == 20  # n = 200, d = 10 k
    again = NystroemKernelKMeans(n_clusters=2, random_state=3).fit(X)
    np.testing.assert_array_equal(est.labels_, again.labels_)
    np.testing.assert_array_equal(est.transform(X), again.transform(X))
    with kernelsketch.config_context(working_memory=0.01):
        np.testing.assert_allclose(
            NystroemKernelKMeans(n_clusters=2, random_state=3).fit(X).transform(X),
            est.transform(X),
            rtol=1e-12,
            atol=1e-12,
        )
    assert est.transform(X.astype(np.float32)).dtype == np.float32
    csr = NystroemKernelKMeans(n_clusters=2, random_state=3).fit(sp.csr_matrix(X))
    assert rand_score(csr.labels_, est.labels_) == 1.0


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_clusters": 50}, "n_clusters=50 must be <= n_samples=40"),
        ({"n_components": 30, "n_landmarks": 20}, "n_components=30 must be <= n_landmarks=20"),
        ({"n_landmarks": 41}, "n_landmarks=41 must be <= n_samples=40"),
        ({"n_init": 0}, "n_init"),
    ],
)
def test_bad_parameters(params, match):
    X, _ = rings(40, 0)
    with pytest.raises(ValueError, match=match):
        NystroemKernelKMeans(**params).fit(X)


def test_unfitted_and_wrong_features():
    X, _ = rings(40, 0)
    with pytest.raises(Exception, match="not fitted"):
        NystroemKernelKMeans().predict(X)
    est = NystroemKernelKMeans(n_clusters=2).fit(X)
    with pytest.raises(ValueError, match="features"):
        est.predict(np.zeros((3, 5)))
