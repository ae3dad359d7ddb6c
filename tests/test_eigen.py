import numpy as np
import pytest

from kernelsketch import Nystroem, SubsampleKPCA
from kernelsketch.kernels import pairwise_kernel
from kernelsketch.utils.eigen import _symmetric_operator, centered_gram, noise_floor, top_eigenpairs


@pytest.mark.parametrize("solver", ["dense", "arpack", "randomized"])
def test_top_eigenpairs_agree_with_numpy(rng, solver):
    X = rng.normal(size=(700, 3))
    K = pairwise_kernel(X, kernel="gaussian", bandwidth=1.5)
    w_ref, V_ref = np.linalg.eigh(K)
    w, V = top_eigenpairs(K, 8, solver, np.random.default_rng(0))
    np.testing.assert_allclose(w, w_ref[::-1][:8], rtol=1e-9)
    np.testing.assert_allclose(np.abs(V.T @ V_ref[:, ::-1][:, :8]), np.eye(8), atol=1e-7)


def test_symmetric_operator_reads_one_triangle_correctly(rng):
    A = rng.normal(size=(50, 50))
    A = A + A.T
    op = _symmetric_operator(A)
    v = rng.normal(size=50)
    V = rng.normal(size=(50, 3))
    np.testing.assert_allclose(op @ v, A @ v, atol=1e-12)
    np.testing.assert_allclose(op @ V, A @ V, atol=1e-12)
    # a float32 or non-contiguous matrix is passed through unchanged
    assert _symmetric_operator(A.astype(np.float32)).dtype == np.float32


def test_centered_gram_and_noise_floor(rng):
    K = pairwise_kernel(rng.normal(size=(20, 2)), kernel="gaussian", bandwidth=1.0)
    H = np.eye(20) - 1 / 20
    ref = H @ K @ H
    Kc, row_means, total = centered_gram(K.copy())
    np.testing.assert_allclose(Kc, ref, atol=1e-14)
    assert noise_floor(20, 1.0, 1e-10, 5.0) == pytest.approx(max(5e-10, 200 * np.finfo(float).eps))


def test_landmark_estimators_lanczos_branch_equals_dense(rng):
    """m = 800 landmarks, r = 20: the Lanczos branch gives the dense branch's map."""
    X = rng.normal(size=(1200, 4))
    ny = Nystroem(n_landmarks=800, n_components=20, bandwidth=2.0, random_state=0).fit(X)
    W = pairwise_kernel(ny.landmarks_, kernel=ny.kernel_)
    w, U = np.linalg.eigh(W)
    P = U[:, ::-1][:, :20] / np.sqrt(w[::-1][:20])
    np.testing.assert_allclose(ny.eigenvalues_, w[::-1][:20], rtol=1e-9)
    Z_ref = pairwise_kernel(X, ny.landmarks_, kernel=ny.kernel_) @ P
    np.testing.assert_allclose(ny.transform(X) @ ny.transform(X).T, Z_ref @ Z_ref.T, atol=1e-8)
    sk = SubsampleKPCA(n_components=20, n_landmarks=800, bandwidth=2.0, random_state=0).fit(X)
    Kc, _, _ = centered_gram(pairwise_kernel(sk.landmarks_, kernel=sk.kernel_))
    np.testing.assert_allclose(sk.eigenvalues_, np.linalg.eigvalsh(Kc)[::-1][:20], rtol=1e-9)


# -- clustered eigenvalues: LAPACK's subset driver and ARPACK may return fewer pairs than asked -----------
def test_top_eigenpairs_returns_every_pair_asked_for_when_eigenvalues_cluster():
    from kernelsketch.utils.eigen import top_eigenpairs

    n = 200
    A = np.eye(n) - np.full((n, n), 1.0 / n)  # eigenvalue 1 with multiplicity n - 1: syevr returns 0 pairs for k=1
    for solver in ("dense", "arpack", "randomized"):
        for k in (1, 3):
            w, V = top_eigenpairs(A, k, solver, np.random.default_rng(0))
            assert w.shape == (k,) and V.shape == (n, k), solver
            np.testing.assert_allclose(w, 1.0, atol=1e-8)
            np.testing.assert_allclose(A @ V, V * w, atol=1e-8)


def test_kernel_pca_keeps_the_components_asked_for_on_clustered_spectra(tmp_path):
    import kernelsketch as ks
    from kernelsketch.cli.main import main

    assert ks.KernelPCA(n_components=3).fit_transform(np.eye(40)).shape == (40, 3)
    assert ks.SubsampleKPCA(n_components=5, n_landmarks=70, random_state=0).fit_transform(np.eye(70)).shape == (70, 5)
    X = np.random.default_rng(0).normal(size=(200, 3))
    for solver in ("dense", "arpack", "randomized"):  # a tiny bandwidth: K = I, every eigenvalue of the centred K 1
        kpca = ks.KernelPCA(n_components=2, bandwidth=1e-3, eigen_solver=solver).fit(X)
        np.testing.assert_allclose(kpca.eigenvalues_, 1.0, atol=1e-8)
    np.save(tmp_path / "eye40.npy", np.eye(40))
    assert (
        main(["embed", str(tmp_path / "eye40.npy"), "--method", "kpca", "-d", "3", "-o", str(tmp_path / "Z.npy"), "-q"])
        == 0
    )
    assert np.load(tmp_path / "Z.npy").shape == (40, 3)
