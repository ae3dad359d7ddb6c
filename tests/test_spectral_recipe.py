"""The published recipe's switches of the landmark spectral embedding, against exact computations."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import kernelsketch as ks
from kernelsketch.maps import LandmarkSpectralEmbedding


def _projector(U):
    Q, _ = np.linalg.qr(U)
    return Q @ Q.T


@pytest.mark.parametrize("trivial", ["keep", "drop"])
def test_all_rows_as_landmarks_give_dense_normalized_spectral_clusterings_eigenvectors(trivial):
    # m = N landmarks (every row) and r = N neighbours: W = Z D^-1 Z^T is the dense normalized affinity, and the
    # embedding spans its top k eigenvectors (after the trivial one for "drop")
    X, _ = make_blobs(120, centers=3, cluster_std=1.5, random_state=0)
    k, n = 3, X.shape[0]
    emb = LandmarkSpectralEmbedding(n_components=k, n_landmarks=n, n_neighbors=n, trivial=trivial, random_state=0)
    U = emb.fit_transform(X)
    Z = emb._affinity(X).toarray()
    W = Z @ np.diag(1.0 / Z.sum(axis=0)) @ Z.T
    lam, V = np.linalg.eigh(W)
    lam, V = lam[::-1], V[:, ::-1]
    top = V[:, 1 : k + 1] if trivial == "drop" else V[:, :k]
    np.testing.assert_allclose(_projector(U), _projector(top), atol=1e-8)
    np.testing.assert_allclose(emb.eigenvalues_[: k + 1], lam[: k + 1], atol=1e-10)  # S's own, either way


def test_k_means_never_sees_the_constant_trivial_column_when_it_is_dropped():
    X, _ = make_blobs(2000, centers=4, cluster_std=3.0, random_state=1)  # one connected graph
    fitted = LandmarkSpectralEmbedding(n_components=4, n_landmarks=300, random_state=0).fit(X)
    assert fitted.n_connected_components_ == 1
    kept = fitted.transform(X)
    assert kept[:, 0].std() < 1e-8 * np.abs(kept[:, 0]).mean()  # "keep": column 0 is the constant direction
    for unit_rows in (False, True):
        U = LandmarkSpectralEmbedding(
            n_components=4, n_landmarks=300, trivial="drop", unit_rows=unit_rows, random_state=0
        ).fit_transform(X)
        assert (U.std(axis=0) > 1e-3 * np.abs(U).max()).all()
        if unit_rows:
            np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, atol=1e-12)


def test_dropping_the_trivial_direction_is_exact_with_several_connected_parts():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.05, size=(100, 2)) for c in (0, 20, 40)])  # three parts, no edge between
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emb = LandmarkSpectralEmbedding(n_components=2, n_landmarks=90, n_neighbors=5, trivial="drop", random_state=0)
        U = emb.fit_transform(X)
    d = emb.landmark_degrees_
    v0 = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    P = np.sqrt(emb.n_samples_seen_) * (emb.projection_ * np.sqrt(d)[:, None])  # V_k Lambda^-1/2, up to scale
    np.testing.assert_allclose(v0 @ P, 0.0, atol=1e-8)  # orthogonal to the exact trivial direction
    assert emb.n_connected_components_ == 3
    assert len({tuple(np.round(r, 6)) for r in U}) == 3  # the two kept vectors still tell the three parts apart


@pytest.mark.distributed
def test_k_means_landmarks_are_the_same_in_memory_on_a_file_and_on_dask(tmp_path):
    pytest.importorskip("distributed")
    from kernelsketch.distributed import connect

    X, _ = make_blobs(6000, centers=5, n_features=3, random_state=2)
    np.save(tmp_path / "X.npy", X)

    def emb():
        return LandmarkSpectralEmbedding(n_components=5, n_landmarks=100, landmarks="kmeans", random_state=3)

    memory = emb().fit(X)
    on_file = ks.fit_source(emb(), tmp_path / "X.npy").estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with connect(n_workers=2) as client:
            on_dask = ks.fit_source(emb(), tmp_path / "X.npy", client=client, chunk_rows=1000).estimator
    assert memory.landmark_indices_ is None and memory.landmarks_.shape == (100, 3)
    np.testing.assert_array_equal(memory.landmarks_, on_file.landmarks_)
    np.testing.assert_array_equal(memory.landmarks_, on_dask.landmarks_)
    np.testing.assert_allclose(memory.transform(X), on_dask.transform(X), atol=1e-10)


def test_chen_and_cais_bandwidth_is_the_mean_distance_to_the_nearest_landmarks():
    X, _ = make_blobs(3000, centers=3, random_state=4)
    emb = LandmarkSpectralEmbedding(
        n_components=3, n_landmarks=200, n_neighbors=5, bandwidth="knn_mean", landmarks="kmeans", random_state=0
    ).fit(X)
    L = emb.landmarks_
    from kernelsketch.maps import sample_landmarks
    from kernelsketch.maps.landmark_spectral import KMEANS_SAMPLE_FACTOR

    n_sample = KMEANS_SAMPLE_FACTOR * 200
    assert n_sample < X.shape[0]
    # the sample the centres came from (the selector's first draw from the plan's generator), its mean
    # distance to the 5 nearest centres, times sqrt 2
    rng_state = LandmarkSpectralEmbedding(n_components=3, n_landmarks=200, landmarks="kmeans", random_state=0)
    _, _, rng = rng_state._plan(X.shape[0])
    idx = sample_landmarks(X.shape[0], n_sample, rng)
    assert idx.size == n_sample and np.array_equal(idx, np.unique(idx))
    S = X[idx]
    D = np.sqrt(((S[:, None, :] - L[None]) ** 2).sum(-1))
    sigma = np.sort(D, axis=1)[:, :5].mean()
    assert emb.bandwidth_ == pytest.approx(np.sqrt(2) * sigma, rel=1e-10)
