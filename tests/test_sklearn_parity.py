"""Parity with the scikit-learn estimators a user switches from.

gamma, kernels, precomputed, inverse_transform, score.
"""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.metrics.pairwise import (
    cosine_similarity,
    laplacian_kernel,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)

import kernelsketch as ks
from kernelsketch.kernels import pairwise_kernel

KERNEL_ESTIMATORS = {
    "KernelPCA": lambda **kw: ks.KernelPCA(n_components=3, **kw),
    "Nystroem": lambda **kw: ks.Nystroem(n_components=3, **kw),
    "SubsampleKPCA": lambda **kw: ks.SubsampleKPCA(n_components=3, **kw),
    "KernelJL": lambda **kw: ks.KernelJL(n_components=3, **kw),
    "NystroemKernelKMeans": lambda **kw: ks.NystroemKernelKMeans(n_clusters=3, **kw),
    "RandomFourierFeatures": lambda **kw: ks.RandomFourierFeatures(20, **kw),
    "RFKPCA": lambda **kw: ks.RFKPCA(n_components=3, **kw),
    "RNCA": lambda **kw: ks.RNCA(n_components=3, **kw),
    "StreamingKPCA": lambda **kw: ks.StreamingKPCA(n_components=3, **kw),
}


@pytest.fixture(scope="module")
def digits():
    return load_digits().data[:300] / 16.0


@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
def test_gamma_is_scikit_learns_gamma_and_bandwidth_is_reported(name):
    X = np.random.default_rng(0).normal(size=(120, 4))
    est = KERNEL_ESTIMATORS[name](gamma=0.25, random_state=0).fit(X)
    assert est.bandwidth_ == pytest.approx(2.0)  # exp(-0.25 ||x-y||^2) = exp(-||x-y||^2 / 2^2)
    same = KERNEL_ESTIMATORS[name](bandwidth=2.0, random_state=0).fit(X)

    def out(e):
        return e.transform(X[:10])

    np.testing.assert_allclose(out(est), out(same), rtol=1e-12, atol=1e-12)
    heuristic = KERNEL_ESTIMATORS[name](random_state=0).fit(X)
    assert heuristic.bandwidth_ != pytest.approx(2.0)  # the default heuristic is not 2 here: gamma took effect
    with pytest.raises(ValueError, match="not both"):
        KERNEL_ESTIMATORS[name](gamma=0.25, bandwidth=1.0).fit(X)
    assert not hasattr(KERNEL_ESTIMATORS[name](), "bandwidth_")


@pytest.mark.parametrize(
    "kernel, ours, ref",
    [
        ("gaussian", dict(gamma=0.3), lambda X: rbf_kernel(X, gamma=0.3)),
        ("laplacian", dict(gamma=0.3), lambda X: laplacian_kernel(X, gamma=0.3)),
        (
            "polynomial",
            dict(gamma=0.2, kernel_params={"degree": 2, "coef0": 0.5}),
            lambda X: polynomial_kernel(X, degree=2, gamma=0.2, coef0=0.5),
        ),
        ("sigmoid", dict(gamma=0.1, kernel_params={"coef0": 0.3}), lambda X: sigmoid_kernel(X, gamma=0.1, coef0=0.3)),
        ("cosine", {}, cosine_similarity),
    ],
)
def test_kernels_equal_scikit_learns(kernel, ours, ref):
    X = np.random.default_rng(0).normal(size=(60, 5))
    X[3] = 0.0  # a zero row: cosine similarity 0, as in scikit-learn
    est = ks.KernelPCA(n_components=2, kernel=kernel, **ours).fit(X)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-6)):
        np.testing.assert_allclose(pairwise_kernel(X.astype(dtype), kernel=est.kernel_), ref(X), atol=tol)


def test_callable_kernel_in_landmark_estimators_and_kernel_pca(digits):
    X = digits

    def my_rbf(A, B, scale):
        return rbf_kernel(A, B, gamma=scale)

    a = ks.Nystroem(n_landmarks=80, kernel=my_rbf, kernel_params={"scale": 0.05}, random_state=0).fit(X)
    b = ks.Nystroem(n_landmarks=80, gamma=0.05, random_state=0).fit(X)
    np.testing.assert_allclose(a.transform(X[:30]), b.transform(X[:30]), atol=1e-9)
    k = ks.KernelPCA(n_components=4, kernel=lambda A, B: rbf_kernel(A, B, gamma=0.05)).fit(X)
    np.testing.assert_allclose(
        k.transform(X[:30]), ks.KernelPCA(n_components=4, gamma=0.05).fit(X).transform(X[:30]), atol=1e-9
    )
    with pytest.raises(ValueError, match="returned shape"):
        ks.KernelPCA(n_components=2, kernel=lambda A, B: A @ A.T).fit(X[:20]).transform(X[:5])
    with pytest.raises(ValueError, match="NaN"):
        ks.KernelPCA(n_components=2, kernel=lambda A, B: np.full((len(A), len(B)), np.nan)).fit(X[:20])
    with pytest.raises((TypeError, ValueError), match="kernel"):
        ks.RandomFourierFeatures(kernel=my_rbf).fit(X)


def test_precomputed_kernel_pca_equals_the_kernel_it_was_given(digits):
    X = digits
    a = ks.KernelPCA(n_components=5, kernel="precomputed").fit(rbf_kernel(X, gamma=0.05))
    b = ks.KernelPCA(n_components=5, gamma=0.05).fit(X)
    np.testing.assert_allclose(a.transform(rbf_kernel(X[:20], X, gamma=0.05)), b.transform(X[:20]), atol=1e-10)
    np.testing.assert_allclose(a.fit_transform(rbf_kernel(X, gamma=0.05)), b.fit_transform(X), atol=1e-10)
    with pytest.raises(ValueError, match="square"):
        ks.KernelPCA(kernel="precomputed").fit(X)
    with pytest.raises(ValueError, match="features"):
        a.transform(rbf_kernel(X[:20], X[:100], gamma=0.05))


@pytest.mark.parametrize(
    "kernel, kw",
    [("rbf", dict(gamma=0.05)), ("poly", dict(gamma=0.1, degree=2)), ("sigmoid", dict(gamma=0.01, coef0=0.5))],
)
def test_inverse_transform_equals_scikit_learns(digits, kernel, kw):
    X = digits
    ref = SkKernelPCA(n_components=8, kernel=kernel, fit_inverse_transform=True, alpha=0.1, **kw).fit(X)
    params = {k: v for k, v in kw.items() if k != "gamma"}
    ours = ks.KernelPCA(
        n_components=8,
        kernel=kernel,
        gamma=kw["gamma"],
        kernel_params=params or None,
        fit_inverse_transform=True,
        alpha=0.1,
    ).fit(X)
    Z_ref, Z = ref.transform(X[:40]), ours.transform(X[:40])
    np.testing.assert_allclose(np.abs(Z), np.abs(Z_ref), atol=1e-10)  # components agree up to sign
    np.testing.assert_allclose(ours.inverse_transform(Z), ref.inverse_transform(Z_ref), atol=1e-10)
    # and the pre-image is a real reconstruction: closer to X than X's mean
    err = np.linalg.norm(ours.inverse_transform(Z) - X[:40])
    assert err < np.linalg.norm(X[:40] - X.mean(axis=0))
    with pytest.raises(ValueError, match="fit_inverse_transform=True"):
        ks.KernelPCA(n_components=2).fit(X).inverse_transform(Z[:, :2])


def test_kernel_kmeans_score_is_the_embedding_silhouette_and_picks_k_in_a_grid_search():
    from sklearn.metrics import silhouette_score
    from sklearn.model_selection import GridSearchCV, KFold

    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [6, 0], [0, 6]])
    X = np.concatenate([c + rng.normal(size=(100, 2)) for c in centres])
    est = ks.NystroemKernelKMeans(n_clusters=3, random_state=0).fit(X)
    E = est.transform(X)
    # all 300 rows are scored (fewer than the 2,000-row sample): exactly scikit-learn's silhouette
    assert est.score(X) == pytest.approx(silhouette_score(E, est.predict(X)), rel=1e-12)
    assert est.inertia_ == pytest.approx(-est.kmeans_.score(E), rel=1e-10)
    # one embedding (fixed rank and seed), several k: the held-out silhouette picks the 3 true groups,
    # where the k-means objective (the former score) preferred the most centres
    search = GridSearchCV(
        ks.NystroemKernelKMeans(n_components=20, random_state=0),
        {"n_clusters": [2, 3, 4, 6]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(np.abs(scores) <= 1)
    assert search.best_params_["n_clusters"] == 3


def test_nystroem_default_landmarks_match_the_other_landmark_estimators():
    assert ks.Nystroem().n_landmarks == ks.KernelJL().n_landmarks == ks.SubsampleKPCA().n_landmarks == "auto"
    X = np.random.default_rng(0).normal(size=(150, 3))
    assert ks.Nystroem(random_state=0).fit(X).landmarks_.shape[0] == 150  # "auto": min(N, max(200, N // 100))
    stream = ks.Nystroem(random_state=0)
    for block in np.array_split(np.random.default_rng(1).normal(size=(1000, 3)), 4):
        stream.partial_fit(block)
    assert stream.landmarks_.shape[0] == 200  # a stream's "auto": the rule's floor


@pytest.mark.parametrize("name", ["KernelJL", "Nystroem", "RNCA", "RandomFourierFeatures", "NystroemKernelKMeans"])
def test_gamma_through_the_out_of_core_driver_equals_the_in_memory_fit(name, tmp_path):
    X = np.random.default_rng(0).normal(size=(400, 3))
    np.save(tmp_path / "X.npy", X)
    est = KERNEL_ESTIMATORS[name](gamma=0.5, random_state=0)
    res = ks.fit_source(est, tmp_path / "X.npy")
    ref = KERNEL_ESTIMATORS[name](gamma=0.5, random_state=0).fit(X)
    assert est.gamma == 0.5 and est.bandwidth_ == pytest.approx(ref.bandwidth_) == pytest.approx(2**0.5)
    assert res.bandwidth == pytest.approx(2**0.5)
    np.testing.assert_allclose(est.transform(X[:20]), ref.transform(X[:20]), rtol=1e-10, atol=1e-12)
